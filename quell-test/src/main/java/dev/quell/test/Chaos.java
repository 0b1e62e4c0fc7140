package dev.quell.test;

import dev.quell.Attempt;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Seeded fault and latency injection around the work a policy runs. The wrapped work, not the
 * policy, misbehaves, so an injected failure reaches the policy exactly as a real one would: it is
 * classified by the policy's classifier, spends the retry budget, shows up in events and metrics.
 *
 * <pre>{@code
 * Chaos chaos = Chaos.seeded(7)
 *     .failing(0.2, () -> new IOException("chaos"))            // 20% of attempts fail
 *     .slowing(0.1, Duration.ofMillis(500), time);             // 10% take 500 ms longer
 *
 * Outcome<String> outcome = policy.run(chaos.wrap(() -> client.fetch(id)));
 * }</pre>
 *
 * <p><b>Off by default.</b> {@link #OFF}, a chaos without rules, and a chaos turned off with
 * {@link #enabled(boolean)} return the work they are given unchanged, the same instance, so code can
 * route its calls through a {@code Chaos} field that is {@code Chaos.OFF} in production and pay
 * nothing for it.
 *
 * <p><b>Deterministic for a seed.</b> Each attempt through a {@code Chaos} (across all the work it
 * wraps) takes the next number, and the fate of attempt number {@code n} (which fault, which delay)
 * depends only on the seed and {@code n}. The same seed and the same order of attempts give the same
 * faults, run after run; concurrent callers get the same set of fates, though which thread meets
 * which depends on scheduling.
 *
 * <p><b>Rules.</b> {@link #failing} rules are exclusive: one draw per attempt picks at most one of
 * them, so their probabilities add up (to at most 1). The same holds, separately, for
 * {@link #slowing} rules. A slowed attempt waits first, then fails (if a fault was drawn) or calls
 * the work. A failed attempt does not call the work at all: the dependency never saw it.
 * Synchronously the wait is a {@link TimeSource#sleep} on the rule's clock (on a {@link VirtualTime}
 * it advances the clock, and an attempt timeout on the same clock interrupts it); asynchronously it
 * is a timer on that clock, cancelled if the attempt is abandoned.
 *
 * <p>Each {@code failing}, {@code slowing} and {@code enabled} returns a new {@code Chaos} with the
 * same seed and its own attempt numbering and counters. Thread-safe.
 */
public final class Chaos {

  /** No chaos: {@code wrap} returns the work unchanged. */
  public static final Chaos OFF = new Chaos(false, 0, List.of(), List.of());

  private static final double EPSILON = 1e-9;

  private final boolean enabled;
  private final long seed;
  private final List<Fault> faults;
  private final List<Slowdown> slowdowns;
  private final AtomicLong attempts = new AtomicLong();
  private final AtomicLong injectedFaults = new AtomicLong();
  private final AtomicLong injectedDelays = new AtomicLong();

  private Chaos(boolean enabled, long seed, List<Fault> faults, List<Slowdown> slowdowns) {
    this.enabled = enabled;
    this.seed = seed;
    this.faults = faults;
    this.slowdowns = slowdowns;
  }

  /** An enabled chaos with no rules yet, drawing its fates from {@code seed}. */
  public static Chaos seeded(long seed) {
    return new Chaos(true, seed, List.of(), List.of());
  }

  /**
   * A copy that also fails a share of attempts with an exception made by {@code fault}.
   *
   * @param probability in [0, 1]; with the other {@code failing} rules at most 1 in total
   * @param fault makes the exception for each failed attempt (a fresh one each time is best)
   * @throws IllegalArgumentException naming the probability when it is out of range
   */
  public Chaos failing(double probability, Supplier<? extends Throwable> fault) {
    Objects.requireNonNull(fault, "fault");
    double total = checkProbability("failing", probability, faults.isEmpty() ? 0 : faults.get(faults.size() - 1).upTo);
    List<Fault> next = new ArrayList<>(faults);
    next.add(new Fault(probability, total, fault));
    return new Chaos(enabled, seed, List.copyOf(next), slowdowns);
  }

  /**
   * A copy that also delays a share of attempts by {@code delay} on {@code time} before they run.
   *
   * @param probability in [0, 1]; with the other {@code slowing} rules at most 1 in total
   * @param delay not negative
   * @param time the clock to wait on: the policy's {@link VirtualTime} in tests
   * @throws IllegalArgumentException naming the probability or delay when it is out of range
   */
  public Chaos slowing(double probability, Duration delay, TimeSource time) {
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(time, "time");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("slowing: delay must not be negative, was " + delay);
    }
    double total = checkProbability("slowing", probability,
        slowdowns.isEmpty() ? 0 : slowdowns.get(slowdowns.size() - 1).upTo);
    List<Slowdown> next = new ArrayList<>(slowdowns);
    next.add(new Slowdown(probability, total, KitSupport.saturatedNanos(delay), time));
    return new Chaos(enabled, seed, faults, List.copyOf(next));
  }

  /** A copy that is on or off; off, it wraps nothing. Use it to switch chaos from a test flag. */
  public Chaos enabled(boolean on) {
    return new Chaos(on, seed, faults, slowdowns);
  }

  /** True when {@code wrap} changes work: enabled, with at least one rule. */
  public boolean isActive() {
    return enabled && (!faults.isEmpty() || !slowdowns.isEmpty());
  }

  /** The seed fates are drawn from. */
  public long seed() {
    return seed;
  }

  private static double checkProbability(String rule, double probability, double before) {
    if (!(probability >= 0 && probability <= 1)) {
      throw new IllegalArgumentException(rule + ": probability must be in [0, 1], was " + probability);
    }
    double total = before + probability;
    if (total > 1 + EPSILON) {
      throw new IllegalArgumentException(rule + ": probability " + probability + " brings the " + rule
          + " rules to " + total + "; together they must be at most 1 (one draw picks at most one rule)");
    }
    return Math.min(1, total);
  }

  // ---------------------------------------------------------------- wrapping

  /**
   * Synchronous work under chaos: each call may sleep and may throw an injected fault instead of
   * calling {@code work}. Returns {@code work} itself when this chaos is not {@link #isActive()
   * active}.
   */
  public <T> Callable<T> wrap(Callable<T> work) {
    Objects.requireNonNull(work, "work");
    if (!isActive()) {
      return work;
    }
    return () -> {
      long n = attempts.getAndIncrement();
      Slowdown slow = slowdownFor(n);
      if (slow != null) {
        injectedDelays.incrementAndGet();
        slow.time.sleep(slow.delayNanos);
      }
      Fault fault = faultFor(n);
      if (fault != null) {
        injectedFaults.incrementAndGet();
        throw KitSupport.<Exception>sneaky(fault.make());
      }
      return work.call();
    };
  }

  /**
   * Asynchronous work under chaos, for {@code Resilience.executeAsync(Supplier)}: a faulty attempt
   * returns a failed stage, a slowed one a stage that starts {@code work} after the delay. Returns
   * {@code work} itself when this chaos is not {@link #isActive() active}.
   */
  public <T> Supplier<? extends CompletionStage<T>> wrapAsync(Supplier<? extends CompletionStage<T>> work) {
    Objects.requireNonNull(work, "work");
    if (!isActive()) {
      return work;
    }
    return () -> startAsync(ignored -> work.get(), null);
  }

  /**
   * Asynchronous work that receives its {@link Attempt}, under chaos (for {@code runAsync} and
   * {@code executeAsync(AsyncWork)}). Returns {@code work} itself when this chaos is not
   * {@link #isActive() active}.
   */
  public <T> Resilience.AsyncWork<T> wrapAsync(Resilience.AsyncWork<T> work) {
    Objects.requireNonNull(work, "work");
    if (!isActive()) {
      return work;
    }
    return attempt -> startAsync(work::start, attempt);
  }

  private <T> CompletionStage<T> startAsync(Function<@Nullable Attempt, ? extends CompletionStage<T>> work,
      @Nullable Attempt attempt) {
    long n = attempts.getAndIncrement();
    Slowdown slow = slowdownFor(n);
    Fault fault = faultFor(n);
    if (slow == null) {
      if (fault != null) {
        injectedFaults.incrementAndGet();
        return CompletableFuture.failedFuture(fault.make());
      }
      return work.apply(attempt);
    }
    injectedDelays.incrementAndGet();
    CompletableFuture<T> result = new CompletableFuture<>();
    AtomicReference<@Nullable CompletableFuture<T>> started = new AtomicReference<>();
    // the work starts later on the timer thread: carry the attempt's context (its deadline) there
    Runnable afterDelay = ResilienceContext.wrap(() -> {
      if (result.isDone()) {
        return;
      }
      if (fault != null) {
        injectedFaults.incrementAndGet();
        result.completeExceptionally(fault.make());
        return;
      }
      CompletableFuture<T> inner;
      try {
        CompletionStage<T> stage = work.apply(attempt);
        inner = stage == null
            ? CompletableFuture.failedFuture(new NullPointerException("async work returned a null stage"))
            : stage.toCompletableFuture();
      } catch (Throwable t) {
        result.completeExceptionally(t);
        return;
      }
      started.set(inner);
      inner.whenComplete((value, failure) -> {
        if (failure != null) {
          result.completeExceptionally(failure);
        } else {
          result.complete(value);
        }
      });
      if (result.isCancelled()) {
        inner.cancel(true);
      }
    });
    TimeSource.Scheduled timer = slow.time.schedule(afterDelay, slow.delayNanos);
    result.whenComplete((value, failure) -> {
      if (result.isCancelled()) {
        timer.cancel();
        CompletableFuture<T> inner = started.get();
        if (inner != null) {
          inner.cancel(true);
        }
      }
    });
    return result;
  }

  // ---------------------------------------------------------------- fates

  private @Nullable Fault faultFor(long n) {
    if (faults.isEmpty()) {
      return null;
    }
    double u = unit(seed, n, 0);
    for (Fault f : faults) {
      if (u < f.upTo) {
        return f;
      }
    }
    return null;
  }

  private @Nullable Slowdown slowdownFor(long n) {
    if (slowdowns.isEmpty()) {
      return null;
    }
    double u = unit(seed, n, 1);
    for (Slowdown s : slowdowns) {
      if (u < s.upTo) {
        return s;
      }
    }
    return null;
  }

  /** A uniform double in [0, 1) that depends only on the seed, the attempt number and the stream (SplitMix64). */
  static double unit(long seed, long n, int stream) {
    long z = seed + (2 * n + stream + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    z = z ^ (z >>> 31);
    return (z >>> 11) * 0x1.0p-53;
  }

  // ---------------------------------------------------------------- counters

  /** Attempts that went through this chaos (wrapped calls made). */
  public long attempts() {
    return attempts.get();
  }

  /** Attempts failed by an injected fault. */
  public long injectedFaults() {
    return injectedFaults.get();
  }

  /** Attempts delayed by a {@code slowing} rule. */
  public long injectedDelays() {
    return injectedDelays.get();
  }

  @Override
  public String toString() {
    if (!isActive()) {
      return enabled ? "Chaos[seed=" + seed + ", no rules]" : "Chaos.OFF";
    }
    return "Chaos[seed=" + seed + ", failing=" + faults + ", slowing=" + slowdowns + "]";
  }

  /** A fault rule; {@code upTo} is the cumulative probability up to and including it. */
  private static final class Fault {
    final double probability;
    final double upTo;
    final Supplier<? extends Throwable> fault;

    Fault(double probability, double upTo, Supplier<? extends Throwable> fault) {
      this.probability = probability;
      this.upTo = upTo;
      this.fault = fault;
    }

    Throwable make() {
      return Objects.requireNonNull(fault.get(), "Chaos.failing: the fault supplier returned null");
    }

    @Override
    public String toString() {
      return "p=" + probability;
    }
  }

  /** A latency rule; {@code upTo} is the cumulative probability up to and including it. */
  private static final class Slowdown {
    final double probability;
    final double upTo;
    final long delayNanos;
    final TimeSource time;

    Slowdown(double probability, double upTo, long delayNanos, TimeSource time) {
      this.probability = probability;
      this.upTo = upTo;
      this.delayNanos = delayNanos;
      this.time = time;
    }

    @Override
    public String toString() {
      return "p=" + probability + " +" + Duration.ofNanos(delayNanos).toMillis() + "ms";
    }
  }
}
