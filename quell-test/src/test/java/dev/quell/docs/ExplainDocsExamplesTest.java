package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.Resilience;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The explain() example in docs/policy.md, compiled and run; its output is the text the page shows. */
class ExplainDocsExamplesTest {

  @Test
  void explainInventory() {
    // --- explain ---
    Resilience inventory = Resilience.HTTP
        .withName("inventory")
        .withDeadline(Duration.ofSeconds(2))
        .withAttemptTimeout(Duration.ofMillis(500))
        .withBreaker(CircuitBreaker.Config.DEFAULT)
        .withLimiter(Limiter.concurrency(50))
        .withHedge(Hedge.after(Duration.ofMillis(200)));

    String plan = inventory.explain();
    // --- end ---
    assertThat(plan).isEqualTo("""
        Policy 'inventory': up to 3 attempts per call (the first and up to 2 retries or hedges), within a deadline of 2 s.
        Attempts: each at most 500 ms (the attempt timeout), and never past the deadline.
        Waits: 0 to 100 ms before retry 1 and 0 to 200 ms before retry 2 (exponential backoff, full jitter). After a throttled answer: 0 to 1 s, 0 to 2 s; a Retry-After from the dependency replaces the wait, capped at 30 s and never jittered. A wait that would end past the deadline is not slept: the call ends at once.
        Deadline: 2 s for the whole call, attempts, waits and pauses included; an earlier deadline in the caller's context wins.
        Hedging: after 200 ms without an answer, or at once after a transient failure; up to 1 hedge beside the first attempt, each counted in the 3 attempts and funded by the budget (an unfunded hedge is not sent, and the call goes on as a plain one); a throttled answer stops hedging; once every attempt failed the call ends.
        Budget: this policy's own token bucket: each successful attempt adds 0.1 token, 3 more come each second, at most 30 held; each retry or hedge spends one. A retry it will not fund ends the call with BUDGET_EXHAUSTED (CallRejectedException) after the guarded pause of 100 ms, never past the deadline; it is known before the wait, which is then not slept.
        Breaker 'inventory' (this policy's own): opens when at least 50% of at least 20 attempts in the last 30 s failed; then it refuses every attempt for 2.5 to 5 s (jittered), doubling after each failed probe up to 5 min; half-open, 1 probe at a time, 1 success closes it; traffic ramps back over 10 s. A refusal ends the call with DEPENDENCY_UNAVAILABLE (CallRejectedException, Retry-After: until the next probe) after the guarded pause.
        Bulkhead: at most 50 attempts in flight; refuses at once when full. A refusal ends the call with LIMITED (RateLimitedException) after the guarded pause, never charged to the budget.
        Gates, in order, before every attempt: draining, deadline, breaker 'inventory', bulkhead, budget (retries and hedges only).
        If every attempt times out: #1 0 to 500 ms, hedge #2 200 to 700 ms: 700 ms, 2 attempts.
        If the budget or a gate refuses the first hedge, it retries instead: #1 0 to 500 ms, #2 0.6 to 1.1 s, #3 1.3 to 1.8 s: 1.8 s, 3 attempts.
        Worst call: at most 2 s when the dependency throttles or asks for waits with Retry-After (1.8 s when every attempt fails or times out), and at most 3 attempts on the dependency per call; no call outlasts the deadline, whatever the answers. Across calls: retries and hedges ≤ 30 + 0.1 × successful attempts + 3 × seconds elapsed.""");
  }
}
