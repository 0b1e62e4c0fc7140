package dev.quell;

import dev.quell.internal.Problems;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The ambient deadline and {@link Criticality} of the work the current thread is doing, carried
 * through nested calls so that a call made on behalf of another gives up when the outer one does,
 * and sheds first when it is background work.
 *
 * <p>A context is an immutable value; {@link #current()} is the one in force on this thread. Make
 * one current for a block with {@link #open()} (try-with-resources) or {@link #call}:
 *
 * <pre>{@code
 * ResilienceContext inbound = ResilienceContext.current()
 *     .withDeadline(Duration.ofMillis(800))
 *     .withCriticality(Criticality.SHEDDABLE);
 * try (ResilienceContext.Scope scope = inbound.open()) {
 *   return POLICY.execute(() -> backend.fetch(id));   // bounded by 800 ms, sheds first
 * }
 * }</pre>
 *
 * <p>Policies read the context once, when a call starts: with {@code useAmbientDeadline} (on by
 * default) the call's deadline is the earlier of its own and the ambient one; with
 * {@code useAmbientCriticality} the call spends from its budget at the ambient criticality. Each
 * attempt then runs with the call's effective deadline and criticality as the current context, so
 * calls nested inside see them too. Retries and timers that Quell schedules run in the context the
 * call started in; to carry a context into your own executors, use {@link #wrap(Executor)}.
 */
public final class ResilienceContext {

  /** The header that carries the deadline across the wire: whole milliseconds remaining. NResilience uses the same name. */
  public static final String DEADLINE_HEADER = "X-Deadline-Ms";
  /** The header that carries the criticality across the wire: {@code CRITICAL_PLUS}, {@code CRITICAL}, {@code SHEDDABLE_PLUS} or {@code SHEDDABLE}. */
  public static final String CRITICALITY_HEADER = "X-Criticality";

  /** No deadline and no criticality label. */
  public static final ResilienceContext EMPTY = new ResilienceContext(0, null, null);

  /**
   * Timeouts at least this long (about 146 years) mean "no deadline": {@code ChronoUnit.FOREVER},
   * {@code Duration.ofSeconds(Long.MAX_VALUE)} and their like never overflow into a deadline in the past.
   */
  static final long NO_LIMIT_NANOS = Long.MAX_VALUE / 2;

  /** The deadline as an instant on {@link #time}; meaningful only when {@code time} is set. */
  private final long deadlineAt;
  /** The clock of the deadline, or null when there is no deadline. */
  private final @Nullable TimeSource time;
  private final @Nullable Criticality criticality;

  private ResilienceContext(long deadlineAt, @Nullable TimeSource time, @Nullable Criticality criticality) {
    this.deadlineAt = deadlineAt;
    this.time = time;
    this.criticality = criticality;
  }

  /** The context in force on this thread; {@link #EMPTY} when none was opened. */
  public static ResilienceContext current() {
    ResilienceContext c = Ambient.get().context();
    return c == null ? EMPTY : c;
  }

  /**
   * A copy whose deadline is {@code timeout} from now on the real clock, or the current deadline if
   * that is earlier. A timeout of zero or less has already passed; one of a century or more (up to
   * {@code ChronoUnit.FOREVER}) means no deadline and changes nothing.
   */
  public ResilienceContext withDeadline(Duration timeout) {
    return withDeadline(timeout, TimeSource.system());
  }

  /** As {@link #withDeadline(Duration)}, measured on {@code time}. */
  public ResilienceContext withDeadline(Duration timeout, TimeSource time) {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(time, "time");
    long nanos = Math.max(0, Durations.toNanosSaturated(timeout));
    if (nanos >= NO_LIMIT_NANOS) {
      return this;
    }
    return withDeadlineAt(time.nanoTime() + nanos, time);
  }

  /**
   * A copy whose deadline is the instant {@code deadlineAt} of {@code time}, unless the current one
   * is earlier. Instants are compared by their difference only, so any clock reading works.
   */
  ResilienceContext withDeadlineAt(long deadlineAt, TimeSource time) {
    TimeSource mine = this.time;
    if (mine != null) {
      if (mine == time) {
        if (deadlineAt - this.deadlineAt >= 0) {
          return this;
        }
      } else if (remainingNanos() <= Math.max(0, deadlineAt - time.nanoTime())) {
        return this; // a deadline on another clock: keep whichever ends first, measured now
      }
    }
    return new ResilienceContext(deadlineAt, time, criticality);
  }

  /** A copy with no deadline (for work that must outlive the request that started it). */
  public ResilienceContext withoutDeadline() {
    return new ResilienceContext(0, null, criticality);
  }

  /** A copy labelled with {@code criticality}. */
  public ResilienceContext withCriticality(Criticality criticality) {
    return new ResilienceContext(deadlineAt, time, Objects.requireNonNull(criticality, "criticality"));
  }

  /** True when this context carries a deadline. */
  public boolean hasDeadline() {
    return time != null;
  }

  /** Time left before the deadline (zero once it has passed); empty when there is none. */
  public Optional<Duration> remaining() {
    return hasDeadline() ? Optional.of(Duration.ofNanos(remainingNanos())) : Optional.empty();
  }

  /** True when there is a deadline and it has passed. */
  public boolean isExpired() {
    return hasDeadline() && remainingNanos() <= 0;
  }

  /** Nanoseconds left, clamped at 0; Long.MAX_VALUE without a deadline. */
  long remainingNanos() {
    TimeSource t = time;
    return t == null ? Long.MAX_VALUE : Math.max(0, deadlineAt - t.nanoTime());
  }

  /** Nanoseconds left at {@code clockNow} on {@code clock}, clamped at 0; Long.MAX_VALUE without a deadline. */
  long remainingOn(TimeSource clock, long clockNow) {
    TimeSource t = time;
    if (t == null) {
      return Long.MAX_VALUE;
    }
    return t == clock ? Math.max(0, deadlineAt - clockNow) : remainingNanos();
  }

  /** The criticality; {@link Criticality#CRITICAL} when unlabelled. */
  public Criticality criticality() {
    return criticality == null ? Criticality.CRITICAL : criticality;
  }

  /** True when a criticality label was set. */
  public boolean hasCriticality() {
    return criticality != null;
  }

  // ---------------------------------------------------------------- the wire

  /**
   * Writes this context as headers for an outbound request: {@value #DEADLINE_HEADER} (whole
   * milliseconds remaining, rounded down, never less than 1) when there is a deadline, and
   * {@value #CRITICALITY_HEADER} when a criticality was set. Writes nothing for what is absent.
   */
  public void writeHeaders(BiConsumer<String, String> header) {
    long remaining = remainingNanos();
    if (remaining != Long.MAX_VALUE) {
      header.accept(DEADLINE_HEADER, formatDeadline(remaining));
    }
    if (criticality != null) {
      header.accept(CRITICALITY_HEADER, criticality.wireName());
    }
  }

  /** The {@value #DEADLINE_HEADER} value for {@code remainingNanos}: whole milliseconds, floored, at least 1. */
  public static String formatDeadline(long remainingNanos) {
    return Long.toString(Math.max(1, remainingNanos / 1_000_000L));
  }

  /**
   * Reads an inbound request's headers into a context on the real clock, as {@code inbound} allows.
   * Never throws for bad input: a malformed, negative or absurd value is ignored.
   *
   * @param header looks a header up by name, returning null when absent
   */
  public static ResilienceContext fromHeaders(Function<String, @Nullable String> header, Inbound inbound) {
    return fromHeaders(header, inbound, TimeSource.system());
  }

  /** As {@link #fromHeaders(Function, Inbound)}, measuring the deadline on {@code time}. */
  @SuppressWarnings("ConstantConditions") // callers without nullness checking may still pass null
  public static ResilienceContext fromHeaders(Function<String, @Nullable String> header, Inbound inbound, TimeSource time) {
    new Problems()
        .require(header != null, "fromHeaders header", null, "must not be null: a function from a header's name to its value")
        .require(inbound != null, "fromHeaders inbound", null, "must not be null (use ResilienceContext.Inbound.DEFAULT)")
        .require(time != null, "fromHeaders time", null, "must not be null (use TimeSource.system())")
        .throwIfAny();
    ResilienceContext c = EMPTY;
    Duration deadline = parseDeadline(header.apply(DEADLINE_HEADER));
    if (deadline != null) {
      c = c.withDeadline(deadline.compareTo(inbound.maxDeadline) > 0 ? inbound.maxDeadline : deadline, time);
    }
    Criticality criticality = parseCriticality(header.apply(CRITICALITY_HEADER));
    if (criticality != null) {
      if (criticality == Criticality.CRITICAL_PLUS && !inbound.trustCriticalPlus) {
        criticality = Criticality.CRITICAL; // only a trusted caller may claim the top level
      }
      c = c.withCriticality(criticality);
    }
    return c;
  }

  /**
   * Parses a {@value #DEADLINE_HEADER} value; null when absent, malformed, not positive or absurd
   * (over a year). Only ASCII digits count: a header is protocol text, not prose, so full-width or
   * other scripts' digits are malformed.
   */
  public static @Nullable Duration parseDeadline(@Nullable String value) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > 12) {
      return null;
    }
    long millis = 0;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return null; // negative, fractional, or not an ASCII number
      }
      millis = millis * 10 + (c - '0');
    }
    if (millis <= 0 || millis > 365L * 24 * 3600 * 1000) {
      return null;
    }
    return Duration.ofMillis(millis);
  }

  /**
   * Parses a {@value #CRITICALITY_HEADER} value, ignoring ASCII case and accepting '-' for '_'; null
   * when absent or unknown. Only ASCII letters match, so no locale's case rules (a dotless ı, a long
   * ſ) can turn another word into a level.
   */
  public static @Nullable Criticality parseCriticality(@Nullable String value) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.length() > 32) {
      return null;
    }
    char[] upper = new char[v.length()];
    for (int i = 0; i < upper.length; i++) {
      char c = v.charAt(i);
      if (c >= 'a' && c <= 'z') {
        c = (char) (c - 'a' + 'A');
      } else if (c == '-') {
        c = '_';
      } else if (!(c >= 'A' && c <= 'Z' || c == '_')) {
        return null;
      }
      upper[i] = c;
    }
    String name = new String(upper);
    for (Criticality c : Criticality.values()) {
      if (c.name().equals(name)) {
        return c;
      }
    }
    return null;
  }

  /**
   * What a server accepts from its callers' headers. Immutable. Inbound deadlines are capped (a
   * caller cannot make us hold work for an hour) and {@link Criticality#CRITICAL_PLUS} from outside
   * is lowered to {@link Criticality#CRITICAL} unless the caller is trusted.
   */
  public static final class Inbound {
    /** Caps deadlines at 5 minutes and does not trust {@code CRITICAL_PLUS}. */
    public static final Inbound DEFAULT = new Inbound(Duration.ofMinutes(5), false);

    private final Duration maxDeadline;
    private final boolean trustCriticalPlus;

    private Inbound(Duration maxDeadline, boolean trustCriticalPlus) {
      this.maxDeadline = maxDeadline;
      this.trustCriticalPlus = trustCriticalPlus;
    }

    /** A copy that caps inbound deadlines at {@code max}. */
    public Inbound withMaxDeadline(Duration max) {
      new dev.quell.internal.Problems().positive("inbound maxDeadline", max).throwIfAny();
      return new Inbound(max, trustCriticalPlus);
    }

    /** A copy that accepts {@code CRITICAL_PLUS} as sent, for callers you trust (your own edge). */
    public Inbound trustingCriticalPlus() {
      return new Inbound(maxDeadline, true);
    }

    /** The cap on inbound deadlines. */
    public Duration maxDeadline() {
      return maxDeadline;
    }
  }

  // ---------------------------------------------------------------- scopes

  /** Makes this context current until the returned scope is closed, which restores the previous one. */
  public Scope open() {
    return openFrame(false, false);
  }

  /** Opens this context as an asynchronous attempt's: nested calls see it, and whether that attempt's call retries. */
  Scope openAttempt(boolean retries) {
    return openFrame(true, retries);
  }

  private Scope openFrame(boolean attempt, boolean retries) {
    Ambient ambient = Ambient.get();
    Ambient.Frame frame = ambient.push();
    frame.context = this;
    frame.attempt = attempt;
    frame.retries = retries;
    return new Scope(ambient, frame);
  }

  /** Runs {@code work} with this context current. */
  public <T> T call(Callable<T> work) throws Exception {
    try (Scope ignored = open()) {
      return work.call();
    }
  }

  /** Runs {@code work} with this context current. */
  public void run(Runnable work) {
    try (Scope ignored = open()) {
      work.run();
    }
  }

  /** Wraps {@code task} so that it runs with the context current here, now. */
  public static Runnable wrap(Runnable task) {
    ResilienceContext captured = current();
    return () -> captured.run(task);
  }

  /** Wraps {@code task} so that it runs with the context current here, now. */
  public static <T> Callable<T> wrap(Callable<T> task) {
    ResilienceContext captured = current();
    return () -> captured.call(task);
  }

  /**
   * Wraps {@code executor} so that each task runs with the context that was current where it was
   * submitted. Works for any executor, virtual-thread executors included.
   */
  public static Executor wrap(Executor executor) {
    Objects.requireNonNull(executor, "executor");
    return task -> executor.execute(wrap(task));
  }

  /** Closes a context opened with {@link #open()}, restoring the previous one. */
  public static final class Scope implements AutoCloseable {
    private final Ambient ambient;
    private final Ambient.Frame frame;
    private boolean closed;

    private Scope(Ambient ambient, Ambient.Frame frame) {
      this.ambient = ambient;
      this.frame = frame;
    }

    /** Restores the context that was current before {@link #open()}. Call it on the thread that opened the scope. */
    @Override
    public void close() {
      if (!closed) {
        closed = true;
        ambient.pop(frame);
      }
    }
  }

  @Override
  public String toString() {
    return "ResilienceContext[" + remaining().map(d -> "remaining=" + Problems.duration(d)).orElse("no deadline")
        + ", criticality=" + (criticality == null ? "unlabelled" : criticality) + "]";
  }
}
