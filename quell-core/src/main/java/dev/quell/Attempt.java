package dev.quell;

import java.time.Duration;

/**
 * What a piece of work knows about the attempt it is running: its number and how much time it has.
 * Use it to pass the remaining time to a downstream call (as a socket or RPC timeout), so that the
 * dependency gives up when we do.
 */
public final class Attempt {
  private final int number;
  private final long timeoutNanos;
  private final long remainingNanos;
  private final boolean hedge;
  private final Criticality criticality;

  Attempt(int number, long timeoutNanos, long remainingNanos, boolean hedge, Criticality criticality) {
    this.number = number;
    this.timeoutNanos = timeoutNanos;
    this.remainingNanos = remainingNanos;
    this.hedge = hedge;
    this.criticality = criticality;
  }

  /** 1 for the first attempt, 2 for the first retry, and so on. Hedges are numbered too. */
  public int number() { return number; }

  /** True on retries (and hedges): any attempt after the first. */
  public boolean isRetry() { return number > 1; }

  /** True when this attempt is a hedge running beside another. */
  public boolean isHedge() { return hedge; }

  /** How long this attempt may run: the attempt timeout, or the time left before the deadline if that is less. */
  public Duration timeout() { return toDuration(timeoutNanos); }

  /** Time left before the call's deadline when the attempt started; {@code ChronoUnit.FOREVER}'s duration when there is none. */
  public Duration remaining() { return toDuration(remainingNanos); }

  /** The criticality the call runs at. */
  public Criticality criticality() { return criticality; }

  private static Duration toDuration(long nanos) {
    return nanos == Long.MAX_VALUE ? java.time.temporal.ChronoUnit.FOREVER.getDuration() : Duration.ofNanos(nanos);
  }

  @Override
  public String toString() {
    return "Attempt[" + number + (hedge ? ", hedge" : "") + ", timeout=" + timeout() + "]";
  }
}
