package dev.quell.sim;

import dev.quell.Attempt;
import dev.quell.Criticality;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
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
  long refused;
  long succeeded;
  final long[] stops = new long[REASONS];
  final long[] offeredPerSecond;
  final long[] firstPerSecond;
  final long[] retriesPerSecond;
  final long[] refusedPerSecond;
  final long[] succeededPerSecond;
  final long[][] failedPerSecond;
  final double[] tokensPerSecond;
  final long[] callsPerPhase;
  final long[] succeededPerPhase;
  final long[] attemptsPerPhase;
  final long[] callsPerLevel = new long[LEVELS];
  final long[] succeededPerLevel = new long[LEVELS];
  private final LatencyHistogram latencies = new LatencyHistogram();

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
    refusedPerSecond = new long[seconds];
    succeededPerSecond = new long[seconds];
    failedPerSecond = new long[REASONS][seconds];
    tokensPerSecond = new double[seconds];
    Arrays.fill(tokensPerSecond, Double.NaN);
    callsPerPhase = new long[phases];
    succeededPerPhase = new long[phases];
    attemptsPerPhase = new long[phases];
  }

  /** Starts one call in {@code context}; {@code then} receives its outcome when it ends. */
  void call(ResilienceContext context, Consumer<Outcome<Object>> then) {
    long now = engine.clock.nanoTime();
    Call c = new Call(engine.second(now), engine.phases.of(now), context.criticality().ordinal());
    calls++;
    if (c.second < offeredPerSecond.length) {
      offeredPerSecond[c.second]++;
    }
    callsPerPhase[c.phase]++;
    callsPerLevel[c.level]++;
    CompletableFuture<Outcome<Object>> outcome;
    // always open a context, even an empty one: the calls must never see a context of the thread that
    // started the simulation (its deadline would be on the real clock)
    ResilienceContext.Scope scope = context.open();
    try {
      outcome = policy.runAsync(attempt -> attempt(c, attempt));
    } finally {
      scope.close();
    }
    outcome.whenComplete((o, failure) -> {
      try {
        if (o == null) {
          throw new IllegalStateException("a simulated call ended without an outcome", failure);
        }
        ended(c, o);
        then.accept(o);
      } catch (RuntimeException | Error e) {
        engine.failed(e);
      }
    });
  }

  private CompletionStage<Object> attempt(Call c, Attempt attempt) {
    long now = engine.clock.nanoTime();
    int s = engine.second(now);
    attempts++;
    attemptsPerPhase[engine.phases.of(now)]++;
    if (attempt.number() == 1) {
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
    Reply reply = new Reply(c);
    to.submit(reply);
    return reply;
  }

  private void ended(Call c, Outcome<Object> o) {
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
    }
    latencies.record(o.elapsed().toNanos());
  }

  /** Records the budget's balance at the end of second {@code s}. */
  void sample(int s) {
    tokensPerSecond[s] = budget.isUnbounded() ? Double.NaN : budget.tokens();
  }

  EdgeReport report() {
    return new EdgeReport(this, latencies.quantiles());
  }

  /**
   * The future of one attempt. It notes when the attempt ended, by its answer or by the policy
   * abandoning it (an attempt timeout cancels it), without a dependent stage per attempt.
   */
  private final class Reply extends CompletableFuture<Object> {
    private final Call call;

    Reply(Call call) {
      this.call = call;
    }

    @Override
    public boolean complete(@Nullable Object value) {
      call.lastAttemptEnded = engine.clock.nanoTime();
      return super.complete(value);
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
      call.lastAttemptEnded = engine.clock.nanoTime();
      return super.completeExceptionally(failure);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      call.lastAttemptEnded = engine.clock.nanoTime();
      return super.cancel(mayInterruptIfRunning);
    }
  }

  /** One call on this edge. */
  private static final class Call {
    final int second;
    final int phase;
    final int level;
    long lastAttemptEnded;

    Call(int second, int phase, int level) {
      this.second = second;
      this.phase = phase;
      this.level = level;
    }
  }
}
