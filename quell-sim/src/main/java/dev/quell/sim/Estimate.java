package dev.quell.sim;

import dev.quell.sim.internal.Text;
import java.util.Locale;

/**
 * How big a run will be, worked out before it starts from the model alone: how many calls it offers,
 * at most how many attempts they can make (every call using every attempt its policies allow, on
 * every layer), roughly how many events that takes, and roughly how much memory the results and the
 * runs in flight will hold. {@link Scenario#estimate} gives it; {@code quell simulate} refuses a run
 * over {@link #ATTEMPT_LIMIT} attempts or over the heap unless told to go ahead.
 *
 * @param runs arms × seeds
 * @param simulatedSeconds simulated seconds over all runs
 * @param calls calls the load offers over all runs (this pod's; peers are not simulated call by call)
 * @param attempts the most attempts those calls can make, over all runs
 * @param events about how many events the runs take (an upper bound, like {@code attempts})
 * @param bytes about how much memory the results and the runs in flight need at once
 */
public record Estimate(long runs, long simulatedSeconds, long calls, long attempts, long events, long bytes) {

  /**
   * The most attempts {@code quell simulate} runs without being told to go ahead: 200 million, a
   * couple of minutes of CPU. A day at 1,000 calls a second with 3 attempts a call is 259 million.
   */
  public static final long ATTEMPT_LIMIT = 200_000_000L;

  static Estimate of(long runs, long seconds, long calls, long attempts, long retainedBytes, long workingBytes) {
    return new Estimate(runs, seconds, calls, attempts, saturatedAdd(calls, saturatedMultiply(attempts, 3)),
        saturatedAdd(retainedBytes, workingBytes));
  }

  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  static long saturatedMultiply(long a, double b) {
    double r = (double) a * b;
    return r >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(r);
  }

  /** True when the attempts are over {@link #ATTEMPT_LIMIT}. */
  public boolean overAttemptLimit() {
    return attempts > ATTEMPT_LIMIT;
  }

  /** For example "2 runs of 5:00, 299,096 calls, at most 897,288 attempts, about 36 MB". */
  @Override
  public String toString() {
    return runs + (runs == 1 ? " run, " : " runs, ") + count(simulatedSeconds) + " simulated seconds, " + count(calls)
        + " calls, at most " + count(attempts) + " attempts, about " + megabytes(bytes);
  }

  /** Bytes as "36 MB" or "2.4 GB". */
  public static String megabytes(long bytes) {
    double mb = bytes / 1e6;
    return mb >= 1000 ? Text.number(Math.round(mb / 100) / 10.0) + " GB" : Math.max(1, Math.round(mb)) + " MB";
  }

  private static String count(long n) {
    return n == Long.MAX_VALUE ? "too many" : String.format(Locale.ROOT, "%,d", n);
  }
}
