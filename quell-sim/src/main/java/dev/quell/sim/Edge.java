package dev.quell.sim;

import dev.quell.Attempt;
import dev.quell.Criticality;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.internal.OutcomeReceiver;
import java.util.Arrays;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One caller-to-target edge while a run goes on: it starts calls through the policy's real
 * asynchronous driver ({@link Resilience#runAsync}) and counts what happens to them.
 */
final class Edge {
  private static final int REASONS = StopReason.values().length;
  private static final int LEVELS = Criticality.values().length;
  /** The core's guarded pause after a refusal (breaker, limiter, budget): 100 ms, less when the deadline is nearer. */
  static final long REFUSAL_PAUSE = 100_000_000L;

  final Engine engine;
  final String from;
  final Node to;
  final Resilience policy;
  private final RetryBudget budget;

  long calls;
  long ended;
  long attempts;
  long firstAttempts;
  long retries;
  long hedges;
  long hedgesWon;
  long refused;
  long refusedByBreaker;
  long limited;
  /** Calls a breaker or limiter refused before their first attempt: they never reached the target. */
  long unsent;
  long succeeded;
  final long[] stops = new long[REASONS];
  final long[] offeredPerSecond;
  final long[] firstPerSecond;
  final long[] retriesPerSecond;
  final long[] hedgesPerSecond;
  final long[] refusedPerSecond;
  final long[] breakerPerSecond;
  final long[] limitedPerSecond;
  final long[] succeededPerSecond;
  final long[][] failedPerSecond;
  final double[] tokensPerSecond;
  final long[] callsPerPhase;
  final long[] succeededPerPhase;
  final long[] attemptsPerPhase;
  final long[] callsPerLevel = new long[LEVELS];
  final long[] succeededPerLevel = new long[LEVELS];
  private final LatencyHistogram latencies = new LatencyHistogram();
  /** The calls that ended in second {@link #latencySecond}; its p99 goes to {@link #p99PerSecond} when it is over. */
  private final LatencyHistogram secondLatencies = new LatencyHistogram();
  private int latencySecond = -1;
  /** p99 of the latency of the calls that ended in each second, in milliseconds; NaN when none ended. */
  final double[] p99PerSecond;

  Edge(Engine engine, String from, Node to, Resilience policy) {
    this.engine = engine;
    this.from = from;
    this.to = to;
    this.policy = policy;
    this.budget = policy.budget();
    int seconds = engine.seconds;
    int phases = engine.phases.size();
    offeredPerSecond = new long[seconds];
    firstPerSecond = new long[seconds];
    retriesPerSecond = new long[seconds];
    hedgesPerSecond = new long[seconds];
    refusedPerSecond = new long[seconds];
    breakerPerSecond = new long[seconds];
    limitedPerSecond = new long[seconds];
    succeededPerSecond = new long[seconds];
    failedPerSecond = new long[REASONS][seconds];
    tokensPerSecond = new double[seconds];
    Arrays.fill(tokensPerSecond, Double.NaN);
    p99PerSecond = new double[seconds];
    Arrays.fill(p99PerSecond, Double.NaN);
    callsPerPhase = new long[phases];
    succeededPerPhase = new long[phases];
    attemptsPerPhase = new long[phases];
  }

  /**
   * Starts one call in {@code context}; {@code then} receives its outcome when it ends. The load's
   * calls start from the event loop, where the engine keeps an empty context open; a service's
   * downstream calls open the context of the request they serve.
   */
  void call(ResilienceContext context, Consumer<Outcome<Object>> then) {
    long now = engine.clock.nanoTime();
    Call c = new Call(this, now, engine.second(now), engine.phases.of(now), context.criticality().ordinal(), then);
    calls++;
    if (c.second < offeredPerSecond.length) {
      offeredPerSecond[c.second]++;
    }
    callsPerPhase[c.phase]++;
    callsPerLevel[c.level]++;
    if (context == ResilienceContext.EMPTY && this == engine.entry) {
      policy.runAsync(c);
    } else {
      ResilienceContext.Scope scope = context.open();
      try {
        policy.runAsync(c);
      } finally {
        scope.close();
      }
    }
    c.returned();
  }

  private CompletionStage<Object> attempt(Call c, Attempt attempt) {
    long now = engine.clock.nanoTime();
    int s = engine.second(now);
    int phase = engine.phases.of(now);
    attempts++;
    attemptsPerPhase[phase]++;
    boolean hedge = attempt.isHedge();
    if (hedge) {
      hedges++;
      if (s < hedgesPerSecond.length) {
        hedgesPerSecond[s]++;
      }
    } else if (attempt.number() == 1) {
      firstAttempts++;
      if (s < firstPerSecond.length) {
        firstPerSecond[s]++;
      }
    } else {
      retries++;
      if (s < retriesPerSecond.length) {
        retriesPerSecond[s]++;
      }
    }
    Reply reply = new Reply(c, hedge);
    to.submit(reply, s, phase);
    return reply;
  }

  private void ended(Call c, Outcome<Object> o, long elapsedNanos) {
    ended++;
    StopReason reason = o.stopReason();
    stops[reason.ordinal()]++;
    boolean inSeries = c.second < succeededPerSecond.length;
    if (reason == StopReason.SUCCEEDED) {
      succeeded++;
      succeededPerPhase[c.phase]++;
      succeededPerLevel[c.level]++;
      if (inSeries) {
        succeededPerSecond[c.second]++;
      }
    } else if (inSeries) {
      failedPerSecond[reason.ordinal()][c.second]++;
    }
    if (reason == StopReason.BUDGET_EXHAUSTED) {
      // the refusal happened when the last attempt ended; the outcome arrives after the guarded pause
      refused++;
      int s = engine.second(c.lastAttemptEnded);
      if (s < refusedPerSecond.length) {
        refusedPerSecond[s]++;
      }
    } else if (reason == StopReason.DEPENDENCY_UNAVAILABLE || reason == StopReason.LIMITED) {
      // a breaker or a limiter refused the attempt about to start: the first, or a retry after its
      // backoff. The outcome arrives after the guarded pause, which only the deadline shortens, so the
      // refusal was a pause earlier (or, when the deadline cut the pause, less: never before the call
      // started or its last attempt ended)
      long end = engine.clock.nanoTime();
      int s = engine.second(Math.max(Math.max(c.started, c.lastAttemptEnded), end - REFUSAL_PAUSE));
      if (o.attempts() == 0) {
        unsent++;
      }
      if (reason == StopReason.DEPENDENCY_UNAVAILABLE) {
        refusedByBreaker++;
        if (s < breakerPerSecond.length) {
          breakerPerSecond[s]++;
        }
      } else {
        limited++;
        if (s < limitedPerSecond.length) {
          limitedPerSecond[s]++;
        }
      }
    }
    latencies.record(elapsedNanos);
    CallLog log = engine.callLog;
    if (log != null && this == engine.entry) {
      log.ended(c.started, elapsedNanos, reason);
    }
    // by the second the call ended in, as a dashboard's latency panel shows it; calls end in the
    // clock's order, so each second is complete once a call ends in a later one
    int endedIn = engine.second(engine.clock.nanoTime());
    if (endedIn != latencySecond) {
      closeLatencySecond();
      latencySecond = endedIn;
    }
    secondLatencies.record(elapsedNanos);
  }

  private void closeLatencySecond() {
    if (latencySecond >= 0 && latencySecond < p99PerSecond.length && secondLatencies.total() > 0) {
      p99PerSecond[latencySecond] = secondLatencies.p99Nanos() / 1e6;
    }
    secondLatencies.reset();
    latencySecond = -1;
  }

  /** Records the budget's balance at the end of second {@code s}. */
  void sample(int s) {
    tokensPerSecond[s] = budget.isUnbounded() ? Double.NaN : budget.tokens();
  }

  EdgeReport report() {
    closeLatencySecond();
    return new EdgeReport(this, latencies.quantiles());
  }

  /**
   * One call on this edge: the work the policy runs for each attempt, and the receiver of its
   * outcome (one object per call, instead of a lambda for each role). The outcome comes straight
   * from the driver ({@link OutcomeReceiver}), not through a stage hung on the caller's future, and
   * is taken at the moment such a stage would have run: when the future completes, or, for a call
   * that ended before {@code runAsync} returned, once it has.
   */
  static final class Call implements Resilience.AsyncWork<Object>, OutcomeReceiver {
    final Edge edge;
    final long started;
    final int second;
    final int phase;
    final int level;
    private final Consumer<Outcome<Object>> then;
    long lastAttemptEnded;
    /** True once {@code runAsync} has returned. */
    private boolean returned;
    /** The outcome of a call that ended before {@code runAsync} returned, held until it has. */
    private @Nullable Outcome<Object> early;

    Call(Edge edge, long started, int second, int phase, int level, Consumer<Outcome<Object>> then) {
      this.edge = edge;
      this.started = started;
      this.second = second;
      this.phase = phase;
      this.level = level;
      this.then = then;
    }

    @Override
    public CompletionStage<Object> start(Attempt attempt) {
      return edge.attempt(this, attempt);
    }

    @Override
    @SuppressWarnings("unchecked") // the outcome of this work, whose values are Objects
    public void callEnded(Outcome<?> outcome, long elapsedNanos) {
      if (!returned) {
        early = (Outcome<Object>) outcome; // rare: its elapsed time is read back from it
        return;
      }
      end((Outcome<Object>) outcome, elapsedNanos);
    }

    /** {@code runAsync} returned: an outcome that came before may be taken now. */
    void returned() {
      returned = true;
      Outcome<Object> o = early;
      if (o != null) {
        early = null;
        end(o, o.elapsed().toNanos());
      }
    }

    private void end(Outcome<Object> o, long elapsedNanos) {
      try {
        edge.ended(this, o, elapsedNanos);
        then.accept(o);
      } catch (RuntimeException | Error e) {
        edge.engine.failed(e);
      }
    }
  }
}
