package dev.quell;

import dev.quell.internal.Problems;
import dev.quell.internal.jfr.QuellJfr;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * A circuit breaker: stops sending attempts to a dependency that is failing, lets a few probes
 * through after a break to see whether it has recovered, and lets traffic back gradually when it
 * has. A live, thread-safe object: build one per dependency, keep it in a field, and share it among
 * every policy that calls that dependency.
 *
 * <pre>{@code
 * CircuitBreaker inventory = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT
 *     .withFailureRate(0.5)
 *     .withMinimumCalls(20)
 *     .withWindow(Duration.ofSeconds(30)));
 * }</pre>
 *
 * <p><b>When it opens.</b> It counts attempts — what the dependency actually saw — over one sliding
 * time window ({@link Config#window()}, kept as ten buckets of a tenth each). It opens when an attempt
 * fails and
 * <ul>
 *   <li>at least {@link Config#minimumCalls()} attempts ended in the window and at least
 *       {@link Config#failureRate()} of them failed; or
 *   <li>{@link Config#consecutiveFailures()} attempts failed in a row (off by default); or
 *   <li>slow-call detection is on ({@link Config#withSlowCalls}) and at least
 *       {@link Config#slowCallRate()} of the attempts in the window (at least the minimum) took
 *       longer than {@link Config#slowCallDuration()}.
 * </ul>
 * Transient failures, attempt timeouts and throttled answers are failures. Successes and permanent
 * failures (the dependency answered; retrying cannot help) are successes. Cancelled attempts and
 * attempts that never started count for nothing, and so do refusals by this breaker or by any other
 * gate. The breaker decides only when a failure or a slow attempt is recorded: a success never
 * opens it.
 *
 * <p><b>Open</b>: every attempt is refused with {@link StopReason#DEPENDENCY_UNAVAILABLE} and a
 * Retry-After of the time left until the next probe. The break lasts {@link Config#breakDuration()}
 * (5 s by default) the first time, and doubles each time a probe fails, up to
 * {@link Config#maxBreakDuration()} (5 min); each break is drawn with equal jitter (between half
 * and all of it) from the {@link TimeSource}'s random source, so a fleet of clients does not probe
 * in step.
 *
 * <p><b>Half-open</b>: the first attempt after the break becomes a probe. At most
 * {@link Config#probes()} probes hold a permit at once; everything else is refused. A probe that
 * fails (or is slow, when slow-call detection is on) opens the breaker again with a longer break;
 * {@link Config#probeSuccesses()} probes that succeed close it. Every way an attempt can end —
 * success, failure, timeout, cancellation, never started — gives its permit back. A probe that
 * hangs cannot wedge it: once every permit has been out for a whole break without an answer, the
 * probes are written off ({@link Metrics#expiredProbes()}), the break grows, and the next attempt
 * becomes a new probe. A written-off probe's late answer is ignored.
 *
 * <p><b>Closing</b>: the window starts empty, and traffic ramps back over {@link Config#ramp()}
 * (10 s by default): a tenth of attempts are admitted at first, growing in a straight line to all of
 * them; the rest are refused with {@code DEPENDENCY_UNAVAILABLE}. If it opens again during the
 * ramp, the break keeps growing; once it has stayed closed through the ramp, the next break starts
 * again from {@link Config#breakDuration()}.
 *
 * <p><b>By hand</b>: {@link #isolate()} holds it open until {@link #reset()}, which closes it with
 * an empty window and no ramp.
 *
 * <p>{@link #state()}, {@link #retryAfter()} and {@link #metrics()} are for dashboards and health
 * checks. The open breaker becomes half-open when the first attempt after the break arrives: until
 * then {@link #state()} says {@link State#OPEN} and {@link #retryAfter()} says zero.
 *
 * <p>All methods are thread-safe; each transition happens exactly once however many threads race
 * to make it. An admitted attempt that succeeds while the breaker is closed costs one volatile read
 * on admission and, when it ends, one atomic add to the current bucket (plus, once per bucket width,
 * a new bucket object); no lock is taken.
 */
public final class CircuitBreaker {

  /** Where a breaker is. */
  public enum State {
    /** Attempts pass (all of them, or a growing share while ramping back after an outage). */
    CLOSED,
    /** Every attempt is refused until the break is over. */
    OPEN,
    /** A bounded number of probes pass to test the dependency; everything else is refused. */
    HALF_OPEN,
    /** Held open by {@link #isolate()} until {@link #reset()}. */
    ISOLATED
  }

  /** The window is kept as this many buckets, each a tenth of it. */
  static final int BUCKETS = 10;
  /**
   * The narrowest bucket (a tenth of the window) in which a success may be placed by the watchdog's
   * last clock sighting rather than a reading: a sighting is at most about 100 ms old, a tenth of
   * this, so a success lands at worst in the bucket before its own, still inside the window.
   */
  static final long COARSE_BUCKET_NANOS = 1_000_000_000L;
  /** The share of attempts admitted the moment the breaker closes after an outage. */
  static final double RAMP_START = 0.1;

  private static final long RAMP_UNIT = 1_000_000L;
  // A half-open episode's permit word: [µs from the episode's start to the latest grant | permits held],
  // or SEALED once the episode is over (only the thread that sealed it may install the next phase).
  private static final int PERMIT_BITS = 16;
  private static final long PERMIT_MASK = (1L << PERMIT_BITS) - 1;
  private static final long MAX_OFFSET_MICROS = (1L << (63 - PERMIT_BITS)) - 1;
  private static final long SEALED = -1L;
  private static final int MAX_STEP = 62;
  private static final int SPINS = 1_000;

  private static final VarHandle PHASE;

  static {
    try {
      PHASE = MethodHandles.lookup().findVarHandle(CircuitBreaker.class, "phase", Phase.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String name;
  private final Config config;
  private final TimeSource time;
  private final Gate gate = new BreakerGate();

  private final double failureRate;
  private final int minimumCalls;
  private final long bucketNanos;
  private final int consecutiveLimit;
  private final long slowNanos; // Long.MAX_VALUE: slow-call detection off
  /** Whether a steady closed breaker may admit and count a success by a coarse clock (see {@link Gate#coarseTime}). */
  private final boolean coarse;
  private final double slowRate;
  private final int probes;
  private final int probeSuccesses;
  private final long baseBreakNanos;
  private final long maxBreakNanos;
  private final long rampNanos;

  private volatile Phase phase;
  private final AtomicLongArray transitions = new AtomicLongArray(State.values().length);
  private final LongAdder refusals = new LongAdder();
  private final AtomicLong expiredProbes = new AtomicLong();

  private CircuitBreaker(String name, Config config, TimeSource time) {
    this.name = name;
    this.config = config;
    this.time = time;
    this.failureRate = config.failureRate;
    this.minimumCalls = config.minimumCalls;
    this.bucketNanos = Math.max(1, nanos(config.window) / BUCKETS);
    this.consecutiveLimit = config.consecutiveFailures;
    this.slowNanos = config.slowCallDuration == null ? Long.MAX_VALUE : nanos(config.slowCallDuration);
    this.slowRate = config.slowCallRate;
    this.probes = config.probes;
    this.probeSuccesses = config.probeSuccesses;
    this.baseBreakNanos = nanos(config.breakDuration);
    this.maxBreakNanos = nanos(config.maxBreakDuration);
    this.rampNanos = nanos(config.ramp);
    this.coarse = time == SystemTime.INSTANCE && slowNanos == Long.MAX_VALUE && bucketNanos >= COARSE_BUCKET_NANOS;
    long now = time.nanoTime();
    this.phase = new Closed(1, now, 0, false, new Window(now, bucketNanos));
  }

  /** A breaker with {@link Config#DEFAULT} on the real clock. */
  public static CircuitBreaker of(String name) {
    return of(name, Config.DEFAULT, TimeSource.system());
  }

  /** A breaker with {@code config} on the real clock. */
  public static CircuitBreaker of(String name, Config config) {
    return of(name, config, TimeSource.system());
  }

  /**
   * A breaker with {@code config} whose breaks, windows and ramp run on {@code timeSource}, which
   * also draws the jitter. A policy using it must run on the same time source.
   *
   * @param name what metrics, events and logs call it; not blank
   * @throws ResilienceConfigurationException naming every argument that is missing or blank
   */
  @SuppressWarnings("ConstantConditions") // callers without nullness checking may still pass null
  public static CircuitBreaker of(String name, Config config, TimeSource timeSource) {
    new Problems()
        .require(name != null && !name.isBlank(), "breaker name", name == null ? null : '"' + name + '"',
            "must not be blank")
        .require(config != null, "breaker config", null, "must not be null (use CircuitBreaker.Config.DEFAULT)")
        .require(timeSource != null, "breaker timeSource", null, "must not be null (use TimeSource.system())")
        .throwIfAny();
    new Config.Settings(config).validate(true); // how the settings fit together, whatever order they were given in
    return new CircuitBreaker(name, config, timeSource);
  }

  /** The name given when it was built. */
  public String name() {
    return name;
  }

  /** The configuration it was built with. */
  public Config config() {
    return config;
  }

  /** Where it is now. */
  public State state() {
    return phase.state;
  }

  /**
   * How long until it would admit an attempt: zero when closed (while ramping, the next attempt may
   * still be refused), the rest of the break when open, zero or the time until the probes out are
   * written off when half-open, and empty when isolated (only {@link #reset()} ends that).
   */
  public Optional<Duration> retryAfter() {
    long now = time.nanoTime();
    Phase ph = phase;
    switch (ph.state) {
      case CLOSED:
        return Optional.of(Duration.ZERO);
      case OPEN: {
        Open o = (Open) ph;
        return Optional.of(Duration.ofNanos(o.breakNanos - Math.min(o.breakNanos, elapsed(o.since, now))));
      }
      case HALF_OPEN: {
        HalfOpen h = (HalfOpen) ph;
        long w = h.permits.get();
        if (w == SEALED || (w & PERMIT_MASK) < probes) {
          return Optional.of(Duration.ZERO);
        }
        return Optional.of(Duration.ofNanos(h.breakNanos - Math.min(h.breakNanos, sinceLatestGrant(h, w, now))));
      }
      default:
        return Optional.empty();
    }
  }

  /**
   * Holds the breaker open, whatever its window says, until {@link #reset()}: every attempt is
   * refused with {@link StopReason#DEPENDENCY_UNAVAILABLE} and no Retry-After. Probes out are written
   * off. Does nothing if it is already isolated.
   */
  public void isolate() {
    for (int spins = 0; ; spins++) {
      Phase ph = phase;
      if (ph.state == State.ISOLATED) {
        return;
      }
      if (leave(ph, new Isolated(ph.id + 1, time.nanoTime(), ph.window()))) {
        transitions.incrementAndGet(State.ISOLATED.ordinal());
        QuellJfr.breakerMoved(name, State.ISOLATED, "isolate");
        return;
      }
      backOff(spins);
    }
  }

  /**
   * Closes the breaker at once, from any state, with an empty window, no ramp, and the break back
   * at {@link Config#breakDuration()}. Attempts admitted before the reset count for nothing when
   * they end. Counted as a transition unless it was already closed.
   */
  public void reset() {
    for (int spins = 0; ; spins++) {
      Phase ph = phase;
      long now = time.nanoTime();
      if (leave(ph, new Closed(ph.id + 1, now, 0, false, new Window(now, bucketNanos)))) {
        if (ph.state != State.CLOSED) {
          transitions.incrementAndGet(State.CLOSED.ordinal());
          QuellJfr.breakerMoved(name, State.CLOSED, "reset");
        }
        return;
      }
      backOff(spins);
    }
  }

  /**
   * A snapshot for dashboards: state, what the window holds now, and counters since the breaker was
   * built. While open or half-open, the window figures are those of the window that opened it,
   * ageing out as time passes. Allocates one small object; no lock.
   */
  public Metrics metrics() {
    long now = time.nanoTime();
    Phase ph = phase;
    Window w = ph.window();
    long[] counts = w.counts(now);
    int consecutive = ph instanceof Closed c ? c.consecutive.get() : 0;
    long[] byState = new long[State.values().length];
    for (int i = 0; i < byState.length; i++) {
      byState[i] = transitions.get(i);
    }
    return new Metrics(ph.state, counts[0], counts[1], counts[2], consecutive, byState, refusals.sum(),
        expiredProbes.get());
  }

  /** The gate the core asks before every attempt. */
  Gate gate() {
    return gate;
  }

  /** The clock its breaks, window and ramp run on: the {@code now} given to its gate must be read from it. */
  TimeSource timeSource() {
    return time;
  }

  /** For tests: the current phase's id (every transition, reset included, makes a new one). */
  long phaseId() {
    return phase.id;
  }

  /** For tests: the probe permits held in the current half-open episode; 0 in any other state. */
  int probePermitsHeld() {
    Phase ph = phase;
    if (ph instanceof HalfOpen h) {
      long w = h.permits.get();
      return w == SEALED ? 0 : (int) (w & PERMIT_MASK);
    }
    return 0;
  }

  @Override
  public String toString() {
    return "CircuitBreaker[" + name + ", " + phase.state + "]";
  }

  // ------------------------------------------------------------------------------------- the gate

  private final class BreakerGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.DEPENDENCY_UNAVAILABLE;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      Phase ph = phase;
      if (ph.state == State.CLOSED && !((Closed) ph).ramping) {
        mark(attempt, index, ph.id << 1); // closed and steady: the time plays no part
        return true;
      }
      // a ramp, a break or a probe is judged on an exact reading even when handed a coarse one
      return admitUnlessClosed(attempt, index, attempt.coarseNow ? time.nanoTime() : now, ph);
    }

    @Override
    boolean coarseTime() {
      return coarse;
    }

    @Override
    boolean needsEndTime() {
      // only a slow-call threshold needs the attempt's length; without one, a success counts in
      // the window at its start (at most an attempt timeout early, against a window of seconds),
      // and a successful probe starts the ramp as early
      return slowNanos != Long.MAX_VALUE;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      long[] marks = attempt.marks;
      if (marks == null || index < 0 || index >= marks.length) {
        return;
      }
      long mark = marks[index];
      if (mark == 0) {
        return; // not admitted by this breaker, or already released: never give a permit back twice
      }
      marks[index] = 0;
      Phase ph = phase;
      if (ph.id != mark >>> 1) {
        return; // admitted in an earlier phase (or a written-off probe): it says nothing about now
      }
      if ((mark & 1) == 0) {
        closedOutcome((Closed) ph, attempt, how, now);
      } else {
        probeOutcome((HalfOpen) ph, attempt, how, attempt.coarseNow ? time.nanoTime() : now); // starts a phase: exact
      }
    }
  }

  private static void mark(AttemptRecord attempt, int index, long mark) {
    long[] marks = attempt.marks;
    if (marks != null && index >= 0 && index < marks.length) {
      marks[index] = mark;
    }
  }

  private boolean refuse(AttemptRecord attempt, long retryAfterNanos) {
    attempt.retryAfterNanos = retryAfterNanos;
    refusals.increment();
    return false;
  }

  private boolean admitUnlessClosed(AttemptRecord attempt, int index, long now, Phase ph) {
    for (int spins = 0; ; ph = phase) {
      switch (ph.state) {
        case CLOSED: {
          Closed c = (Closed) ph;
          if (!c.ramping || rampAdmits(c, now)) {
            mark(attempt, index, c.id << 1);
            return true;
          }
          return refuse(attempt, -1);
        }
        case OPEN: {
          Open o = (Open) ph;
          long elapsed = elapsed(o.since, now);
          if (elapsed < o.breakNanos) {
            return refuse(attempt, o.breakNanos - elapsed);
          }
          HalfOpen h = new HalfOpen(o.id + 1, now, o.step, o.breakNanos, o.window);
          if (PHASE.compareAndSet(this, o, h)) {
            transitioned(State.HALF_OPEN, attempt);
            mark(attempt, index, (h.id << 1) | 1);
            return true;
          }
          break;
        }
        case HALF_OPEN: {
          HalfOpen h = (HalfOpen) ph;
          long w = h.permits.get();
          if (w == SEALED) {
            // another thread is ending this episode and is about to install the next phase
            if (phase == h && ++spins > SPINS) {
              return refuse(attempt, 0);
            }
            Thread.onSpinWait();
            break;
          }
          long held = w & PERMIT_MASK;
          if (held < probes) {
            // the latest grant never moves back, even for a thread whose clock reading is a little stale
            long latest = Math.max(offsetMicros(h, now), w >>> PERMIT_BITS);
            if (h.permits.compareAndSet(w, (latest << PERMIT_BITS) | (held + 1))) {
              mark(attempt, index, (h.id << 1) | 1);
              return true;
            }
            break;
          }
          long out = sinceLatestGrant(h, w, now);
          if (out < h.breakNanos) {
            return refuse(attempt, h.breakNanos - out);
          }
          // Every permit has been out a whole break without an answer: write the probes off, make
          // the break longer, and let this attempt be the next probe.
          int step = Math.min(h.step + 1, MAX_STEP);
          HalfOpen next = new HalfOpen(h.id + 1, now, step, jitteredBreak(step), h.window);
          if (h.permits.compareAndSet(w, SEALED)) {
            phase = next; // the sealer alone may leave a sealed episode
            expiredProbes.addAndGet(held);
            mark(attempt, index, (next.id << 1) | 1);
            return true;
          }
          break;
        }
        default:
          return refuse(attempt, -1);
      }
    }
  }

  /** Whether an attempt passes the ramp after closing; clears the ramp flag once it is over. */
  private boolean rampAdmits(Closed c, long now) {
    long elapsed = elapsed(c.since, now);
    if (elapsed >= rampNanos) {
      c.ramping = false;
      return true;
    }
    double share = RAMP_START + (1 - RAMP_START) * ((double) elapsed / rampNanos);
    long add = Math.max(1, (long) (share * RAMP_UNIT));
    while (true) {
      long credit = c.rampCredit.get();
      long next = credit + add;
      if (next >= RAMP_UNIT) {
        if (c.rampCredit.compareAndSet(credit, next - RAMP_UNIT)) {
          return true;
        }
      } else if (c.rampCredit.compareAndSet(credit, next)) {
        return false;
      }
    }
  }

  private void closedOutcome(Closed c, AttemptRecord attempt, int how, long now) {
    switch (how) {
      case Gate.SUCCEEDED:
      case Gate.REJECTED: {
        boolean slow = isSlow(attempt, now);
        c.window.record(now, false, slow);
        if (consecutiveLimit > 0 && c.consecutive.get() != 0) {
          c.consecutive.set(0);
        }
        if (slow && windowTrips(c, now)) {
          trip(c, attempt, now);
        }
        return;
      }
      case Gate.FAILED:
      case Gate.TIMED_OUT:
      case Gate.THROTTLED: {
        c.window.record(now, true, isSlow(attempt, now));
        boolean inARow = consecutiveLimit > 0 && c.consecutive.incrementAndGet() >= consecutiveLimit;
        if (inARow || windowTrips(c, now)) {
          trip(c, attempt, now);
        }
        return;
      }
      default:
        // cancelled, never started: nothing learned about the dependency
    }
  }

  private void probeOutcome(HalfOpen h, AttemptRecord attempt, int how, long now) {
    boolean answered = how == Gate.SUCCEEDED || how == Gate.REJECTED;
    boolean failed = how == Gate.FAILED || how == Gate.TIMED_OUT || how == Gate.THROTTLED;
    if (answered && isSlow(attempt, now)) {
      answered = false; // a slow probe is a failed probe
      failed = true;
    }
    if (answered) {
      if (h.successes.incrementAndGet() < probeSuccesses) {
        returnPermit(h);
        return;
      }
      Closed closed = new Closed(h.id + 1, now, Math.min(h.step + 1, MAX_STEP), rampNanos > 0,
          new Window(now, bucketNanos));
      if (seal(h)) {
        phase = closed;
        transitioned(State.CLOSED, attempt);
      }
    } else if (failed) {
      int step = Math.min(h.step + 1, MAX_STEP);
      Open open = new Open(h.id + 1, now, step, jitteredBreak(step), h.window);
      if (seal(h)) {
        phase = open;
        transitioned(State.OPEN, attempt);
      }
    } else {
      returnPermit(h); // cancelled or never started: the permit comes back, nothing is learned
    }
  }

  private void trip(Closed c, AttemptRecord attempt, long now) {
    // still ramping back from an outage: the outage goes on, and so does the growth of the break
    int step = c.step > 0 && elapsed(c.since, now) < rampNanos ? c.step : 0;
    if (PHASE.compareAndSet(this, c, new Open(c.id + 1, now, step, jitteredBreak(step), c.window))) {
      transitioned(State.OPEN, attempt);
    }
  }

  private boolean windowTrips(Closed c, long now) {
    Window w = c.window;
    long lowest = w.epoch(now) - (BUCKETS - 1);
    long calls = 0;
    long failures = 0;
    long slow = 0;
    for (int i = 0; i < BUCKETS; i++) {
      Bucket b = w.slots.get(i);
      if (b != null && b.epoch >= lowest) {
        failures += (long) Bucket.FAILURES.getVolatile(b);
        slow += (long) Bucket.SLOW.getVolatile(b);
        calls += (long) Bucket.CALLS.getVolatile(b); // read last: a failure seen has its call counted
      }
    }
    if (calls < minimumCalls || calls == 0) {
      return false;
    }
    return (double) failures / calls >= failureRate
        || (slowNanos != Long.MAX_VALUE && (double) slow / calls >= slowRate);
  }

  private boolean isSlow(AttemptRecord attempt, long now) {
    return slowNanos != Long.MAX_VALUE && now - attempt.startNanos > slowNanos;
  }

  private void returnPermit(HalfOpen h) {
    while (true) {
      long w = h.permits.get();
      if (w == SEALED || (w & PERMIT_MASK) == 0) {
        return; // the episode is over: nothing to give back
      }
      if (h.permits.compareAndSet(w, w - 1)) {
        return;
      }
    }
  }

  private static boolean seal(HalfOpen h) {
    while (true) {
      long w = h.permits.get();
      if (w == SEALED) {
        return false;
      }
      if (h.permits.compareAndSet(w, SEALED)) {
        return true;
      }
    }
  }

  /** Replaces {@code from} by {@code to} if {@code from} is still current; false if it was not. */
  private boolean leave(Phase from, Phase to) {
    if (from instanceof HalfOpen h) {
      if (!seal(h)) {
        return false;
      }
      phase = to;
      return true;
    }
    return PHASE.compareAndSet(this, from, to);
  }

  private static void backOff(int spins) {
    if (spins < SPINS) {
      Thread.onSpinWait();
    } else {
      LockSupport.parkNanos(1_000); // the thread that sealed the episode is not running: let it
    }
  }

  private void transitioned(State to, AttemptRecord attempt) {
    transitions.incrementAndGet(to.ordinal());
    attempt.breakerTransition = to.ordinal();
    QuellJfr.breakerMoved(name, to, "attempts");
  }

  /** The break for the {@code step}th in a row: base × 2^step, capped, with equal jitter. */
  private long jitteredBreak(int step) {
    long d = step >= 63 || baseBreakNanos > (maxBreakNanos >> step) ? maxBreakNanos : baseBreakNanos << step;
    d = Math.min(Math.max(d, 1), maxBreakNanos);
    try {
      RandomGenerator random = time.random();
      return Math.max(1, Jitter.EQUAL.apply(d, random));
    } catch (RuntimeException e) {
      return d; // a time source whose random source fails: no jitter rather than no breaker
    }
  }

  private static long elapsed(long since, long now) {
    long e = now - since;
    return e < 0 ? 0 : e;
  }

  private static long offsetMicros(HalfOpen h, long now) {
    long e = elapsed(h.since, now);
    long micros = e / 1000 + (e % 1000 == 0 ? 0 : 1); // rounded up: a probe is never written off early
    return Math.min(micros, MAX_OFFSET_MICROS);
  }

  private static long sinceLatestGrant(HalfOpen h, long w, long now) {
    return elapsed(h.since + (w >>> PERMIT_BITS) * 1000, now);
  }

  static long nanos(Duration d) {
    return d.compareTo(Config.MAX_NANOS) >= 0 ? Long.MAX_VALUE : d.toNanos();
  }

  // ----------------------------------------------------------------------------------- the phases

  /** One stretch of the breaker's life; every transition installs a new one with the next id. */
  private abstract static class Phase {
    final long id;
    final State state;
    final long since;
    /** The outcome window, handed on from phase to phase (a reset starts a fresh one). */
    final Window window;

    Phase(long id, State state, long since, Window window) {
      this.id = id;
      this.state = state;
      this.since = since;
      this.window = window;
    }

    final Window window() {
      return window;
    }
  }

  private static final class Closed extends Phase {
    final AtomicInteger consecutive = new AtomicInteger();
    /** The step of the break that would follow if it opened again during the ramp. */
    final int step;
    volatile boolean ramping;
    final AtomicLong rampCredit = new AtomicLong(RAMP_UNIT); // the first attempt after closing passes

    Closed(long id, long since, int step, boolean ramping, Window window) {
      super(id, State.CLOSED, since, window);
      this.step = step;
      this.ramping = ramping;
    }
  }

  private static final class Open extends Phase {
    final int step;
    final long breakNanos;

    Open(long id, long since, int step, long breakNanos, Window window) {
      super(id, State.OPEN, since, window);
      this.step = step;
      this.breakNanos = breakNanos;
    }
  }

  private static final class HalfOpen extends Phase {
    final int step;
    /** How long every permit may be out without an answer before the probes are written off. */
    final long breakNanos;
    /** The first probe is the attempt that opened the episode. */
    final AtomicLong permits = new AtomicLong(1);
    final AtomicInteger successes = new AtomicInteger();

    HalfOpen(long id, long since, int step, long breakNanos, Window window) {
      super(id, State.HALF_OPEN, since, window);
      this.step = step;
      this.breakNanos = breakNanos;
    }
  }

  private static final class Isolated extends Phase {
    Isolated(long id, long since, Window window) {
      super(id, State.ISOLATED, since, window);
    }
  }

  // ----------------------------------------------------------------------------------- the window

  /**
   * The outcomes of one closed phase, by bucket. A bucket belongs to one epoch (a bucket width of
   * time since the window's origin) and is replaced, never reused, when its slot moves on: a
   * thread that still holds an old bucket adds to an object nobody reads, so no outcome is ever
   * counted in a later epoch than its own.
   */
  static final class Window {
    final long origin;
    final long bucketNanos;
    final AtomicReferenceArray<Bucket> slots = new AtomicReferenceArray<>(BUCKETS);
    /**
     * The newest bucket installed: a hint that lets most outcomes skip the division by the bucket
     * width. A stale hint is harmless: a bucket reached through it is the right one for any clock
     * reading inside its epoch, and if its slot has moved on, that epoch has left the window anyway.
     */
    private volatile Bucket head;

    Window(long origin, long bucketNanos) {
      this.origin = origin;
      this.bucketNanos = bucketNanos;
      Bucket first = new Bucket(0, origin);
      slots.set(0, first);
      this.head = first;
    }

    long epoch(long now) {
      return elapsed(origin, now) / bucketNanos;
    }

    void record(long now, boolean failure, boolean slow) {
      Bucket b = head;
      long into = now - b.start;
      if (into < 0 || into >= bucketNanos) {
        b = bucketFor(epoch(now));
        if (b == null) {
          return; // this outcome is already older than the window
        }
      }
      Bucket.CALLS.getAndAdd(b, 1L);
      if (failure) {
        Bucket.FAILURES.getAndAdd(b, 1L);
      }
      if (slow) {
        Bucket.SLOW.getAndAdd(b, 1L);
      }
    }

    private @Nullable Bucket bucketFor(long epoch) {
      int i = (int) (epoch % BUCKETS);
      while (true) {
        Bucket b = slots.get(i);
        if (b != null && b.epoch == epoch) {
          return b;
        }
        if (b != null && b.epoch > epoch) {
          return null;
        }
        Bucket fresh = new Bucket(epoch, origin + epoch * bucketNanos);
        if (slots.compareAndSet(i, b, fresh)) {
          if (epoch > head.epoch) {
            head = fresh;
          }
          return fresh;
        }
      }
    }

    /** {calls, failures, slow} in the window at {@code now}. */
    long[] counts(long now) {
      long lowest = epoch(now) - (BUCKETS - 1);
      long[] c = new long[3];
      for (int i = 0; i < BUCKETS; i++) {
        Bucket b = slots.get(i);
        if (b != null && b.epoch >= lowest) {
          c[1] += (long) Bucket.FAILURES.getVolatile(b);
          c[2] += (long) Bucket.SLOW.getVolatile(b);
          c[0] += (long) Bucket.CALLS.getVolatile(b);
        }
      }
      return c;
    }
  }

  static final class Bucket {
    static final VarHandle CALLS;
    static final VarHandle FAILURES;
    static final VarHandle SLOW;

    static {
      try {
        MethodHandles.Lookup l = MethodHandles.lookup();
        CALLS = l.findVarHandle(Bucket.class, "calls", long.class);
        FAILURES = l.findVarHandle(Bucket.class, "failures", long.class);
        SLOW = l.findVarHandle(Bucket.class, "slow", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final long epoch;
    /** When its epoch begins: the window's origin plus epoch bucket widths. */
    final long start;
    @SuppressWarnings("unused") private volatile long calls;
    @SuppressWarnings("unused") private volatile long failures;
    @SuppressWarnings("unused") private volatile long slow;

    Bucket(long epoch, long start) {
      this.epoch = epoch;
      this.start = start;
    }
  }

  // ---------------------------------------------------------------------------------- the metrics

  /**
   * What a breaker looked like at one moment: its state, what its window held, and counters since it
   * was built. For gauges (state, rates, calls) and function counters (transitions, refusals,
   * expired probes) without listeners. Immutable.
   */
  public static final class Metrics {
    private final State state;
    private final long calls;
    private final long failedCalls;
    private final long slowCalls;
    private final int consecutiveFailures;
    private final long[] transitions;
    private final long refusals;
    private final long expiredProbes;

    Metrics(State state, long calls, long failedCalls, long slowCalls, int consecutiveFailures, long[] transitions,
        long refusals, long expiredProbes) {
      this.state = state;
      this.calls = calls;
      this.failedCalls = Math.min(failedCalls, calls);
      this.slowCalls = Math.min(slowCalls, calls);
      this.consecutiveFailures = consecutiveFailures;
      this.transitions = transitions;
      this.refusals = refusals;
      this.expiredProbes = expiredProbes;
    }

    /** The breaker's state. */
    public State state() {
      return state;
    }

    /** Attempts counted in the window (cancelled and never-started attempts are not counted). */
    public long calls() {
      return calls;
    }

    /** Of {@link #calls()}, those that failed (transient failure, timeout, throttled). */
    public long failedCalls() {
      return failedCalls;
    }

    /** Of {@link #calls()}, those slower than the slow-call duration; 0 when slow-call detection is off. */
    public long slowCalls() {
      return slowCalls;
    }

    /** {@link #failedCalls()} ÷ {@link #calls()}, between 0 and 1; 0 when the window is empty. */
    public double failureRate() {
      return calls == 0 ? 0 : (double) failedCalls / calls;
    }

    /** {@link #slowCalls()} ÷ {@link #calls()}, between 0 and 1; 0 when the window is empty. */
    public double slowCallRate() {
      return calls == 0 ? 0 : (double) slowCalls / calls;
    }

    /** Failures in a row since the last success, while closed (counted only when that trip is on). */
    public int consecutiveFailures() {
      return consecutiveFailures;
    }

    /** How many times it has moved into {@code state} since it was built, by any path (manual ones too). */
    public long transitionsTo(State state) {
      return transitions[Objects.requireNonNull(state, "state").ordinal()];
    }

    /** Attempts it has refused since it was built: open, isolated, half-open with no permit, or ramping. */
    public long refusals() {
      return refusals;
    }

    /** Probes written off because every permit was out a whole break without an answer. */
    public long expiredProbes() {
      return expiredProbes;
    }

    @Override
    public String toString() {
      return "CircuitBreaker.Metrics[" + state + ", calls=" + calls + ", failed=" + failedCalls + ", slow="
          + slowCalls + ", refusals=" + refusals + ", opened=" + transitions[State.OPEN.ordinal()] + "]";
    }
  }

  // ---------------------------------------------------------------------------- the configuration

  /**
   * How a breaker decides: an immutable value. Start from {@link #DEFAULT} and change it with the
   * {@code with…} methods, or several settings at once with {@link #with(Consumer)}. Each setting is
   * checked as it is given; how the settings fit together (the maximum break is at least the first)
   * is checked when a breaker is built from the config, so they can be given in any order. Every
   * problem is reported together in one
   * {@link ResilienceConfigurationException}. Durations beyond about 292 years (such as
   * {@code Duration.ofSeconds(Long.MAX_VALUE)}) are accepted and mean "for ever".
   */
  public static final class Config {
    static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

    /**
     * Opens when at least half of at least 20 attempts in the last 30 s failed; consecutive-failure
     * and slow-call trips off; one probe at a time, one success closes; breaks of 5 s doubling to
     * 5 min, with equal jitter; a 10 s ramp after closing.
     */
    public static final Config DEFAULT = new Config(new Settings());

    private final double failureRate;
    private final int minimumCalls;
    private final Duration window;
    private final int consecutiveFailures;
    private final @Nullable Duration slowCallDuration;
    private final double slowCallRate;
    private final int probes;
    private final int probeSuccesses;
    private final Duration breakDuration;
    private final Duration maxBreakDuration;
    private final Duration ramp;

    private Config(Settings s) {
      s.validate(false);
      this.failureRate = s.failureRate;
      this.minimumCalls = s.minimumCalls;
      this.window = Objects.requireNonNull(s.window);
      this.consecutiveFailures = s.consecutiveFailures;
      this.slowCallDuration = s.slowCalls ? s.slowCallDuration : null;
      this.slowCallRate = s.slowCallRate;
      this.probes = s.probes;
      this.probeSuccesses = s.probeSuccesses;
      this.breakDuration = Objects.requireNonNull(s.breakDuration);
      this.maxBreakDuration = Objects.requireNonNull(s.maxBreakDuration);
      this.ramp = Objects.requireNonNull(s.ramp);
    }

    /**
     * A copy with several settings changed at once, validated together. The {@link Settings} object
     * is only valid inside {@code change}.
     */
    @dev.quell.internal.CheckReturnValue
    public Config with(Consumer<Settings> change) {
      Objects.requireNonNull(change, "change");
      Settings s = new Settings(this);
      change.accept(s);
      s.closed = true;
      return new Config(s);
    }

    /** A copy that opens when at least {@code rate} (in (0, 1]) of the attempts in the window failed. */
    @dev.quell.internal.CheckReturnValue
    public Config withFailureRate(double rate) {
      return with(s -> s.failureRate(rate));
    }

    /** A copy that judges the window's rates only once it holds at least {@code calls} attempts (at least 1). */
    @dev.quell.internal.CheckReturnValue
    public Config withMinimumCalls(int calls) {
      return with(s -> s.minimumCalls(calls));
    }

    /** A copy that counts attempts over the last {@code window} (at least 1 ms). */
    @dev.quell.internal.CheckReturnValue
    public Config withWindow(Duration window) {
      return with(s -> s.window(window));
    }

    /** A copy that also opens after {@code failures} failures in a row; 0 turns this trip off. */
    @dev.quell.internal.CheckReturnValue
    public Config withConsecutiveFailures(int failures) {
      return with(s -> s.consecutiveFailures(failures));
    }

    /**
     * A copy that also opens when at least {@code rate} of the attempts in the window (at least the
     * minimum) took longer than {@code duration}.
     */
    @dev.quell.internal.CheckReturnValue
    public Config withSlowCalls(Duration duration, double rate) {
      return with(s -> s.slowCalls(duration, rate));
    }

    /** A copy with slow-call detection off (the default). */
    @dev.quell.internal.CheckReturnValue
    public Config withoutSlowCalls() {
      return with(Settings::noSlowCalls);
    }

    /** A copy that lets at most {@code probes} probes (1 to 1000) out at once when half-open. */
    @dev.quell.internal.CheckReturnValue
    public Config withProbes(int probes) {
      return with(s -> s.probes(probes));
    }

    /** A copy that closes after {@code successes} probes succeeded (at least 1). */
    @dev.quell.internal.CheckReturnValue
    public Config withProbeSuccesses(int successes) {
      return with(s -> s.probeSuccesses(successes));
    }

    /** A copy whose first break lasts {@code duration} (positive; at most the maximum break). */
    @dev.quell.internal.CheckReturnValue
    public Config withBreakDuration(Duration duration) {
      return with(s -> s.breakDuration(duration));
    }

    /** A copy whose breaks stop doubling at {@code duration} (at least the first break). */
    @dev.quell.internal.CheckReturnValue
    public Config withMaxBreakDuration(Duration duration) {
      return with(s -> s.maxBreakDuration(duration));
    }

    /** A copy whose traffic ramps back over {@code ramp} after an outage; zero lets it all back at once. */
    @dev.quell.internal.CheckReturnValue
    public Config withRamp(Duration ramp) {
      return with(s -> s.ramp(ramp));
    }

    /** The share of failed attempts in the window, in (0, 1], at which it opens. Default 0.5. */
    public double failureRate() {
      return failureRate;
    }

    /** The attempts the window must hold before its rates are judged. Default 20. */
    public int minimumCalls() {
      return minimumCalls;
    }

    /** How far back the window looks. Default 30 s, kept as ten buckets of 3 s. */
    public Duration window() {
      return window;
    }

    /** Failures in a row that open it whatever the window says; 0 (the default) for off. */
    public int consecutiveFailures() {
      return consecutiveFailures;
    }

    /** The duration beyond which an attempt is slow; empty (the default) when slow-call detection is off. */
    public Optional<Duration> slowCallDuration() {
      return Optional.ofNullable(slowCallDuration);
    }

    /** The share of slow attempts in the window at which it opens, when slow-call detection is on. Default 0.5. */
    public double slowCallRate() {
      return slowCallRate;
    }

    /** Probes out at once when half-open. Default 1. */
    public int probes() {
      return probes;
    }

    /** Successful probes that close it. Default 1. */
    public int probeSuccesses() {
      return probeSuccesses;
    }

    /** The first break. Default 5 s. */
    public Duration breakDuration() {
      return breakDuration;
    }

    /** The longest break. Default 5 min. */
    public Duration maxBreakDuration() {
      return maxBreakDuration;
    }

    /** How long traffic takes to come back after an outage; zero for at once. Default 10 s. */
    public Duration ramp() {
      return ramp;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      if (this == o) {
        return true;
      }
      if (!(o instanceof Config)) {
        return false;
      }
      Config c = (Config) o;
      return Double.compare(failureRate, c.failureRate) == 0 && minimumCalls == c.minimumCalls
          && window.equals(c.window) && consecutiveFailures == c.consecutiveFailures
          && Objects.equals(slowCallDuration, c.slowCallDuration) && Double.compare(slowCallRate, c.slowCallRate) == 0
          && probes == c.probes && probeSuccesses == c.probeSuccesses && breakDuration.equals(c.breakDuration)
          && maxBreakDuration.equals(c.maxBreakDuration) && ramp.equals(c.ramp);
    }

    @Override
    public int hashCode() {
      return Objects.hash(failureRate, minimumCalls, window, consecutiveFailures, slowCallDuration, slowCallRate,
          probes, probeSuccesses, breakDuration, maxBreakDuration, ramp);
    }

    @Override
    public String toString() {
      return "CircuitBreaker.Config[failureRate=" + failureRate + ", minimumCalls=" + minimumCalls + ", window="
          + window + ", consecutiveFailures=" + consecutiveFailures + ", slowCalls="
          + (slowCallDuration == null ? "off" : slowCallDuration + " at " + slowCallRate) + ", probes=" + probes
          + ", probeSuccesses=" + probeSuccesses + ", break=" + breakDuration + ".." + maxBreakDuration + ", ramp="
          + ramp + "]";
    }

    /**
     * The settings of a breaker configuration, changed inside {@link Config#with(Consumer)} and
     * validated together when it returns. Not thread-safe, and unusable after {@code with} returns.
     */
    public static final class Settings {
      private double failureRate = 0.5;
      private int minimumCalls = 20;
      private @Nullable Duration window = Duration.ofSeconds(30);
      private int consecutiveFailures;
      private boolean slowCalls;
      private @Nullable Duration slowCallDuration;
      private double slowCallRate = 0.5;
      private int probes = 1;
      private int probeSuccesses = 1;
      private @Nullable Duration breakDuration = Duration.ofSeconds(5);
      private @Nullable Duration maxBreakDuration = Duration.ofMinutes(5);
      private @Nullable Duration ramp = Duration.ofSeconds(10);
      boolean closed;

      Settings() {}

      Settings(Config from) {
        failureRate = from.failureRate;
        minimumCalls = from.minimumCalls;
        window = from.window;
        consecutiveFailures = from.consecutiveFailures;
        slowCalls = from.slowCallDuration != null;
        slowCallDuration = from.slowCallDuration;
        slowCallRate = from.slowCallRate;
        probes = from.probes;
        probeSuccesses = from.probeSuccesses;
        breakDuration = from.breakDuration;
        maxBreakDuration = from.maxBreakDuration;
        ramp = from.ramp;
      }

      private Settings open() {
        if (closed) {
          throw new IllegalStateException("CircuitBreaker.Config.Settings can only be changed inside Config.with(...)");
        }
        return this;
      }

      /** See {@link Config#withFailureRate}. */
      public Settings failureRate(double rate) { open().failureRate = rate; return this; }

      /** See {@link Config#withMinimumCalls}. */
      public Settings minimumCalls(int calls) { open().minimumCalls = calls; return this; }

      /** See {@link Config#withWindow}. */
      public Settings window(Duration window) { open().window = window; return this; }

      /** See {@link Config#withConsecutiveFailures}. */
      public Settings consecutiveFailures(int failures) { open().consecutiveFailures = failures; return this; }

      /** See {@link Config#withSlowCalls}. */
      public Settings slowCalls(Duration duration, double rate) {
        open().slowCalls = true;
        slowCallDuration = duration;
        slowCallRate = rate;
        return this;
      }

      /** See {@link Config#withoutSlowCalls}. */
      public Settings noSlowCalls() {
        open().slowCalls = false;
        slowCallDuration = null;
        return this;
      }

      /** See {@link Config#withProbes}. */
      public Settings probes(int probes) { open().probes = probes; return this; }

      /** See {@link Config#withProbeSuccesses}. */
      public Settings probeSuccesses(int successes) { open().probeSuccesses = successes; return this; }

      /** See {@link Config#withBreakDuration}. */
      public Settings breakDuration(Duration duration) { open().breakDuration = duration; return this; }

      /** See {@link Config#withMaxBreakDuration}. */
      public Settings maxBreakDuration(Duration duration) { open().maxBreakDuration = duration; return this; }

      /** See {@link Config#withRamp}. */
      public Settings ramp(Duration ramp) { open().ramp = ramp; return this; }

      /**
       * Checks each setting; with {@code whole}, also how they fit together. A config is checked
       * whole only when a breaker is built from it, so that its {@code with…} methods can be chained
       * in any order ({@code withBreakDuration(10 min).withMaxBreakDuration(30 min)}).
       */
      void validate(boolean whole) {
        Problems p = new Problems();
        p.require(Double.isFinite(failureRate) && failureRate > 0 && failureRate <= 1, "breaker failureRate",
            failureRate, "must be in (0, 1]");
        p.require(minimumCalls >= 1, "breaker minimumCalls", minimumCalls, "must be at least 1");
        p.require(window != null && window.compareTo(Duration.ofMillis(1)) >= 0, "breaker window", shown(window),
            "must be at least 1 ms");
        p.require(consecutiveFailures >= 0, "breaker consecutiveFailures", consecutiveFailures,
            "must be at least 0 (0 turns this trip off)");
        if (slowCalls) {
          p.require(slowCallDuration != null && !slowCallDuration.isNegative() && !slowCallDuration.isZero(),
              "breaker slowCallDuration", shown(slowCallDuration),
              "must be a positive duration (use noSlowCalls() to turn slow-call detection off)");
          p.require(Double.isFinite(slowCallRate) && slowCallRate > 0 && slowCallRate <= 1, "breaker slowCallRate",
              slowCallRate, "must be in (0, 1]");
        }
        p.require(probes >= 1 && probes <= 1000, "breaker probes", probes, "must be between 1 and 1000");
        p.require(probeSuccesses >= 1, "breaker probeSuccesses", probeSuccesses, "must be at least 1");
        boolean breakOk = breakDuration != null && !breakDuration.isNegative() && !breakDuration.isZero();
        p.require(breakOk, "breaker breakDuration", shown(breakDuration), "must be a positive duration");
        boolean maxOk = maxBreakDuration != null && !maxBreakDuration.isNegative() && !maxBreakDuration.isZero();
        p.require(maxOk, "breaker maxBreakDuration", shown(maxBreakDuration), "must be a positive duration");
        if (whole && breakOk && maxOk && maxBreakDuration != null && breakDuration != null) {
          p.require(maxBreakDuration.compareTo(breakDuration) >= 0, "breaker maxBreakDuration", shown(maxBreakDuration),
              "must be at least breakDuration (" + shown(breakDuration) + ")");
        }
        p.require(ramp != null && !ramp.isNegative(), "breaker ramp", shown(ramp),
            "must be zero (no ramp) or positive");
        p.throwIfAny();
      }

      /** As every message writes a duration: "250 ms", "forever", or ISO form. */
      private static @Nullable Object shown(@Nullable Duration d) {
        return d == null ? null : Problems.duration(d);
      }
    }
  }
}
