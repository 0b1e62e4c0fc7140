package dev.quell;

import dev.quell.Limiter.AdaptiveConfig;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The adaptive concurrency limit behind {@link Limiter#adaptive}.
 *
 * <p>One long holds the limit, in thousandths (high half), and the attempts in flight (low half).
 * Admission is one CAS. In {@link AdaptiveConfig.Mode#LOSS} mode a release is one CAS too: the
 * in-flight count falls and the limit moves in the same step, so no update is lost and the limit
 * never leaves {@code [min, max]} under any interleaving. {@link AdaptiveConfig.Mode#GRADIENT}
 * keeps a latency average beside the limit, so it computes the new limit under a lock and then
 * publishes it with the same CAS (only that lock's holder ever changes the limit).
 *
 * <p>Each admitted attempt keeps, in its record's mark, how many were in flight when it was
 * admitted (itself included): the "is the limit being used?" test ({@code inFlight × 2 ≥ limit})
 * looks at the load the attempt actually met, as Netflix's AIMD does.
 */
final class AdaptiveLimiter extends Limiter {
  static final long MILLI = 1000;

  private final String name;
  private final AdaptiveConfig config;
  private final long minMilli;
  private final long maxMilli;
  private final AtomicLong state;
  private final Gate gate = new AdaptiveGate();

  // GRADIENT mode only, guarded by this
  private double longRtt;
  private long samples;

  AdaptiveLimiter(String name, AdaptiveConfig config) {
    this.name = name;
    this.config = config;
    this.minMilli = config.minLimit() * MILLI;
    this.maxMilli = config.maxLimit() * MILLI;
    this.state = new AtomicLong(pack(config.initialLimit() * MILLI, 0));
  }

  static long pack(long limitMilli, int inFlight) {
    return (limitMilli << 32) | (inFlight & 0xFFFF_FFFFL);
  }

  static long limitMilliOf(long s) {
    return s >>> 32;
  }

  static int inFlightOf(long s) {
    return (int) s;
  }

  /** Admits one attempt if fewer than the (whole) limit are in flight; returns the new in-flight count, or 0. */
  int tryAcquire() {
    while (true) {
      long s = state.get();
      int inFlight = inFlightOf(s);
      if (inFlight >= limitMilliOf(s) / MILLI) {
        return 0;
      }
      if (state.compareAndSet(s, s + 1)) {
        return inFlight + 1;
      }
    }
  }

  /**
   * Ends one attempt that was admitted with {@code sampleInFlight} in flight, ending as {@code how}
   * after {@code rttNanos} of work.
   */
  void releasePermit(int how, int sampleInFlight, long rttNanos) {
    if (config.mode() == AdaptiveConfig.Mode.GRADIENT && (isLoss(how) || how == Gate.SUCCEEDED)) {
      synchronized (this) {
        long limit = limitMilliOf(state.get());
        publish(isLoss(how) ? shrink(limit) : gradient(limit, sampleInFlight, rttNanos));
      }
      return;
    }
    while (true) {
      long s = state.get();
      int inFlight = inFlightOf(s);
      if (inFlight == 0) {
        return; // more releases than admissions: a core bug; never go negative
      }
      long limit = limitMilliOf(s);
      long next = limit;
      if (config.mode() == AdaptiveConfig.Mode.LOSS) {
        if (isLoss(how)) {
          next = shrink(limit);
        } else if ((how == Gate.SUCCEEDED || how == Gate.REJECTED) && (long) sampleInFlight * 2 * MILLI >= limit) {
          next = Math.min(maxMilli, limit + MILLI);
        }
      }
      if (state.compareAndSet(s, pack(next, inFlight - 1))) {
        return;
      }
    }
  }

  /** Decrements in flight and sets the limit; only called under this limiter's lock, which alone changes the limit. */
  private void publish(long limitMilli) {
    while (true) {
      long s = state.get();
      int inFlight = inFlightOf(s);
      if (state.compareAndSet(s, pack(limitMilli, Math.max(0, inFlight - 1)))) {
        return;
      }
    }
  }

  static boolean isLoss(int how) {
    return how == Gate.FAILED || how == Gate.TIMED_OUT || how == Gate.THROTTLED;
  }

  private long shrink(long limitMilli) {
    return Math.max(minMilli, (long) (limitMilli * config.backoffRatio()));
  }

  /** One latency sample in gradient mode; the caller holds the lock. */
  private long gradient(long limitMilli, int sampleInFlight, long rttNanos) {
    double rtt = Math.max(1, rttNanos);
    samples++;
    if (samples <= 10) {
      longRtt += (rtt - longRtt) / samples; // warm up with a plain mean, so the first sample is not the baseline
    } else {
      longRtt += (rtt - longRtt) / config.longWindow();
    }
    if (longRtt > 2 * rtt) {
      longRtt *= 0.95; // latency has fallen well below the long-run average: let the average catch up faster
    }
    double limit = limitMilli / (double) MILLI;
    if ((long) sampleInFlight * 2 < limit) {
      return limitMilli; // not in use: latency says nothing about the limit
    }
    double gradient = Math.max(0.5, Math.min(1.0, config.tolerance() * longRtt / rtt));
    // headroom only while latency is within tolerance: under congestion the limit must fall,
    // not settle where limit × gradient + headroom happens to equal it
    double estimate = limit * gradient + (gradient >= 1.0 ? Math.sqrt(limit) : 0);
    double next = limit * (1 - config.smoothing()) + estimate * config.smoothing();
    long nextMilli = (long) (next * MILLI);
    return Math.max(minMilli, Math.min(maxMilli, nextMilli));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int limit() {
    return (int) (limitMilliOf(state.get()) / MILLI);
  }

  /** The limit with its fraction, for tests and dashboards. */
  double exactLimit() {
    return limitMilliOf(state.get()) / (double) MILLI;
  }

  @Override
  public int inFlight() {
    return inFlightOf(state.get());
  }

  @Override
  public int available() {
    long s = state.get();
    return (int) Math.max(0, limitMilliOf(s) / MILLI - inFlightOf(s));
  }

  AdaptiveConfig config() {
    return config;
  }

  @Override
  Gate gate() {
    return gate;
  }

  @Override
  Limiter copy(String name) {
    return new AdaptiveLimiter(name, config);
  }

  @Override
  public String toString() {
    long s = state.get();
    return "Limiter.adaptive[" + name + ", " + config.mode() + ", limit=" + limitMilliOf(s) / MILLI
        + " in [" + config.minLimit() + ", " + config.maxLimit() + "], inFlight=" + inFlightOf(s) + "]";
  }

  /** The core's view. */
  private final class AdaptiveGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.LIMITED;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      int inFlight = tryAcquire();
      if (inFlight == 0) {
        attempt.retryAfterNanos = -1;
        return false;
      }
      long[] marks = attempt.marks;
      if (marks != null && index < marks.length) {
        marks[index] = inFlight;
      }
      return true;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      long[] marks = attempt.marks;
      int sample = marks != null && index < marks.length ? (int) marks[index] : inFlight();
      releasePermit(how, sample, now - attempt.startNanos);
    }

    @Override
    public String toString() {
      return AdaptiveLimiter.this.toString();
    }
  }
}
