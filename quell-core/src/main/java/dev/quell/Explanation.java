package dev.quell;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * {@link Resilience#explain()}: a policy's worst case in plain words, computed from the same rules
 * the core ({@link Call}) applies, not from a formula beside them.
 *
 * <p>The worst case of one call is found over every choice the core leaves open: where each jittered
 * wait falls in its range, how long each limiter makes an attempt wait, whether a gate refuses, and —
 * for a hedging policy — whether its first hedge is sent or suppressed. Every attempt runs anywhere
 * from nothing to its ceiling (the configured attempt timeout: measured timing only ever tightens it)
 * and is judged as the policy's classifier judges a timeout. The search keeps, for each attempt, the
 * interval of instants at which it can be admitted and start; sums of intervals are intervals, so
 * the search is exact and small. Among the paths that reach the longest time, the one with the most
 * attempts is described, and one path that attains it is kept ({@link Path}) so tests can replay it.
 * The search follows at most {@link #SEARCH_LIMIT} attempts; a policy that allows more gets a bound
 * for the rest ({@link Ending#BEYOND}).
 *
 * <p>Separately: the most attempts one call can make (every attempt failing at once, every wait at
 * its shortest), and what the budget bounds across calls.
 */
final class Explanation {
  static final long NONE = Long.MAX_VALUE;
  static final long PAUSE = Decide.REJECTION_PAUSE_NANOS;

  private final Resilience policy;
  final int attempts;
  /** The deadline in nanoseconds, NONE for none. */
  final long deadline;
  /** The longest an attempt runs: the configured attempt timeout, NONE for none. */
  final long ceiling;
  /** How the classifier judges an attempt that timed out. */
  final Verdict timeoutVerdict;
  /**
   * The most attempts the search follows one by one (and the most retries whose waits are kept): a
   * policy allowing more is explained by a bound over the rest, not a path.
   */
  static final int SEARCH_LIMIT = 1000;
  /** The most attempts counted one by one for {@link #mostAttempts}; beyond, the bound is the attempts allowed. */
  static final int COUNT_LIMIT = 100_000;
  /** Waits before retry number r (attempts so far), for the timeout verdict: lo(r) = -1 when the backoff fails; see {@link #lo}. */
  private final long[] lo;
  private final long[] hi;
  /** False when {@link #mostAttempts} is the attempts allowed rather than a count. */
  boolean mostExact = true;
  /** The longest limiters make an attempt wait before it starts, and the longest an attempt queues before a refusal. */
  final long gateWait;
  final long queueWait;
  /** A breaker or a limiter may refuse any attempt. */
  final boolean gateRefuses;
  final boolean budgetBounded;
  /** Whether hedges are drawn from the policy's extra-load allowance, which can refuse one. */
  final boolean allowanceBounded;
  final @Nullable Hedge hedge;
  /** The hedge delay of the worst case: the fixed one, or the measured one before the window has samples. */
  final long hedgeDelay;
  /** Whether a hedging call can go on as a plain retrying one: its first hedge not sent, or a SHEDDABLE call. */
  final boolean sequentialReachable;

  /** The worst case when every attempt times out: hedged (or the only path), and the plain retrying path. */
  final Path worst;
  final @Nullable Path hedged;
  final @Nullable Path sequential;
  final int mostAttempts;
  /**
   * A bound on any call, whatever the dependency answers: every instant of a call runs an attempt
   * (at most its ceiling), waits before one (a backoff or a Retry-After, each at most the backoff's
   * maximum; a gate's wait) or serves the guarded pause, and no call outlasts its deadline. The
   * search ({@link #worst}) assumes every attempt is judged as a timeout is; a dependency that
   * throttles, or asks for waits with Retry-After, can take a call up to this instead. NONE when
   * nothing bounds it.
   */
  final long anyAnswers;
  /** The hedges a hedging call's opening sends before one is refused (or all it may), during a search. */
  private int burstHedges;

  Explanation(Resilience p) {
    this.policy = p;
    this.attempts = p.attempts();
    this.deadline = p.deadlineNanos;
    this.ceiling = p.attemptTimeoutNanos;
    this.timeoutVerdict = Call.classify(p.classifier(), null,
        new AttemptTimeoutException(Duration.ofNanos(ceiling == NONE ? 0 : ceiling)));
    int kept = Math.min(attempts, SEARCH_LIMIT + 1);
    this.lo = new long[kept];
    this.hi = new long[kept];
    for (int r = 1; r < kept; r++) {
      long[] range = waits(timeoutVerdict, r);
      lo[r] = range[0];
      hi[r] = range[1];
    }
    long rateWait = 0;
    long queue = 0;
    for (Limiter l : p.limiters()) {
      long w = l.gate().maxWaitNanos();
      if (l instanceof RateLimiter) {
        rateWait = Math.max(rateWait, w);
      } else {
        queue = Durations.saturatedAdd(queue, w);
      }
    }
    this.gateWait = Math.max(rateWait, queue);
    this.queueWait = queue;
    this.gateRefuses = p.breaker().isPresent() || !p.limiters().isEmpty();
    this.budgetBounded = !p.budget().isUnbounded();
    this.hedge = attempts > 1 ? p.hedge : null;
    long h = NONE;
    if (hedge != null) {
      long fixed = hedge.fixedDelayNanos();
      h = fixed >= 0 ? fixed
          : Math.max(hedge.floorNanos(), ceiling == NONE ? 1_000_000_000L : ceiling); // until it has samples
    }
    this.hedgeDelay = h;
    // a measured hedge spends an allowance of its own (maxExtraLoad), which can refuse a hedge as the budget can
    this.allowanceBounded = hedge != null && p.hedgeAllowance != null;
    this.sequentialReachable = hedge != null
        && (p.useAmbientCriticality() || budgetBounded || gateRefuses || allowanceBounded);
    this.burstHedges = hedge == null ? 0 : Math.min(hedge.maxHedges(), attempts - 1);
    this.anyAnswers = anyAnswers(p);

    if (hedge == null) {
      this.hedged = null;
      this.sequential = null;
      this.worst = worstOf(false);
      this.mostAttempts = most(false);
    } else {
      // the opening sends every hedge it may, or — when a gate can refuse one and the call retries
      // afterwards — stops after fewer, so that its retries start sooner and wait for other backoffs
      int full = burstHedges;
      int fewest = hedge.retries() && (budgetBounded || gateRefuses || allowanceBounded) ? 1 : full;
      Path worstHedged = null;
      int most = 0;
      for (int k = full; k >= fewest; k--) {
        burstHedges = k;
        Path candidate = worstOf(true);
        if (worstHedged == null || candidate.isWorseThan(worstHedged)) {
          worstHedged = candidate;
        }
        most = Math.max(most, most(true));
      }
      burstHedges = full;
      Path hp = java.util.Objects.requireNonNull(worstHedged, "a hedged path"); // the loop runs at least once
      this.hedged = hp;
      this.sequential = sequentialReachable ? worstOf(false) : null;
      Path s = sequential;
      this.worst = s != null && s.isWorseThan(hp) ? s : hp;
      this.mostAttempts = Math.max(most, sequentialReachable ? most(false) : 0);
    }
  }

  private long anyAnswers(Resilience p) {
    long bound = NONE;
    if (ceiling != NONE && gateWait != NONE) {
      double each = (double) ceiling + gateWait;
      double total = attempts * each + (attempts - 1) * (double) p.backoffMaxNanos + PAUSE;
      bound = total >= NONE ? NONE : (long) total;
    }
    return Math.min(bound, deadline);
  }

  /** What {@code explain()} states as the worst call: an upper bound, whatever the answers. */
  long statedWorstNanos() {
    if (worst.nanos == NONE || attempts <= 1) {
      return worst.nanos;
    }
    return Math.max(worst.nanos, anyAnswers);
  }

  static String of(Resilience policy) {
    return new Explanation(policy).text();
  }

  /** The shortest wait before retry {@code r} after a timeout, -1 when the backoff fails. */
  long lo(int r) {
    return r < lo.length ? lo[r] : waits(timeoutVerdict, r)[0];
  }

  /** The longest wait before retry {@code r} after a timeout, -1 when the backoff fails. */
  long hi(int r) {
    return r < hi.length ? hi[r] : waits(timeoutVerdict, r)[1];
  }

  // ---------------------------------------------------------------- waits

  /**
   * [lo, hi, exact] of the wait before retry {@code r} after {@code verdict}: the core's own
   * arithmetic ({@link Decide#backoffNanos}) asked at the ends of the jitter's range.
   */
  private long[] waits(Verdict verdict, int r) {
    long max = policy.backoffMaxNanos;
    Backoff b = policy.backoff();
    long least = Decide.backoffNanos(b, max, r, verdict, Extreme.LEAST, null);
    long most = Decide.backoffNanos(b, max, r, verdict, Extreme.MOST, null);
    if (least < 0 || most < 0) {
      return new long[] {-1, -1, 1};
    }
    if (verdict.retryAfter().isPresent() || b instanceof Backoff.Exponential || b instanceof Backoff.Constant) {
      return new long[] {Math.min(least, most), Math.max(least, most), 1};
    }
    // a custom backoff: exact only if it ignores the random source
    long seeded = Decide.backoffNanos(b, max, r, verdict, new java.util.SplittableRandom(r), null);
    if (least == most && most == seeded) {
      return new long[] {least, most, 1};
    }
    return new long[] {0, max, 0};
  }

  /** A random source that always draws its least (or its greatest) value: the ends of a jitter's range. */
  private static final class Extreme implements RandomGenerator {
    static final Extreme LEAST = new Extreme(false);
    static final Extreme MOST = new Extreme(true);
    private final boolean most;

    private Extreme(boolean most) {
      this.most = most;
    }

    @Override public long nextLong() { return most ? Long.MAX_VALUE : Long.MIN_VALUE; }
    @Override public long nextLong(long bound) { return most ? bound - 1 : 0; }
    @Override public long nextLong(long origin, long bound) { return most ? bound - 1 : origin; }
    @Override public int nextInt() { return most ? Integer.MAX_VALUE : Integer.MIN_VALUE; }
    @Override public int nextInt(int bound) { return most ? bound - 1 : 0; }
    @Override public int nextInt(int origin, int bound) { return most ? bound - 1 : origin; }
    @Override public double nextDouble() { return most ? Math.nextDown(1.0) : 0.0; }
    @Override public double nextDouble(double bound) { return most ? Math.nextDown(bound) : 0.0; }
    @Override public double nextDouble(double origin, double bound) { return most ? Math.nextDown(bound) : origin; }
    @Override public float nextFloat() { return most ? Math.nextDown(1.0f) : 0.0f; }
    @Override public boolean nextBoolean() { return most; }
  }

  // ---------------------------------------------------------------- the worst case of one call

  /** How a worst-case path ends. */
  enum Ending {
    /** The deadline cut the last attempt short. */
    CUT,
    /** The attempts (or, hedging without retries, the hedges) were all used. */
    EXHAUSTED,
    /** The classifier (or a failing backoff) ended retrying. */
    STOPPED,
    /** The next wait would have ended past the deadline: the call failed at once. */
    WAIT_CROSSES,
    /** The budget would not fund the next retry: the guarded pause, then the end. */
    BUDGET_REFUSES,
    /** A gate refused the next attempt (after queueing, perhaps): the guarded pause, then the end. */
    GATE_REFUSES,
    /** No deadline and no attempt timeout: an attempt that hangs holds the call for ever. */
    UNBOUNDED,
    /**
     * More attempts than {@link #SEARCH_LIMIT} could follow: the path shows the first ones, and its time
     * is a bound (the deadline, or every attempt and wait at its longest), not a time it attains.
     */
    BEYOND
  }

  /** One attempt on a worst-case path: when it starts and ends, and the waits before it. */
  static final class Step {
    final int number;
    final boolean hedge;
    final long start;
    final long end;
    /** The backoff before it, or -1 (the first attempt, a hedge). */
    final long backoff;
    /** How long the limiters made it wait. */
    final long gateWait;
    /** It failed before its timeout (rather than timing out, or being cut by the deadline). */
    final boolean failsEarly;

    Step(int number, boolean hedge, long start, long end, long backoff, long gateWait, boolean failsEarly) {
      this.number = number;
      this.hedge = hedge;
      this.start = start;
      this.end = end;
      this.backoff = backoff;
      this.gateWait = gateWait;
      this.failsEarly = failsEarly;
    }
  }

  /** One path that attains a worst case. */
  static final class Path {
    final long nanos;
    final int attempts;
    final Ending ending;
    final List<Step> steps;
    /** The backoff drawn after the last attempt (WAIT_CROSSES, BUDGET_REFUSES, GATE_REFUSES), or -1. */
    final long lastBackoff;
    /** How long the refused attempt queued (GATE_REFUSES). */
    final long queued;
    /** Whether limiters must make attempts wait (or refuse) for the path to be the worst. */
    final boolean needsGates;
    /** Every attempt on it runs until its timeout (or the deadline). */
    final boolean allTimeOut;
    /** On a hedging path whose opening stops short: the number of its last attempt, after which a hedge is refused; else 0. */
    int hedgeRefusedAfter;

    Path(long nanos, int attempts, Ending ending, List<Step> steps, long lastBackoff, long queued, boolean needsGates,
        boolean allTimeOut) {
      this.nanos = nanos;
      this.attempts = attempts;
      this.ending = ending;
      this.steps = steps;
      this.lastBackoff = lastBackoff;
      this.queued = queued;
      this.needsGates = needsGates;
      this.allTimeOut = allTimeOut && steps.stream().noneMatch(s -> s.failsEarly);
    }

    boolean isWorseThan(Path o) {
      return nanos > o.nanos || nanos == o.nanos && attempts > o.attempts;
    }

    /** The backoff waits drawn on this path, in order, each as {retry number, wait} (what a test scripts its jitter with). */
    List<long[]> backoffs() {
      List<long[]> w = new ArrayList<>();
      int made = 0;
      for (Step s : steps) {
        if (s.backoff >= 0) {
          w.add(new long[] {made, s.backoff});
        }
        made++;
      }
      if (lastBackoff >= 0) {
        w.add(new long[] {made, lastBackoff});
      }
      return w;
    }
  }

  /** The attempts of a hedging call's start, when every attempt lasts {@code dur} (or until {@code left}). */
  static final class Burst {
    long end;
    int started;
    boolean stops;
    Ending ending = Ending.EXHAUSTED;
    final List<long[]> attempts = new ArrayList<>(); // start, end, hedge (0/1), fails before its timeout (0/1)
  }

  /**
   * The opening of a hedging call, relative to its first attempt's start, the deadline {@code left}
   * away: with {@code dur} its ceiling, the longest it can last; with {@code dur} 0, every attempt
   * failing at once.
   *
   * <p>The longest, when failures are transient: each hedge goes out at most a hedge delay after the
   * one before (its timer) and at most a ceiling after it (that attempt's end, whether it times out or
   * fails, sends the next at once). Both are attained together: each attempt fails exactly when the
   * next hedge's timer is due (a failure at that instant is taken first and sends the hedge; the timer
   * is then stale), or times out first if the ceiling is the shorter; the last runs to its timeout.
   * Timing out on every attempt is not the worst: a timeout that falls between two timers sends the
   * next hedge early.
   */
  Burst burst(long dur, long left) {
    Hedge h = hedge;
    if (h == null) {
      throw new IllegalStateException("no hedge");
    }
    if (dur == 0 || dur == NONE || timeoutVerdict.kind() != Verdict.Kind.TRANSIENT) {
      return replay(dur, left);
    }
    int hedges = burstHedges;
    long step = Math.min(hedgeDelay, dur);
    long longest = Durations.saturatedAdd((long) Math.min((double) hedges * step, Long.MAX_VALUE), dur);
    if (longest >= left) {
      // the deadline cuts it: every hedge goes out (as late as they can, the last a ceiling before the
      // deadline), so the cut call has made the most attempts it can
      return sends(hedges, step, Math.max(0, left - dur), dur, dur, left);
    }
    return sends(hedges, step, longest - dur, dur, dur, left);
  }

  /** An opening whose last hedge goes out at {@code last}, the others as late as they can before it. */
  private Burst sends(int hedges, long step, long last, long lastRuns, long dur, long left) {
    List<Long> sends = new ArrayList<>();
    for (int j = 0; j <= hedges; j++) {
      long behind = (long) Math.min((double) (hedges - j) * step, Long.MAX_VALUE);
      sends.add(j == 0 ? 0 : Math.max(0, last - behind));
    }
    return build(sends, lastRuns, dur, left);
  }

  /**
   * A hedging call's opening that ends exactly {@code x} after its first attempt's start (between
   * every attempt failing at once and {@link #burst}'s longest), for a path that needs it: the hedges
   * go out as late as they can, the last at {@code x} less a ceiling, and the last attempt runs to
   * {@code x}. Only for transient failures and a finite ceiling; otherwise the closest the replay gives.
   */
  Burst realize(long x, long left) {
    Hedge h = hedge;
    if (h == null) {
      throw new IllegalStateException("no hedge");
    }
    long dur = ceiling;
    if (dur == NONE || timeoutVerdict.kind() != Verdict.Kind.TRANSIENT) {
      return replay(x == 0 ? 0 : dur, left);
    }
    int hedges = burstHedges;
    long last = Math.max(0, x - dur);
    return sends(hedges, Math.min(hedgeDelay, dur), last, x - last, dur, left);
  }

  /**
   * The attempts of an opening whose attempts start at {@code sends}: each but the last ends just as
   * the next goes out, sending it — unless its hedge timer sends the next one and it can time out
   * without sending another or outlasting the last — and the last runs {@code lastRuns}; all are cut
   * at {@code left}.
   */
  private Burst build(List<Long> sends, long lastRuns, long dur, long left) {
    Hedge h = hedge;
    Burst b = new Burst();
    int last = sends.size() - 1;
    long lastStart = sends.get(last);
    long lastEnd = Durations.saturatedAdd(lastStart, lastRuns);
    for (int k = 0; k <= last; k++) {
      long start = sends.get(k);
      long timeout = Durations.saturatedAdd(start, dur);
      long end;
      boolean fails;
      if (k == last) {
        end = Durations.saturatedAdd(start, lastRuns);
        fails = lastRuns < dur;
      } else if (sends.get(k + 1) - start == hedgeDelay && timeout >= lastStart && timeout <= lastEnd) {
        end = timeout; // its timer sends the next hedge, and its timeout comes when no hedge is left to send
        fails = false;
      } else {
        end = sends.get(k + 1); // its end sends the next hedge
        fails = end - start < dur;
      }
      if (end >= left) {
        end = left;
        fails = false;
      }
      b.attempts.add(new long[] {start, end, k == 0 ? 0 : 1, fails ? 1 : 0});
      b.end = Math.max(b.end, end);
    }
    b.started = last + 1;
    b.stops = true;
    if (b.end >= left) {
      b.ending = Ending.CUT;
    } else if (b.started >= attempts || b.started > 1 && h != null && !h.retries()) {
      b.ending = Ending.EXHAUSTED;
    } else {
      b.stops = false;
    }
    return b;
  }

  /**
   * Replays the core's hedging rules ({@code Call.begin}, {@code afterAttempt}, {@code sendHedge}) for
   * attempts that each last {@code dur} (cut at {@code left}), relative to the first one's start. Ties
   * go as the drivers order them: an attempt's timeout before a hedge timer due at the same instant.
   */
  private Burst replay(long dur, long left) {
    Hedge h = hedge;
    Burst b = new Burst();
    if (h == null) {
      throw new IllegalStateException("no hedge");
    }
    int m = burstHedges;
    List<long[]> atts = b.attempts;
    atts.add(new long[] {0, Math.min(dur, left), 0, 0});
    boolean[] ended = new boolean[m + 2];
    int running = 1;
    int hedges = 0;
    boolean hedging = true;
    long timer = attempts > 1 ? hedgeDelay : NONE;
    b.started = 1;
    while (true) {
      int next = -1;
      for (int i = 0; i < atts.size(); i++) {
        if (!ended[i] && (next < 0 || atts.get(i)[1] < atts.get(next)[1])) {
          next = i;
        }
      }
      long tEnd = atts.get(next)[1];
      if (timer != NONE && timer < tEnd) {
        long t = timer;
        timer = NONE;
        if (hedging && hedges < m && b.started < attempts && t < left) {
          hedges++;
          running++;
          timer = send(b, atts, t, dur, left, hedging && hedges < m && b.started + 1 < attempts);
        }
        continue;
      }
      if (tEnd == NONE) {
        b.end = NONE;
        b.stops = true;
        b.ending = Ending.UNBOUNDED;
        return b;
      }
      ended[next] = true;
      running--;
      long t = tEnd;
      switch (timeoutVerdict.kind()) {
        case OK:
        case PERMANENT:
          b.end = t;
          b.stops = true;
          b.ending = Ending.STOPPED;
          return b;
        case THROTTLED:
          hedging = false;
          break;
        default:
          if (hedging && hedges < m && b.started < attempts && t < left) {
            hedges++;
            running++;
            long again = send(b, atts, t, dur, left, hedging && hedges < m && b.started + 1 < attempts);
            if (again != NONE) {
              timer = again;
            }
          }
      }
      if (running == 0) {
        b.end = t;
        if (t >= left) {
          b.stops = true;
          b.ending = Ending.CUT;
        } else if (b.started >= attempts || hedges > 0 && !h.retries()) {
          b.stops = true;
          b.ending = Ending.EXHAUSTED;
        }
        return b;
      }
    }
  }

  /** A hedge starts at {@code t}; returns its hedge timer (NONE when no further hedge may go). */
  private long send(Burst b, List<long[]> atts, long t, long dur, long left, boolean another) {
    b.started++;
    long runs = left == NONE ? dur : Math.min(dur, left - t);
    atts.add(new long[] {t, Durations.saturatedAdd(t, runs), 1, 0});
    return another ? Durations.saturatedAdd(t, hedgeDelay) : NONE;
  }

  /** One stage of the search: one attempt, or a hedging call's opening burst. */
  private static final class Stage {
    int first; // the number of its first attempt
    long a;
    long b;
    long sa;
    long sb;
    long ea = 1;
    long eb = 0; // ea > eb: no end before the deadline
    /** How long the stage lasts from its first attempt's start: at most (every attempt times out), at least (each fails at once). */
    long longest;
    long shortest;
    @Nullable Burst burst; // the uncapped burst, for a hedging stage
  }

  private static final class Candidate {
    final long nanos;
    final int attempts;
    final Ending ending;
    final int stage;
    /**
     * What the path must reach in that stage: the starts of its first attempt for CUT and UNBOUNDED,
     * its admission for GATE_REFUSES, its end for every other ending.
     */
    final long from;
    final long to;
    /** The backoff drawn after the stage (WAIT_CROSSES, BUDGET_REFUSES), or -1. */
    final long lastBackoff;

    Candidate(long nanos, int attempts, Ending ending, int stage, long from, long to, long lastBackoff) {
      this.nanos = nanos;
      this.attempts = attempts;
      this.ending = ending;
      this.stage = stage;
      this.from = from;
      this.to = to;
      this.lastBackoff = lastBackoff;
    }
  }

  private Path worstOf(boolean hedging) {
    Path plain = search(hedging, false);
    if (gateWait == 0 && !gateRefuses && !budgetBounded) {
      return plain;
    }
    Path gated = search(hedging, true);
    return gated.isWorseThan(plain) ? gated : plain;
  }

  /**
   * The interval search: for each stage, the instants at which it can be admitted, start and end
   * before the deadline; the candidates for the call's end; then a path to the worst candidate.
   * An attempt lasts anywhere from nothing (it fails at once) to its ceiling (it times out).
   */
  private Path search(boolean hedging, boolean gates) {
    long d = deadline;
    long lastInstant = d == NONE ? NONE : d - 1;
    long g = gates ? gateWait : 0;
    List<Stage> stages = new ArrayList<>();
    List<Candidate> found = new ArrayList<>();
    long a = 0;
    long b = 0;
    int k = 1;
    while (true) {
      Stage st = new Stage();
      int index = stages.size();
      stages.add(st);
      st.first = k;
      st.a = a;
      st.b = b;
      if (gates && (gateRefuses || budgetBounded && k >= 2)) {
        long refusedAt = Durations.saturatedAdd(b, queueWait);
        found.add(new Candidate(Math.min(Durations.saturatedAdd(refusedAt, PAUSE), d), k - 1,
            Ending.GATE_REFUSES, index, b, b, -1));
      }
      st.sa = a;
      st.sb = Math.min(Durations.saturatedAdd(b, g), lastInstant);
      int done; // attempts made once this stage ends before the deadline
      boolean hedgesEndIt = false;
      Ending stopEnding = Ending.EXHAUSTED;
      if (hedging && k == 1) {
        Burst x = burst(ceiling, NONE);
        st.burst = x;
        st.longest = x.end;
        st.shortest = burst(0, NONE).end;
        if (x.end == NONE) {
          if (d == NONE) {
            found.add(new Candidate(NONE, x.started, Ending.UNBOUNDED, index, st.sa, st.sa, -1));
          } else {
            found.add(new Candidate(d, burst(ceiling, d - st.sa).started, Ending.CUT, index, st.sa, st.sb, -1));
          }
          break;
        }
        if (d != NONE && Durations.saturatedAdd(st.sb, x.end) >= d) {
          long s = Math.max(st.sa, d - x.end); // the earliest start cut by the deadline sends the most hedges
          found.add(new Candidate(d, burst(ceiling, d - s).started, Ending.CUT, index, s, s, -1));
        }
        done = x.started;
        hedgesEndIt = x.stops;
        stopEnding = x.ending;
      } else {
        st.longest = ceiling;
        st.shortest = 0;
        if (ceiling == NONE) {
          found.add(new Candidate(d, k, d == NONE ? Ending.UNBOUNDED : Ending.CUT, index, st.sa, st.sb, -1));
          break;
        }
        if (d != NONE && Durations.saturatedAdd(st.sb, ceiling) >= d) {
          found.add(new Candidate(d, k, Ending.CUT, index, Math.max(st.sa, d - ceiling), st.sb, -1));
        }
        done = k;
      }
      st.ea = Durations.saturatedAdd(st.sa, st.shortest);
      st.eb = Math.min(Durations.saturatedAdd(st.sb, st.longest), lastInstant);
      if (d != NONE && st.ea >= d) {
        break; // every start of this stage runs into the deadline
      }
      // what the core decides at the stage's end (Decide), every attempt having timed out; the
      // deadline is the search's own intervals, so it is not asked here
      long plan = Decide.afterAttempt(st.burst != null ? Verdict.Kind.TRANSIENT : timeoutVerdict.kind(), false,
          false, NONE, done, attempts, hedgesEndIt);
      if (Decide.stops(plan)) {
        StopReason why = Decide.reason(plan);
        found.add(new Candidate(st.eb, done, why == StopReason.ATTEMPTS_EXHAUSTED ? stopEnding : Ending.STOPPED,
            index, st.eb, st.eb, -1));
        break;
      }
      int r = done; // the retry number the backoff is asked for: attempts so far
      long soonest = Decide.afterWait(lo(r), NONE);
      if (Decide.stops(soonest) && Decide.reason(soonest) == StopReason.PERMANENT) {
        found.add(new Candidate(st.eb, done, Ending.STOPPED, index, st.eb, st.eb, -1)); // the backoff failed
        break;
      }
      if (d != NONE && Decide.stops(Decide.afterWait(hi(r), Math.max(0, d - st.eb)))) {
        // its longest wait carries the call past its deadline: it stops there
        found.add(new Candidate(st.eb, done, Ending.WAIT_CROSSES, index, st.eb, st.eb, hi(r)));
      }
      if (gates && budgetBounded) {
        long e = d == NONE ? st.eb : Math.min(st.eb, d - lo(r) - 1);
        if (e >= st.ea) {
          found.add(new Candidate(Math.min(Durations.saturatedAdd(e, PAUSE), d), done, Ending.BUDGET_REFUSES, index,
              e, e, lo(r)));
        }
      }
      long na = Durations.saturatedAdd(st.ea, lo(r));
      if (d != NONE && na >= d) {
        break;
      }
      if (stages.size() >= SEARCH_LIMIT) {
        found.add(new Candidate(bound(), attempts, Ending.BEYOND, index, st.eb, st.eb, -1));
        break;
      }
      a = na;
      b = Math.min(Durations.saturatedAdd(st.eb, hi(r)), lastInstant);
      k = done + 1;
    }
    Candidate best = found.get(0);
    for (Candidate c : found) {
      if (c.nanos != best.nanos ? c.nanos > best.nanos
          : (c.ending == Ending.BEYOND) != (best.ending == Ending.BEYOND) ? best.ending == Ending.BEYOND
          : c.attempts > best.attempts) {
        best = c; // the longest; among equals, one a path attains, then the most attempts
      }
    }
    return pathTo(best, stages, gates);
  }

  /**
   * A bound on any call's time when the search stopped short: the deadline, or else every attempt
   * queueing and running its longest and every wait at the backoff's cap, then the guarded pause.
   */
  private long bound() {
    long each = Durations.saturatedAdd(ceiling, gateWait);
    Backoff b = policy.backoff();
    // a built-in backoff only grows: no wait is longer than the last one's longest
    long waits = b instanceof Backoff.Exponential || b instanceof Backoff.Constant ? Math.max(0, hi(attempts - 1))
        : Durations.toNanosSaturated(policy.backoffMax);
    long sum = Durations.saturatedAdd(Durations.saturatedAdd(times(each, attempts), times(waits, attempts - 1L)), PAUSE);
    return Math.min(sum, deadline);
  }

  private static long times(long nanos, long n) {
    return nanos == NONE ? NONE : (long) Math.min((double) nanos * n, (double) Long.MAX_VALUE);
  }

  /**
   * A path to {@code c}. Backwards, the instants at which each stage may start and end and still
   * reach {@code c}; then forwards, from the call's start, choices that stay within them: each
   * attempt runs until it times out if it can, else as long as it can; each wait is its longest if
   * that still reaches {@code c}, else its shortest that does; no limiter wait unless one is needed.
   */
  private Path pathTo(Candidate c, List<Stage> stages, boolean gates) {
    long g = gates ? gateWait : 0;
    int last = c.stage;
    boolean refused = c.ending == Ending.GATE_REFUSES;
    boolean startTarget = c.ending == Ending.CUT || c.ending == Ending.UNBOUNDED;
    // the starts and ends of each stage's first attempt that can still reach c
    long[][] starts = new long[last + 1][];
    long[][] ends = new long[last + 1][];
    long[] admitLast = null;
    if (refused) {
      admitLast = new long[] {c.from, c.to};
    } else if (startTarget) {
      starts[last] = new long[] {c.from, c.to};
    } else {
      ends[last] = new long[] {c.from, c.to};
    }
    for (int i = refused ? last - 1 : last; i >= 0; i--) {
      Stage st = stages.get(i);
      if (i < last || refused) {
        Stage next = stages.get(i + 1);
        int r = next.first - 1;
        long[] admit = i + 1 == last && refused ? java.util.Objects.requireNonNull(admitLast)
            : admissions(next, java.util.Objects.requireNonNull(starts[i + 1]), g);
        ends[i] = new long[] {Math.max(st.ea, admit[0] - hi(r)), Math.min(st.eb, admit[1] - lo(r))};
      }
      if (starts[i] == null) {
        starts[i] = new long[] {Math.max(st.sa, ends[i][0] - st.longest), Math.min(st.sb, ends[i][1] - st.shortest)};
      }
    }
    List<Step> steps = new ArrayList<>();
    long t = 0; // the admission of the current stage
    long backoff = -1;
    boolean needsGates = refused;
    boolean allTimeOut = true;
    for (int i = 0; i <= last; i++) {
      Stage st = stages.get(i);
      if (i == last && refused) {
        break;
      }
      long start = Math.max(t, starts[i][0]); // a limiter wait only when the path needs one
      long gateW = start - t;
      needsGates |= gateW > 0;
      long runs;
      if (i == last && startTarget) {
        runs = st.longest;
      } else {
        // until it times out if that still reaches c; else it fails as early as it may
        runs = Durations.saturatedAdd(start, st.longest) <= ends[i][1] ? st.longest
            : Math.max(st.shortest, ends[i][0] - start);
      }
      allTimeOut &= runs == st.longest;
      addSteps(steps, st, start, runs, backoff, gateW);
      if (i == last) {
        break;
      }
      long end = Durations.saturatedAdd(start, runs);
      Stage next = stages.get(i + 1);
      int r = next.first - 1;
      long[] admit = i + 1 == last && refused ? java.util.Objects.requireNonNull(admitLast)
          : admissions(next, java.util.Objects.requireNonNull(starts[i + 1]), g);
      long w = Durations.saturatedAdd(end, hi(r)) <= admit[1] ? hi(r) : Math.max(lo(r), admit[0] - end);
      backoff = w;
      t = end + w;
    }
    long lastBackoff = refused && last > 0 ? backoff : c.lastBackoff;
    long queued = refused ? Math.min(queueWait, deadline == NONE ? NONE : Math.max(0, deadline - c.from)) : 0;
    Path path = new Path(c.nanos, c.attempts, c.ending, List.copyOf(steps), lastBackoff, queued,
        (needsGates || c.ending == Ending.BUDGET_REFUSES) && gates, allTimeOut);
    Hedge h = hedge;
    if (h != null && stages.get(0).burst != null && burstHedges < Math.min(h.maxHedges(), attempts - 1)
        && steps.size() > burstHedges + 1) {
      path.hedgeRefusedAfter = burstHedges + 1;
    }
    return path;
  }

  /** The admissions of {@code st} from which a start in {@code starts} can be reached, waiting at most {@code g}. */
  private static long[] admissions(Stage st, long[] starts, long g) {
    return new long[] {Math.max(st.a, starts[0] - g), Math.min(st.b, starts[1])};
  }

  /** Adds the stage's attempts for a first attempt starting at {@code start} that runs {@code runs}. */
  private void addSteps(List<Step> steps, Stage st, long start, long runs, long backoff, long gateW) {
    if (st.burst == null) {
      long end = runs == NONE ? deadline : Math.min(Durations.saturatedAdd(start, runs), deadline);
      steps.add(new Step(st.first, false, start, end, backoff, gateW, runs < ceiling && end < deadline));
      return;
    }
    long left = deadline == NONE ? NONE : deadline - start;
    Burst x = runs == st.longest ? burst(ceiling, left) : realize(runs, left);
    for (int i = 0; i < x.attempts.size(); i++) {
      long[] att = x.attempts.get(i);
      steps.add(new Step(st.first + i, att[2] == 1, Durations.saturatedAdd(start, att[0]),
          Durations.saturatedAdd(start, att[1]), i == 0 ? backoff : -1, i == 0 ? gateW : 0,
          runs != st.longest || att[3] == 1));
    }
  }

  /** The most attempts one call can make: each fails at once, each wait is its shortest, every gate admits. */
  private int most(boolean hedging) {
    int made;
    long t = 0;
    if (hedging) {
      Burst x = burst(0, deadline);
      if (x.stops) {
        return x.started;
      }
      made = x.started;
    } else {
      made = 1;
      Verdict.Kind kind = timeoutVerdict.kind();
      if (kind == Verdict.Kind.OK || kind == Verdict.Kind.PERMANENT) {
        return 1;
      }
    }
    while (made < attempts && lo(made) >= 0) {
      if (made >= COUNT_LIMIT) {
        mostExact = false; // too many to count: no call makes more than it may
        return attempts;
      }
      t = Durations.saturatedAdd(t, lo(made));
      if (deadline != NONE && t >= deadline) {
        break;
      }
      made++;
    }
    return made;
  }

  // ---------------------------------------------------------------- the text

  String text() {
    List<String> lines = new ArrayList<>();
    lines.add(headline());
    lines.add(attemptsLine());
    if (attempts > 1) {
      lines.add(waitsLine());
    }
    lines.add(deadlineLine());
    Hedge h = hedge;
    if (h != null) {
      lines.add(hedgeLine(h));
    }
    lines.add(budgetLine());
    policy.breaker().ifPresent(br -> lines.add(breakerLine(br)));
    for (Limiter l : policy.limiters()) {
      lines.add(limiterLine(l));
    }
    lines.add(gatesLine());
    lines.addAll(worstLines());
    lines.add(bottomLine());
    return String.join("\n", lines);
  }

  private String headline() {
    StringBuilder s = new StringBuilder("Policy '").append(policy.name()).append("': ");
    if (attempts == 1) {
      s.append("1 attempt per call, no retries");
    } else {
      s.append("up to ").append(attempts).append(" attempts per call (the first and ");
      if (attempts == 2) {
        s.append(hedge != null ? "a retry or hedge)" : "a retry)");
      } else {
        s.append("up to ").append(attempts - 1).append(hedge != null ? " retries or hedges)" : " retries)");
      }
    }
    s.append(deadline == NONE ? ", no deadline." : ", within a deadline of " + fmt(deadline) + ".");
    return s.toString();
  }

  private String attemptsLine() {
    StringBuilder s = new StringBuilder("Attempts: ");
    if (ceiling == NONE && deadline == NONE) {
      s.append("no attempt timeout and no deadline: an attempt that hangs holds the caller for ever");
    } else if (ceiling == NONE) {
      s.append("no attempt timeout: an attempt runs until the deadline");
    } else {
      s.append("each at most ").append(fmt(ceiling)).append(" (the attempt timeout)")
          .append(deadline == NONE ? "" : ", and never past the deadline");
    }
    policy.measuredTiming().ifPresent(m -> s.append("; measured timing tightens it to ").append(number(m.multiple()))
        .append(" × the live p95 of successful attempts, never under ").append(fmt(m.floor().toNanos()))
        .append(", once the last ").append(fmt(m.window().toNanos())).append(" hold ").append(m.minSamples())
        .append(" of them; the worst case assumes ")
        .append(ceiling == NONE ? "no timeout" : "the configured " + fmt(ceiling)));
    return s.append('.').toString();
  }

  private String waitsLine() {
    StringBuilder s = new StringBuilder("Waits: ");
    Backoff b = policy.backoff();
    long max = Durations.toNanosSaturated(policy.backoffMax);
    if (lo(1) < 0) {
      s.append("the backoff fails, so the call stops after its first failure.");
      return s.toString();
    }
    // runs of retries with the same range, as far as the search follows them one by one
    int last = Math.min(attempts - 1, SEARCH_LIMIT);
    int failsAt = 0;
    List<long[]> runs = new ArrayList<>(); // {first retry, last retry, lo, hi}
    for (int r = 1; r <= last; r++) {
      if (lo(r) < 0) {
        failsAt = r;
        break;
      }
      long[] run = runs.isEmpty() ? null : runs.get(runs.size() - 1);
      if (run != null && run[2] == lo(r) && run[3] == hi(r)) {
        run[1] = r;
      } else {
        runs.add(new long[] {r, r, lo(r), hi(r)});
      }
    }
    if (failsAt == 0 && attempts - 1 > last) {
      // too many to list: a built-in backoff only grows, so the rest lie between the next shortest and the last longest
      boolean builtIn = b instanceof Backoff.Exponential || b instanceof Backoff.Constant;
      long least = builtIn ? lo(last + 1) : 0;
      long most = builtIn ? hi(attempts - 1) : max;
      long[] run = runs.get(runs.size() - 1);
      if (builtIn && run[2] == least && run[3] == most) {
        run[1] = attempts - 1L;
      } else {
        runs.add(new long[] {last + 1L, attempts - 1L, least, most});
      }
    }
    if (runs.size() == 1 && runs.get(0)[3] == 0) {
      s.append("none: a retry goes at once.");
    } else {
      List<String> parts = new ArrayList<>();
      for (long[] run : runs) {
        parts.add(range(run[2], run[3]) + (run[0] == run[1] ? " before retry " + run[0]
            : " before each of retries " + run[0] + " to " + run[1]));
      }
      if (parts.size() > SHOWN_STEPS) {
        List<String> few = new ArrayList<>(parts.subList(0, SHOWN_STEPS - 2));
        few.add("…");
        few.add(parts.get(parts.size() - 1));
        parts = few;
      }
      for (int i = 0; i < parts.size(); i++) {
        s.append(i == 0 ? "" : i == parts.size() - 1 ? " and " : ", ").append(parts.get(i));
      }
      s.append(" (").append(describe(b)).append(")");
      if (failsAt > 0) {
        s.append("; the backoff fails before retry ").append(failsAt).append(", so the call stops after attempt ")
            .append(failsAt);
      }
      s.append('.');
    }
    // what a throttled answer and a Retry-After do
    if (timeoutVerdict.kind() != Verdict.Kind.THROTTLED) {
      List<String> throttled = new ArrayList<>();
      boolean differs = false;
      for (int r = 1; r < attempts && r <= 3; r++) {
        long[] t = waits(Verdict.THROTTLED, r);
        if (t[0] < 0) {
          break;
        }
        differs |= t[0] != lo(r) || t[1] != hi(r);
        throttled.add(range(t[0], t[1]));
      }
      if (differs) {
        s.append(" After a throttled answer: ").append(String.join(", ", throttled)).append(attempts > 4 ? "…" : "")
            .append(';');
      }
      s.append(differs ? " a" : " A");
    } else {
      s.append(" A");
    }
    s.append(" Retry-After from the dependency replaces the wait, ")
        .append(max == NONE ? "uncapped" : "capped at " + fmt(max)).append(" and never jittered.");
    if (deadline != NONE) {
      s.append(" A wait that would end past the deadline is not slept: the call ends at once.");
    }
    return s.toString();
  }

  private static String describe(Backoff b) {
    if (b instanceof Backoff.Exponential) {
      Jitter j = ((Backoff.Exponential) b).jitter();
      return "exponential backoff, " + (j == Jitter.FULL ? "full jitter" : j == Jitter.EQUAL ? "equal jitter" : "no jitter");
    }
    if (b instanceof Backoff.Constant) {
      return "constant backoff";
    }
    return "a custom backoff";
  }

  private String deadlineLine() {
    StringBuilder s = new StringBuilder("Deadline: ");
    if (deadline == NONE) {
      s.append("none").append(policy.useAmbientDeadline() ? " of its own; one in the caller's context still applies" : "");
    } else {
      s.append(fmt(deadline)).append(" for the whole call, attempts, waits and pauses included")
          .append(policy.useAmbientDeadline() ? "; an earlier deadline in the caller's context wins" : "");
    }
    return s.append('.').toString();
  }

  private String hedgeLine(Hedge h) {
    StringBuilder s = new StringBuilder("Hedging: ");
    long fixed = h.fixedDelayNanos();
    if (fixed >= 0) {
      s.append(fixed == NONE ? "never on a timer" : fixed == 0 ? "at once, beside the first attempt"
          : "after " + fmt(fixed) + " without an answer");
    } else {
      Duration window = policy.measuredTiming().map(MeasuredTiming::window).orElse(MeasuredTiming.DEFAULT_WINDOW);
      s.append("after the live p").append(number(h.quantile() * 100))
          .append(" of successful attempts without an answer (")
          .append(number(h.maxExtraLoad().orElse(0) * 100)).append("% extra load), never under ")
          .append(fmt(h.floorNanos())).append(" (").append(fmt(hedgeDelay)).append(" until the last ")
          .append(fmt(window.toNanos())).append(" hold ")
          .append(policy.measuredTiming().map(MeasuredTiming::minSamples).orElse(MeasuredTiming.DEFAULT_MIN_SAMPLES))
          .append(" of them, as the worst case assumes)");
    }
    s.append(", or at once after a transient failure; up to ").append(h.maxHedges())
        .append(h.maxHedges() == 1 ? " hedge" : " hedges").append(" beside the first attempt, each counted in the ")
        .append(attempts).append(" attempts and funded by the budget (an unfunded hedge is not sent, and the call"
            + " goes on as a plain one); a throttled answer stops hedging; once every attempt failed the call ")
        .append(h.retries() ? "retries" : "ends")
        .append(policy.useAmbientCriticality() ? "; SHEDDABLE calls are never hedged" : "").append('.');
    return s.toString();
  }

  private String budgetLine() {
    RetryBudget b = policy.budget();
    RetryBudget configured = policy.configuredBudget();
    StringBuilder s = new StringBuilder("Budget: ");
    if (attempts == 1) {
      return s.append("none (one attempt: nothing to retry).").toString();
    }
    if (b.isUnbounded()) {
      return s.append("none: every retry").append(hedge != null ? " and hedge" : "")
          .append(" the attempts and the deadline allow goes out; nothing bounds them across calls.").toString();
    }
    String funds = hedge != null ? "retries and hedges" : "retries";
    if (b instanceof TokenBucket) {
      TokenBucket t = (TokenBucket) b;
      s.append(configured == RetryBudget.AUTOMATIC ? "this policy's own token bucket" : "a token bucket")
          .append(": each successful attempt adds ").append(number(t.fraction())).append(" token");
      if (t.minimumPerSecond() > 0) {
        s.append(", ").append(number(t.minimumPerSecond())).append(" more come each second");
      }
      s.append(", at most ").append(number(t.capacity())).append(" held; each ")
          .append(hedge != null ? "retry or hedge" : "retry").append(" spends one");
    } else if (b instanceof FeedbackThrottle) {
      FeedbackThrottle f = (FeedbackThrottle) b;
      s.append("a feedback throttle (gRPC's): ").append(funds)
          .append(" only while more than half of its ").append(number(f.capacity()))
          .append(" tokens remain; each failed attempt takes one, each success adds ").append(number(f.tokenRatio()));
    } else if (b instanceof ReplenishingAllowance) {
      ReplenishingAllowance r = (ReplenishingAllowance) b;
      s.append("a replenishing allowance: ").append(number(r.capacity())).append(' ').append(funds)
          .append(" per ").append(fmt(Durations.toNanosSaturated(r.period()))).append(" window");
    } else if (b instanceof ConcurrentAllowance) {
      ConcurrentAllowance c = (ConcurrentAllowance) b;
      s.append("an in-flight allowance: ").append(funds).append(" in flight at most ")
          .append(number(c.percent() * 100)).append("% of the calls in flight, never fewer than ").append(c.minimum());
    } else {
      s.append("a budget of its own kind");
    }
    s.append(". A retry it will not fund ends the call with BUDGET_EXHAUSTED (CallRejectedException) after the"
        + " guarded pause of ").append(fmt(PAUSE)).append(deadline == NONE ? "" : ", never past the deadline")
        .append("; it is known before the wait, which is then not slept");
    if (policy.useAmbientCriticality()) {
      s.append(". With the caller's criticality, a SHEDDABLE call's retry is refused once the budget is more than"
          + " half spent, a SHEDDABLE_PLUS call's once it is more than three quarters spent");
    }
    return s.append('.').toString();
  }

  private String breakerLine(CircuitBreaker br) {
    CircuitBreaker.Config c = br.config();
    StringBuilder s = new StringBuilder("Breaker '").append(br.name()).append("' (")
        .append(policy.ownsBreaker() ? "this policy's own" : "shared").append("): opens when at least ")
        .append(number(c.failureRate() * 100)).append("% of at least ").append(c.minimumCalls())
        .append(" attempts in the last ").append(fmt(CircuitBreaker.nanos(c.window()))).append(" failed");
    if (c.consecutiveFailures() > 0) {
      s.append(", or after ").append(plural(c.consecutiveFailures(), "failure")).append(" in a row");
    }
    c.slowCallDuration().ifPresent(d -> s.append(", or when at least ").append(number(c.slowCallRate() * 100))
        .append("% took longer than ").append(fmt(CircuitBreaker.nanos(d))));
    long first = CircuitBreaker.nanos(c.breakDuration());
    s.append("; then it refuses every attempt for ").append(range(first - first / 2, first))
        .append(" (jittered), doubling after each failed probe up to ").append(fmt(CircuitBreaker.nanos(c.maxBreakDuration())))
        .append("; half-open, ").append(c.probes()).append(c.probes() == 1 ? " probe" : " probes")
        .append(" at a time, ").append(c.probeSuccesses()).append(c.probeSuccesses() == 1 ? " success closes" : " successes close")
        .append(" it");
    long ramp = CircuitBreaker.nanos(c.ramp());
    if (ramp > 0) {
      s.append("; traffic ramps back over ").append(fmt(ramp));
    }
    s.append(". A refusal ends the call with DEPENDENCY_UNAVAILABLE (CallRejectedException, Retry-After: until the"
        + " next probe) after the guarded pause.");
    return s.toString();
  }

  private String limiterLine(Limiter l) {
    StringBuilder s = new StringBuilder();
    long wait = l.gate().maxWaitNanos();
    if (l instanceof RateLimiter) {
      s.append("Rate limiter: ").append(number(((RateLimiter) l).perSecond())).append(" a second, bursts of ")
          .append(l.limit());
      s.append(wait > 0 ? "; an attempt may wait up to " + fmtWait(wait) + " for a permit, never past the deadline"
          : "; refuses at once when empty");
      s.append(". A refusal ends the call with LIMITED (RateLimitedException, Retry-After: until the next permit)");
    } else if (l instanceof ConcurrencyLimiter) {
      s.append("Bulkhead: at most ").append(l.limit()).append(" attempts in flight");
      s.append(wait > 0 ? "; an attempt may queue up to " + fmtWait(wait) + ", first come first served"
          : "; refuses at once when full");
      s.append(". A refusal ends the call with LIMITED (RateLimitedException)");
    } else if (l instanceof AdaptiveThrottle) {
      AdaptiveThrottle t = (AdaptiveThrottle) l;
      s.append("Adaptive throttle: once the dependency has been refusing, refuses a share of first attempts")
          .append(" here (requests against ").append(number(t.k())).append(" × accepted, over ")
          .append(fmtWait(t.windowNanos())).append("; SHEDDABLE work first), never a retry or a hedge")
          .append(". A refusal ends the call with LIMITED (RateLimitedException, with a Retry-After)");
    } else if (l instanceof AdaptiveLimiter) {
      Limiter.AdaptiveConfig c = ((AdaptiveLimiter) l).config();
      String how;
      switch (c.mode()) {
        case LOSS:
          how = " (loss-based: a failure, timeout or throttled answer multiplies it by " + number(c.backoffRatio())
              + ", a success adds one)";
          break;
        case GRADIENT:
          how = " (latency gradient, tolerance " + number(c.tolerance()) + ")";
          break;
        default:
          how = " (finds the knee: grows while latency holds at its baseline, shrinks once it climbs)";
      }
      s.append("Adaptive limit: between ").append(c.minLimit()).append(" and ").append(c.maxLimit())
          .append(" attempts in flight, starting at ").append(c.initialLimit()).append(how)
          .append("; refuses at once when full. A refusal ends the call with LIMITED (RateLimitedException)");
    } else {
      s.append("Limiter ").append(l.name()).append(": at most ").append(l.limit())
          .append(" at once. A refusal ends the call with LIMITED (RateLimitedException)");
    }
    return s.append(" after the guarded pause, never charged to the budget.").toString();
  }

  private String gatesLine() {
    List<String> g = new ArrayList<>();
    g.add("draining");
    g.add("deadline");
    policy.breaker().ifPresent(b -> g.add("breaker '" + b.name() + "'"));
    for (Limiter l : policy.limiters()) {
      if (l instanceof RateLimiter) {
        g.add("rate limiter");
      }
    }
    for (Limiter l : policy.limiters()) {
      if (!(l instanceof RateLimiter)) {
        g.add(l instanceof ConcurrencyLimiter ? "bulkhead" : "adaptive limit");
      }
    }
    if (budgetBounded && attempts > 1) {
      g.add(hedge != null ? "budget (retries and hedges only)" : "budget (retries only)");
    }
    return "Gates, in order, before every attempt: " + String.join(", ", g) + ".";
  }

  private List<String> worstLines() {
    List<String> out = new ArrayList<>();
    Path h = hedged;
    Path s = sequential;
    if (worst.ending == Ending.UNBOUNDED) {
      out.add("If the attempt hangs: " + describe(worst) + ".");
    } else if (h == null) {
      out.add(lead(worst) + describe(worst) + ".");
    } else {
      out.add(lead(h) + describe(h) + ".");
      if (s != null) {
        List<String> why = new ArrayList<>();
        if (budgetBounded || gateRefuses) {
          why.add((budgetBounded ? "the budget" : "") + (budgetBounded && gateRefuses ? " or " : "")
              + (gateRefuses ? "a gate" : "") + " refuses the first hedge");
        }
        if (allowanceBounded) {
          why.add("the extra load allowed for hedges is spent");
        }
        if (policy.useAmbientCriticality()) {
          why.add("the call is SHEDDABLE");
        }
        out.add("If " + String.join(", or ", why) + ", it retries instead: " + describe(s) + ".");
      }
    }
    return out;
  }

  private String lead(Path p) {
    return !p.allTimeOut ? "Worst case: " : ceiling == NONE ? "If every attempt hangs: " : "If every attempt times out: ";
  }

  /** One path in words: its attempts, then how it ends. */
  private String describe(Path p) {
    if (p.ending == Ending.UNBOUNDED) {
      return "the call never ends";
    }
    StringBuilder s = new StringBuilder();
    List<Step> steps = p.steps;
    int n = steps.size();
    for (int i = 0; i < n; i++) {
      Step st = steps.get(i);
      if (n > SHOWN_STEPS && i >= SHOWN_STEPS - 2 && i < n - 2) {
        if (i == SHOWN_STEPS - 2) {
          s.append(", …"); // the middle of a long path: the first attempts and the last two tell its shape
        }
        continue;
      }
      if (i > 0) {
        s.append(", ");
      }
      if (p.hedgeRefusedAfter > 0 && st.number == p.hedgeRefusedAfter + 1) {
        s.append("the next hedge refused, ");
      }
      s.append(st.hedge ? "hedge #" : "#").append(st.number);
      if (st.gateWait > 0) {
        s.append(" (after ").append(fmt(st.gateWait)).append(" at the limiters)");
      }
      if (st.failsEarly && st.start == st.end) {
        s.append(" fails at once at ").append(fmt(st.start));
      } else {
        s.append(' ').append(span(st.start, st.end)).append(st.failsEarly ? ", failing" : "");
      }
    }
    switch (p.ending) {
      case CUT:
        s.append(", cut by the deadline");
        break;
      case WAIT_CROSSES:
        s.append("; the next wait (").append(fmt(p.lastBackoff)).append(") would end past the deadline, so the call"
            + " ends at once");
        break;
      case BUDGET_REFUSES:
        s.append("; the budget will not fund the next retry: the guarded pause ends the call");
        break;
      case GATE_REFUSES:
        String who = gateRefuses ? budgetBounded && !steps.isEmpty() ? "a gate or the budget" : "a gate" : "the budget";
        s.append(steps.isEmpty() ? who + " refuses the first attempt" : "; " + who + " refuses the next attempt");
        if (p.queued > 0) {
          s.append(" after it queued ").append(fmt(p.queued));
        }
        s.append(": the guarded pause ends the call");
        break;
      case STOPPED:
        s.append("; the call stops there");
        break;
      case BEYOND:
        s.append(", and so on, up to ").append(plural(p.attempts, "attempt")).append(" in all (too many to follow one"
            + " by one: ").append(deadline != NONE && p.nanos == deadline ? "the deadline bounds the call" : "the bound takes every attempt and"
            + " wait at its longest").append("): ").append(p.nanos == NONE ? "" : "at most ").append(fmtLong(p.nanos));
        return s.toString();
      default:
        break;
    }
    s.append(": ").append(fmtLong(p.nanos)).append(", ").append(plural(p.attempts, "attempt"));
    return s.toString();
  }

  private String bottomLine() {
    StringBuilder s = new StringBuilder("Worst call: ");
    if (worst.nanos == NONE) {
      s.append(worst.ending == Ending.UNBOUNDED ? "unbounded (nothing ends an attempt that hangs)"
          : gateWait == NONE ? "unbounded (a limiter may make an attempt wait for ever: there is no deadline)"
          : "unbounded for any purpose (its attempts and waits add up to more than 292 years)");
    } else if (statedWorstNanos() > worst.nanos) {
      s.append(anyAnswers == NONE ? "unbounded when the dependency asks for long waits"
          : "at most " + fmt(anyAnswers) + " when the dependency throttles or asks for waits with Retry-After")
          .append(" (").append(worst.ending == Ending.BEYOND ? "at most " : "").append(fmt(worst.nanos))
          .append(" when every attempt fails or times out)");
    } else {
      s.append(worst.ending == Ending.BEYOND ? "at most " : "").append(fmt(worst.nanos));
    }
    s.append(", and at most ").append(plural(mostAttempts, "attempt")).append(" on the dependency per call")
        .append(mostAttempts > worst.attempts && mostExact ? " (when each fails at once)" : "");
    if (deadline != NONE && worst.nanos < deadline) {
      s.append("; no call outlasts the deadline, whatever the answers");
    } else if (deadline == NONE && attempts > 1 && worst.nanos != NONE) {
      s.append("; answers with a Retry-After can make each wait up to ")
          .append(fmt(Durations.toNanosSaturated(policy.backoffMax)));
    }
    s.append('.');
    RetryBudget b = policy.budget();
    if (attempts > 1) {
      String what = hedge != null ? "retries and hedges" : "retries";
      if (b instanceof TokenBucket) {
        TokenBucket t = (TokenBucket) b;
        s.append(" Across calls: ").append(what).append(" ≤ ").append(number(t.capacity())).append(" + ")
            .append(number(t.fraction())).append(" × successful attempts");
        if (t.minimumPerSecond() > 0) {
          s.append(" + ").append(number(t.minimumPerSecond())).append(" × seconds elapsed");
        }
        s.append('.');
      } else if (b instanceof FeedbackThrottle) {
        s.append(" Across calls: in an outage, ").append(what).append(" stop after ")
            .append(number(((FeedbackThrottle) b).capacity() / 2)).append(" failed attempts.");
      } else if (b instanceof ReplenishingAllowance) {
        ReplenishingAllowance r = (ReplenishingAllowance) b;
        s.append(" Across calls: ").append(what).append(" ≤ ").append(number(r.capacity())).append(" per ")
            .append(fmt(Durations.toNanosSaturated(r.period()))).append('.');
      } else if (b instanceof ConcurrentAllowance) {
        ConcurrentAllowance c = (ConcurrentAllowance) b;
        s.append(" Across calls: ").append(what).append(" in flight ≤ max(").append(c.minimum()).append(", ")
            .append(number(c.percent())).append(" × calls in flight).");
      } else if (b.isUnbounded()) {
        s.append(" Across calls: nothing bounds retries; in an outage every call can make ").append(mostAttempts)
            .append(" attempts, ").append(mostAttempts).append(" times the load.");
      }
    }
    return s.toString();
  }

  // ---------------------------------------------------------------- formatting

  /** A path longer than this shows its first attempts and its last two. */
  private static final int SHOWN_STEPS = 8;

  private static String plural(int n, String word) {
    return n + " " + word + (n == 1 ? "" : "s");
  }

  /** A path's time: {@link #fmt}, but a time that saturated is said to be beyond what a long of nanoseconds holds. */
  private static String fmtLong(long nanos) {
    return nanos == NONE ? "more than 292 years" : fmt(nanos);
  }

  private static String fmtWait(long nanos) {
    return nanos == NONE ? "as long as the deadline allows" : fmt(nanos);
  }

  /** {@code start to end} in one unit, the larger's. */
  private static String span(long start, long end) {
    return rangeWith(start, end, " to ");
  }

  /** A range of waits: {@code 0 to 100 ms}, or one value when both ends agree. */
  private static String range(long least, long most) {
    return least == most ? fmt(most) : rangeWith(least, most, " to ");
  }

  private static String rangeWith(long a, long b, String sep) {
    String[] unit = unit(Math.max(a, b));
    return scaled(a, unit) + sep + scaled(b, unit) + " " + unit[0];
  }

  /** A duration in words: {@code 30 s}, {@code 100 ms}, {@code 1.5 ms}; up to three decimals. */
  static String fmt(long nanos) {
    if (nanos == NONE) {
      return "for ever";
    }
    String[] unit = unit(nanos);
    return scaled(nanos, unit) + " " + unit[0];
  }

  private static String[] unit(long nanos) {
    if (nanos >= 3_600_000_000_000L && nanos % 3_600_000_000_000L == 0) {
      return new String[] {"h", "3600000000000"};
    }
    if (nanos >= 60_000_000_000L && nanos % 60_000_000_000L == 0) {
      return new String[] {"min", "60000000000"};
    }
    if (nanos >= 1_000_000_000L) {
      return new String[] {"s", "1000000000"};
    }
    if (nanos >= 1_000_000L || nanos == 0) {
      return nanos == 0 ? new String[] {"s", "1000000000"} : new String[] {"ms", "1000000"};
    }
    if (nanos >= 1_000L) {
      return new String[] {"µs", "1000"};
    }
    return new String[] {"ns", "1"};
  }

  private static String scaled(long nanos, String[] unit) {
    BigDecimal v = BigDecimal.valueOf(nanos).divide(new BigDecimal(unit[1]), 3, RoundingMode.HALF_UP);
    return plain(v);
  }

  private static String number(double d) {
    return plain(BigDecimal.valueOf(d).setScale(3, RoundingMode.HALF_UP));
  }

  private static String plain(BigDecimal v) {
    String s = v.stripTrailingZeros().toPlainString();
    return s.equals("-0") ? "0" : s;
  }
}
