package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Hedging: when an attempt has gone a while without an answer, start another beside it and take
 * whichever answers first. It cuts the tail of latency — the slow answers a few requests always
 * get — at the price of some extra load, which the retry budget bounds: every hedge is funded from
 * the same budget as retries, and one the budget will not fund is not sent (the call goes on
 * waiting for the attempts it has).
 *
 * <pre>{@code
 * static final Resilience CATALOG = Resilience.HTTP
 *     .withName("catalog")
 *     .withHedge(Hedge.maxExtraLoad(0.05));          // hedge at the live p95: about 5% more attempts
 * }</pre>
 *
 * <p>Two ways to say when: a fixed delay ({@link #after(Duration)}), or the extra load you accept
 * ({@link #maxExtraLoad(double)}): the delay then follows the live latency quantile that costs at
 * most that much — at {@code 0.05}, the 95th percentile of this policy's successful attempts over
 * the last half minute (Finagle's model) — never below a floor, and the policy's attempt timeout
 * (or, with none, a hedge delay of one second) until it has seen enough attempts to know.
 *
 * <p>The rules (gRPC's, which users of hedging already know): the first acceptable answer wins and
 * the other attempts are cancelled — asynchronous attempts' futures are cancelled, synchronous
 * ones interrupted — and any value they still produce is handed to the policy's discard hook
 * (which closes {@link AutoCloseable}s: HTTP response bodies, streams). A transient failure sends
 * the next hedge at once instead of waiting out the delay. A throttled answer (the dependency
 * pushing back) stops hedging for the call. A permanent failure ends the call. Once every attempt
 * failed, the call ends: it is not retried unless {@link #withRetries(boolean)} says so.
 * {@link Criticality#SHEDDABLE} work is never hedged. {@code attempts} counts every attempt sent,
 * hedges included, and the deadline covers them all.
 *
 * <p>A synchronous call runs its first attempt on the caller's thread and hedges on an executor
 * ({@link #withExecutor}; by default a shared pool of daemon threads that grows as needed and lets
 * idle threads go after a minute).
 *
 * <p>Immutable; each {@code with…} returns a new one.
 */
@dev.quell.internal.CheckReturnValue
public final class Hedge {
  /**
   * The hedges a {@link #maxExtraLoad} policy may send in a burst beyond its share: it earns
   * {@code load} of a hedge per call and holds at most this many, so over any run its hedges are at
   * most {@code load × calls + 10}.
   */
  static final double ALLOWANCE_BURST = 10;

  private final long delayNanos;
  private final double maxExtraLoad;
  private final int maxHedges;
  private final long floorNanos;
  private final boolean retries;
  private final @Nullable Executor executor;

  private Hedge(long delayNanos, double maxExtraLoad, int maxHedges, long floorNanos, boolean retries,
      @Nullable Executor executor) {
    this.delayNanos = delayNanos;
    this.maxExtraLoad = maxExtraLoad;
    this.maxHedges = maxHedges;
    this.floorNanos = floorNanos;
    this.retries = retries;
    this.executor = executor;
  }

  /** Hedges after a fixed {@code delay} without an answer (zero: send them all at once). At most one hedge. */
  public static Hedge after(Duration delay) {
    new Problems().notNegative("hedge delay", delay).throwIfAny();
    long nanos = Durations.toNanosSaturated(delay);
    return new Hedge(nanos >= ResilienceContext.NO_LIMIT_NANOS ? Long.MAX_VALUE : nanos, Double.NaN, 1, 0, false,
        null);
  }

  /**
   * Hedges at the latency quantile that costs at most {@code load} extra attempts: at 0.05, the
   * 95th percentile of this policy's recent successful attempts. At most one hedge; a floor of 1 ms.
   *
   * <p>It is a maximum, not a target: beside the quantile, the policy keeps an allowance (as
   * Finagle's backup requests do) that earns {@code load} of a hedge for every call and holds at most
   * {@value #ALLOWANCE_BURST}; a hedge it cannot pay for is not sent. So whatever the tail does to
   * the measured quantile, a policy's hedges stay at most {@code load × calls + 10}.
   *
   * @param load in (0, 1): the share of extra attempts you accept
   */
  public static Hedge maxExtraLoad(double load) {
    new Problems().require(Double.isFinite(load) && load > 0 && load < 1, "hedge maxExtraLoad", load,
        "must be in (0, 1): the share of extra attempts you accept, 0.05 for 5%").throwIfAny();
    return new Hedge(-1, load, 1, 1_000_000L, false, null);
  }

  /** A copy that sends at most {@code hedges} hedges beside the first attempt (1 to 10; gRPC caps at 4 beside it). */
  public Hedge withMaxHedges(int hedges) {
    new Problems().require(hedges >= 1 && hedges <= 10, "hedge maxHedges", hedges, "must be between 1 and 10")
        .throwIfAny();
    return new Hedge(delayNanos, maxExtraLoad, hedges, floorNanos, retries, executor);
  }

  /** A copy whose measured delay ({@link #maxExtraLoad}) is never below {@code floor}. */
  public Hedge withFloor(Duration floor) {
    new Problems().notNegative("hedge floor", floor).throwIfAny();
    return new Hedge(delayNanos, maxExtraLoad, maxHedges, Math.min(Durations.toNanosSaturated(floor),
        ResilienceContext.NO_LIMIT_NANOS), retries, executor);
  }

  /**
   * A copy that, once every attempt failed transiently, goes on retrying (within the policy's
   * attempts, deadline and budget) instead of ending the call. Off by default, as in gRPC.
   */
  public Hedge withRetries(boolean retries) {
    return new Hedge(delayNanos, maxExtraLoad, maxHedges, floorNanos, retries, executor);
  }

  /** A copy whose synchronous hedges run on {@code executor} (asynchronous work starts where it is started). */
  public Hedge withExecutor(Executor executor) {
    Objects.requireNonNull(executor, "executor");
    return new Hedge(delayNanos, maxExtraLoad, maxHedges, floorNanos, retries, executor);
  }

  /** The fixed delay, when configured with {@link #after}. */
  public java.util.Optional<Duration> delay() {
    return delayNanos < 0 ? java.util.Optional.empty() : java.util.Optional.of(Durations.ofNanosOrForever(delayNanos));
  }

  /** The extra load accepted, when configured with {@link #maxExtraLoad}. */
  public OptionalDouble maxExtraLoad() {
    return Double.isNaN(maxExtraLoad) ? OptionalDouble.empty() : OptionalDouble.of(maxExtraLoad);
  }

  /** The most hedges sent beside the first attempt. */
  public int maxHedges() {
    return maxHedges;
  }

  /** The measured delay's floor. */
  public Duration floor() {
    return Duration.ofNanos(floorNanos);
  }

  /** Whether the call retries after every attempt failed. */
  public boolean retries() {
    return retries;
  }

  // ---------------------------------------------------------------- for the core

  /** The fixed delay in nanoseconds, or -1 when measured. */
  long fixedDelayNanos() {
    return delayNanos;
  }

  long floorNanos() {
    return floorNanos;
  }

  /** The quantile the measured delay reads: 1 − maxExtraLoad. */
  double quantile() {
    return 1.0 - maxExtraLoad;
  }

  Executor executor() {
    Executor e = executor;
    return e != null ? e : SharedPool.EXECUTOR;
  }

  /** The default executor for synchronous hedges: daemon threads, created on demand, kept a minute. */
  private static final class SharedPool {
    static final ExecutorService EXECUTOR = create();

    private static ExecutorService create() {
      AtomicInteger n = new AtomicInteger();
      return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "quell-hedge-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
    }
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Hedge)) {
      return false;
    }
    Hedge h = (Hedge) o;
    return h.delayNanos == delayNanos && Double.compare(h.maxExtraLoad, maxExtraLoad) == 0 && h.maxHedges == maxHedges
        && h.floorNanos == floorNanos && h.retries == retries && Objects.equals(h.executor, executor);
  }

  @Override
  public int hashCode() {
    return Objects.hash(delayNanos, maxExtraLoad, maxHedges, floorNanos, retries, executor);
  }

  @Override
  public String toString() {
    String when = delayNanos >= 0 ? "after " + Problems.duration(Durations.ofNanosOrForever(delayNanos))
        : "at p" + Math.round(quantile() * 1000) / 10.0 + " (max extra load " + maxExtraLoad + ", floor "
            + Problems.duration(Duration.ofNanos(floorNanos)) + ")";
    return "Hedge[" + when + ", up to " + maxHedges + (maxHedges == 1 ? " hedge" : " hedges")
        + (retries ? ", then retries" : "") + "]";
  }
}
