package dev.quell;

import dev.quell.Limiter.AdaptiveConfig;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

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

  // KNEE mode only: the window being filled (lock-free), and the controller, which only the thread
  // that closed a window runs (it holds {@link #closing})
  private final @org.jspecify.annotations.Nullable KneeWindow knee;

  AdaptiveLimiter(String name, AdaptiveConfig config) {
    this.name = name;
    this.config = config;
    this.minMilli = config.minLimit() * MILLI;
    this.maxMilli = config.maxLimit() * MILLI;
    this.state = new AtomicLong(pack(config.initialLimit() * MILLI, 0));
    this.knee = config.mode() == AdaptiveConfig.Mode.KNEE ? new KneeWindow() : null;
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
    releasePermit(how, sampleInFlight, 0, rttNanos);
  }

  /**
   * As {@link #releasePermit(int, int, long)}, for an attempt admitted in KNEE mode's
   * {@code epoch} (the number of decreases before it was admitted).
   */
  void releasePermit(int how, int sampleInFlight, int epoch, long rttNanos) {
    KneeWindow k = knee;
    if (k != null) {
      decrementInFlight();
      k.sample(how, sampleInFlight, epoch, rttNanos);
      return;
    }
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

  private void decrementInFlight() {
    while (true) {
      long s = state.get();
      int inFlight = inFlightOf(s);
      if (inFlight == 0) {
        return; // more releases than admissions: a core bug; never go negative
      }
      if (state.compareAndSet(s, s - 1)) {
        return;
      }
    }
  }

  /** Sets the limit, leaving attempts in flight as they are. */
  private void setLimit(long limitMilli) {
    while (true) {
      long s = state.get();
      if (state.compareAndSet(s, pack(limitMilli, inFlightOf(s)))) {
        return;
      }
    }
  }

  /** KNEE mode: the epoch an attempt admitted now belongs to. */
  int epoch() {
    KneeWindow k = knee;
    return k == null ? 0 : k.epoch;
  }

  /** KNEE mode: the latency the limiter takes for an uncongested dependency's, in nanoseconds; NaN before it has one. */
  double baselineNanos() {
    KneeWindow k = knee;
    return k == null || k.baseline <= 0 ? Double.NaN : k.baseline * KneeWindow.UNIT;
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
        marks[index] = ((long) epoch() << 32) | inFlight;
      }
      return true;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      long[] marks = attempt.marks;
      long mark = marks != null && index < marks.length ? marks[index] : ((long) epoch() << 32) | inFlight();
      releasePermit(how, (int) mark, (int) (mark >>> 32), now - attempt.startNanos);
    }

    @Override
    public String toString() {
      return AdaptiveLimiter.this.toString();
    }
  }

  /**
   * KNEE mode's measurements and controller. Each ended attempt is one sample: its latency, or
   * "too slow to count" for a timeout, a failure or a throttled answer. Samples fill a log-scale
   * histogram of atomic counters (4.4% wide buckets) until a window holds enough of them; the thread
   * whose sample closed the window takes the window's 10th percentile and moves the limit:
   *
   * <ul>
   *   <li>The 10th percentile, not a mean or a minimum: queueing delays every attempt alike, so it
   *       shows in a low percentile first and most clearly, while slow outliers, a minority of
   *       timeouts and failures, and the bias toward the fast attempts of a window that just closed
   *       (the slow ones have not ended yet) barely move it.
   *   <li>The baseline is a low percentile of the last windows' percentiles (so it sees the windows
   *       after a decrease, below the knee), raised by the bias their noise gives a low percentile. It
   *       only falls by itself, so it cannot creep up with the windows of a limit that sits at the
   *       knee. Only windows that used the limit teach it, so a quiet spell's health checks do not. A
   *       burst of cheap calls under load, or a dependency that became slower for good, are found
   *       the same way: the limit came down twice and latency did not, over at least
   *       {@link #REBASE_SAMPLES} attempts, so latency is not queueing, and the baseline is taken
   *       afresh from the window at hand.
   *   <li>Latency within {@link #GROW} of the baseline (plus the window's noise) and the limit in
   *       use (half of it in flight): the limit grows, by half until the first congestion, then by
   *       its square root, and by one near where latency last rose. Above {@link #TOLERANCE} (plus
   *       2.5 times the noise): it shrinks in proportion, by at least {@code backoffRatio} and at
   *       most half, unless latency is already falling since the last decrease. A window mostly
   *       lost halves it; an explicit throttling answer shrinks it by {@code backoffRatio}. In
   *       between, it holds.
   *   <li>Losses are a signal of their own: a window whose share of timeouts and failures rises
   *       above the share its windows usually lose (a low percentile of theirs, plus 2% and three
   *       times the chance a window of its size strays) shrinks the limit by as much as the share
   *       answered in time fell, even while the answered attempts are still fast. With timeouts
   *       near the latency itself, and the work of timed-out attempts still at the dependency, this
   *       is the first sign of the cliff past which almost everything times out.
   *   <li>A run of decreases (a congested window, then the windows of the queue it left draining)
   *       is one congestion: the limit to probe gently near is where the run began, not the lower
   *       limits it passed through, which would let the limit grow quickly past the knee again.
   *   <li>After a decrease, attempts admitted before it are not sampled (they measure the load of
   *       the old limit): one overload costs one decrease, never a collapse to the minimum while the
   *       timeouts of what was already sent come in.
   *   <li>Cancelled and never-started attempts are not samples at all.
   * </ul>
   */
  private final class KneeWindow {
    /** Latencies are counted in units of 1024 ns (about a microsecond). */
    static final long UNIT = 1024;
    static final int SUB = 16;
    static final int BUCKETS = 44 * SUB;
    /** The bucket of attempts that did not answer in time or failed. */
    static final int LOST = BUCKETS - 1;
    static final double TOLERANCE = 1.25;
    static final double GROW = 1.1;
    /** How far above its usual share (beyond chance) a window's losses must rise to count as congestion. */
    static final double LOSS_MARGIN = 0.02;
    static final int MIN_SAMPLES = 40;
    static final int MAX_SAMPLES = 2000;
    /**
     * How many attempts the decreases that did not help must span before the baseline is taken
     * afresh: enough to know a 10th percentile within about 2.5% at the spread of common latency.
     */
    static final int REBASE_SAMPLES = 800;
    /** How many windows the baseline remembers. */
    static final int HISTORY = 64;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final AtomicInteger filled = new AtomicInteger();
    private final AtomicInteger inUse = new AtomicInteger();
    private final AtomicInteger throttled = new AtomicInteger();
    private final AtomicInteger closing = new AtomicInteger();
    volatile int epoch;
    /** The fewest samples a window needs to tell its 10th percentile apart from noise; set by the closer. */
    volatile int size = MIN_SAMPLES;
    private final long[] scratch = new long[BUCKETS];

    // the controller: read and written only by the thread holding closing
    /** The baseline latency, in units; 0 before the first window. */
    double baseline;
    private final double[] history = new double[HISTORY];
    private final double[] sorted = new double[HISTORY];
    private final double[] lossHistory = new double[HISTORY];
    private int windows;
    private double decreasedAt = -1;
    /** The limit at the last decrease; -1 before the first (while it grows by half each window). */
    private double congestedAt = -1;
    private int unanswered;
    /** The attempts in the windows counted by {@link #unanswered}. */
    private long unansweredSamples;
    /** Windows in a row that held the limit (latency between growing and shrinking). */
    private int held;
    /** Whether the last window that moved the limit brought it down (a run of decreases is one congestion). */
    private boolean streak;

    void sample(int how, int inFlightAtAdmission, int admittedIn, long rttNanos) {
      if (how == Gate.CANCELLED || how == Gate.NOT_STARTED || admittedIn != epoch) {
        return;
      }
      int bucket = isLoss(how) ? LOST : bucketOf(Math.max(1, rttNanos / UNIT));
      if (how == Gate.THROTTLED) {
        throttled.incrementAndGet();
      }
      long limitMilli = limitMilliOf(state.get());
      if ((long) inFlightAtAdmission * 2 * MILLI >= limitMilli) {
        inUse.incrementAndGet();
      }
      counts.incrementAndGet(bucket);
      int n = filled.incrementAndGet();
      int windowSize = (int) Math.max(size, Math.min(MAX_SAMPLES, 2 * limitMilli / MILLI));
      if (n >= windowSize && closing.compareAndSet(0, 1)) {
        try {
          close(limitMilli);
        } finally {
          closing.set(0);
        }
      }
    }

    private void close(long limitMilli) {
      int n = filled.getAndSet(0);
      int used = inUse.getAndSet(0);
      int throttles = throttled.getAndSet(0);
      long total = 0;
      long[] window = scratch;
      for (int b = 0; b < BUCKETS; b++) {
        long c = counts.getAndSet(b, 0);
        window[b] = c;
        total += c;
      }
      if (total == 0) {
        return;
      }
      double q = quantile(window, total, 0.10);
      // the next window is as long as it takes to know the 10th percentile within about 4%: a
      // lognormal's spread (from the median's distance to it) sets how many samples that needs
      double median = quantile(window, total, 0.5);
      double spread = 0.5;
      if (median < LOST - 1) {
        spread = Math.log(valueOf(median) / valueOf(q)) / 1.2816;
        size = (int) Math.min(MAX_SAMPLES, Math.max(MIN_SAMPLES, Math.min(1850 * spread * spread,
            8 * limitMilli / MILLI)));
      }
      double limit = limitMilli / (double) MILLI;
      if (q >= LOST - 1) {
        // most of the window was lost: no latency to learn from, only a sign of overload
        decreasedAt = -1;
        unanswered = 0;
        unansweredSamples = 0;
        congested(limit);
        move(limitMilli, limit * 0.5);
        return;
      }
      boolean busy = used * 2 >= n;
      if (busy || windows == 0) {
        // only a window that used the limit teaches the baseline: a quiet spell's health checks do not
        history[windows % HISTORY] = q;
        lossHistory[windows % HISTORY] = window[LOST] / (double) total;
        windows++;
      }
      int kept = Math.min(windows, HISTORY);
      System.arraycopy(history, 0, sorted, 0, kept);
      java.util.Arrays.sort(sorted, 0, kept);
      // how far this window's percentile may stray by chance (a lognormal's spread over n samples):
      // the thresholds widen by it, so noise neither grows nor shrinks the limit
      double noise = 1.71 * spread / Math.sqrt(total);
      double tolerance = TOLERANCE + 2.5 * noise;
      double grow = GROW + noise;
      // the baseline: a low percentile of the windows' percentiles (it sees the windows after a
      // decrease, below the knee), raised by the bias noise gives a low percentile; and it only ever
      // falls by itself: a baseline that rose with the windows of a limit sitting at the knee would let
      // the limit creep up with them (the drift Uber's Cinnamon fought); it rises only by a rebase
      double candidate = valueOf(sorted[kept / 10]) * (1 + 1.28 * noise);
      double base = baseline <= 0 ? candidate : busy ? Math.min(baseline, candidate) : baseline;
      baseline = base;
      double next = limit;
      double ratio = valueOf(q) / base;
      // the share of the window lost (timed out or failed) against the share usually lost (a low
      // percentile of the windows' shares): past a cliff, as when timeouts are short and the work of
      // timed-out attempts stays at the dependency, more time out before the fast attempts slow down
      System.arraycopy(lossHistory, 0, sorted, 0, kept);
      java.util.Arrays.sort(sorted, 0, kept);
      double usualLoss = sorted[kept / 4];
      double lossShare = window[LOST] / (double) total;
      boolean losing = busy && lossShare > usualLoss + LOSS_MARGIN
          + 3 * Math.sqrt(Math.max(usualLoss, 0.01) * (1 - usualLoss) / total);
      double shrink = Math.min(config.backoffRatio(), tolerance / ratio);
      if (losing) {
        // shrink as much as the share answered in time fell
        shrink = Math.min(shrink, (1 - lossShare) / Math.max(0.01, 1 - usualLoss));
      }
      if (throttles > 0) {
        next = limit * config.backoffRatio();
        decreasedAt = q;
        congestedAt = limit;
      } else if (ratio > tolerance || losing) {
        if (decreasedAt >= 0 && q < decreasedAt - 1) {
          return; // latency is falling since the last decrease: let the queue drain before judging again
        }
        if (decreasedAt >= 0 && ratio > tolerance) {
          unansweredSamples += total;
        }
        if (decreasedAt >= 0 && ratio > tolerance && ++unanswered >= 2 && unansweredSamples >= REBASE_SAMPLES) {
          // twice down and latency stayed, over enough attempts that chance cannot explain it: it is not
          // our queueing; take this window as the baseline. Enough attempts, and not just two windows:
          // a client with a small share of a dependency others load has small windows, and its own
          // decreases barely move the latency it sees; taking that latency as its baseline would let
          // it grow into the others' queue, and them into its
          rebase(q);
          return;
        }
        next = limit * Math.max(0.5, shrink);
        decreasedAt = q;
        congested(limit);
      } else if (ratio > grow) {
        streak = false;
        // between growing and shrinking: hold, and keep counting decreases that did not help (noise
        // around the threshold must not hide a dependency that became slower for good)
        held++;
      } else {
        streak = false;
        unanswered = 0;
        unansweredSamples = 0;
        decreasedAt = -1;
        held = 0;
        if (ratio <= grow && busy) {
          if (congestedAt < 0) {
            next = limit * 1.5; // no congestion seen yet: find the knee quickly
          } else if (limit >= 0.85 * congestedAt && limit <= 1.05 * congestedAt) {
            next = limit + 1; // near where latency rose last time: probe gently
          } else {
            next = limit + Math.max(1, Math.sqrt(limit));
          }
        }
      }
      move(limitMilli, next);
    }

    /**
     * Remembers where congestion began: the limit of the first of a run of decreases, not the lower
     * limits the run passes through while the queue it built drains (they would make the limit grow
     * quickly past the knee again).
     */
    private void congested(double limit) {
      if (!streak) {
        congestedAt = limit;
      }
      streak = true;
    }

    /** Takes the window percentile {@code q} as the baseline, forgetting the windows before it. */
    private void rebase(double q) {
      java.util.Arrays.fill(history, 0);
      history[0] = q;
      windows = 1;
      baseline = valueOf(q);
      congestedAt = -1; // a new baseline, a new knee: find it quickly again
      streak = false;
      unanswered = 0;
      unansweredSamples = 0;
      held = 0;
      decreasedAt = -1;
    }

    /** Sets the limit to {@code next} (clamped); a decrease starts a new epoch. */
    private void move(long limitMilli, double next) {
      long nextMilli = Math.max(minMilli, Math.min(maxMilli, (long) (next * MILLI)));
      if (nextMilli < limitMilli) {
        epoch++;
      }
      if (nextMilli != limitMilli) {
        setLimit(nextMilli);
      }
    }

    /** The bucket of a latency of {@code v} units: exact below 16, then 16 buckets to each doubling. */
    static int bucketOf(long v) {
      if (v < SUB) {
        return (int) v;
      }
      int e = 63 - Long.numberOfLeadingZeros(v); // 2^e <= v < 2^(e+1), e >= 4
      int b = (e - 3) * SUB + (int) ((v >>> (e - 4)) & (SUB - 1));
      return Math.min(LOST - 1, b);
    }

    /** The latency, in units, at fractional bucket index {@code b} (linear within a bucket). */
    static double valueOf(double b) {
      if (b < SUB) {
        return Math.max(1, b);
      }
      int i = (int) b;
      int e = i / SUB + 3;
      int m = i % SUB;
      double low = (double) (1L << e) * (1 + m / (double) SUB);
      double width = (double) (1L << e) / SUB;
      return low + (b - i) * width;
    }

    /** The fractional bucket index below which {@code p} of the window's samples lie. */
    static double quantile(long[] window, long total, double p) {
      double rank = p * total;
      long seen = 0;
      for (int b = 0; b < window.length; b++) {
        if (window[b] > 0 && seen + window[b] >= rank) {
          return b + (rank - seen) / window[b];
        }
        seen += window[b];
      }
      return window.length - 1;
    }
  }
}
