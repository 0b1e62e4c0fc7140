package dev.quell;

/**
 * One check the core makes before every attempt (SPEC §5). A call asks its gates in one fixed
 * order — draining, deadline, circuit breaker, rate limiter, concurrency limit, retry budget — and
 * the first that refuses decides the call's stop reason. The first two are plain checks inside
 * {@link Call}; the others are live objects shared by many calls and threads, and implement this.
 *
 * <p>The contract, which the core keeps by construction:
 * <ul>
 *   <li>{@link #tryAdmit} is one atomic step: a permit, token or probe slot is taken if and only if
 *       it returns true. It never blocks.
 *   <li>Every admission is matched by exactly one {@link #release}, on every exit path: the attempt
 *       returned, failed, timed out, was cancelled, its work threw, a listener threw, or it never
 *       started because a later gate refused or the call ended first ({@link #NOT_STARTED}).
 *   <li>A gate that refuses is not released. Gates after it are not asked.
 *   <li>Neither method throws, allocates on the success path, or calls user code.
 * </ul>
 *
 * <p>Gates that can make an attempt wait for a permit ({@link #maxWaitNanos()} &gt; 0) either
 * admit with {@link AttemptRecord#waitNanos} set (the permit is reserved; the attempt starts that
 * much later — a rate limiter), or queue the attempt ({@link #await}) until a releasing attempt
 * hands its permit over (a concurrency limit).
 */
abstract class Gate {
  // How an admitted attempt ended, as far as a gate cares. ----------------------------------------

  /** The classifier said {@code OK}. */
  static final int SUCCEEDED = 0;
  /** The classifier said {@code TRANSIENT}: the dependency failed. */
  static final int FAILED = 1;
  /** The attempt timeout ended it: a transient failure, and a sign of overload. */
  static final int TIMED_OUT = 2;
  /** The classifier said {@code THROTTLED}: the dependency asked us to slow down. */
  static final int THROTTLED = 3;
  /** The classifier said {@code PERMANENT}: the dependency answered; retrying cannot help. */
  static final int REJECTED = 4;
  /**
   * The caller cancelled, the attempt lost a hedge race, or the call ended while it ran: it says
   * nothing about the dependency's health.
   */
  static final int CANCELLED = 5;
  /** Admitted, but the attempt never started: a later gate refused it, or the call ended first. */
  static final int NOT_STARTED = 6;

  /** The stop reason a refusal by this gate gives the call. */
  abstract StopReason refusal();

  /**
   * Admits one attempt at {@code now}, or refuses it. On refusal, sets
   * {@link AttemptRecord#retryAfterNanos} to when this gate expects to admit again ({@code -1} when
   * it cannot tell). A gate may keep one long of its own in the record ({@link AttemptRecord#marks}
   * at {@code index}) for its {@link #release}.
   */
  abstract boolean tryAdmit(AttemptRecord attempt, int index, long now);

  /**
   * The admitted attempt ended as {@code how} (one of the constants above) at {@code now}.
   * {@link AttemptRecord#startNanos} is when it started ({@link AttemptRecord#admittedNanos} for
   * {@link #NOT_STARTED}).
   */
  abstract void release(AttemptRecord attempt, int index, int how, long now);

  /**
   * Whether {@link #release} needs the time the attempt ended, as distinct from when it started
   * (a latency, a slow-call threshold). When no gate does and nothing measures latency, the
   * synchronous fast path releases a successful attempt at its start time and saves a clock read.
   */
  boolean needsEndTime() {
    return true;
  }

  /**
   * Whether this gate decides alike when {@code now} is the watchdog's last sighting of the real
   * clock ({@link Watchdog#sighting()}: never later than a reading, up to about 100 ms earlier)
   * instead of a reading — for admitting a first attempt and releasing it as {@link #SUCCEEDED}.
   * When every gate of a policy says so, the synchronous fast path reads no clock on success, and
   * marks the attempt ({@link AttemptRecord#coarseNow}): a gate that says so and needs exact time
   * for a rarer decision (an open breaker's break, a probe) reads its own clock for that attempt.
   * Every other caller hands the gates an exact reading, which they use as it is.
   */
  boolean coarseTime() {
    return false;
  }

  /** The longest an attempt refused by this gate may wait for a permit; 0 when it never waits. */
  long maxWaitNanos() {
    return 0;
  }

  /**
   * Queues a refused attempt for the next free permit (only gates that hand permits over). When a
   * permit is handed to it, {@code attempt.granted} becomes true and {@code onGranted} runs on the
   * releasing thread, outside this gate's locks. Returns false if the attempt cannot queue.
   */
  boolean await(AttemptRecord attempt, int index, Runnable onGranted) {
    return false;
  }

  /**
   * Gives up a queued wait. True if the attempt was still waiting (it holds nothing); false if a
   * permit was handed over first — the attempt then holds it and must release it.
   */
  boolean cancelAwait(AttemptRecord attempt, int index) {
    return false;
  }
}
