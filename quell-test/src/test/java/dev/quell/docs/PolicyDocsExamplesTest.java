package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Attempt;
import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Classifier;
import dev.quell.DeadlineExceededException;
import dev.quell.Jitter;
import dev.quell.MeasuredTiming;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.Verdict;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Every Java example in docs/policy.md, compiled and run. */
class PolicyDocsExamplesTest {

  // --- measured timing ---
  static final Resilience PRICING = Resilience.DEFAULT
      .withName("pricing")
      .withAttemptTimeout(Duration.ofSeconds(2))                 // the loosest it may be
      .withMeasuredTiming(MeasuredTiming.multipleOfP95(3)         // 3 × the live p95 ...
          .withFloor(Duration.ofMillis(50)));                    // ... but never under 50 ms
  // --- end ---

  @Test
  void measuredTimingStartsFromTheConfiguredTimeout() {
    assertThat(PRICING.timing().orElseThrow().attemptCeiling()).contains(Duration.ofSeconds(2));
    assertThat(PRICING.measuredTiming().orElseThrow().floor()).isEqualTo(Duration.ofMillis(50));
  }

  static final class Stock {}

  static final class Inventory {
    Stock lookup(String sku) {
      return new Stock();
    }

    Stock lookup(String sku, Duration timeout) {
      return new Stock();
    }

    CompletionStage<Stock> lookupAsync(String sku) {
      return CompletableFuture.completedFuture(new Stock());
    }
  }

  static final class StaleReadException extends RuntimeException {
    private static final long serialVersionUID = 1L;
  }

  static final class Reply {
    boolean busy() {
      return false;
    }
  }

  private final Inventory inventory = new Inventory();
  private final String sku = "sku-1";

  @Test
  void building() {
    // --- building ---
    Resilience inventoryPolicy = Resilience.DEFAULT
        .withName("inventory")
        .withAttempts(4)                                  // 4 in total: the first and 3 retries
        .withDeadline(Duration.ofSeconds(2))
        .withAttemptTimeout(Duration.ofMillis(500))
        .withBackoff(Backoff.exponential(Duration.ofMillis(50)));
    // --- end ---
    // --- with ---
    Resilience payments = Resilience.DEFAULT.with(s -> s
        .name("payments")
        .attempts(2)
        .deadline(Duration.ofSeconds(1))
        .attemptTimeout(Duration.ofMillis(300)));
    // --- end ---
    assertThat(inventoryPolicy.attempts()).isEqualTo(4);
    assertThat(payments.attemptTimeout()).contains(Duration.ofMillis(300));
  }

  @Test
  void classifiers() {
    // --- classifier ---
    Classifier classifier = Classifier.rules()
        .permanentOn(IllegalArgumentException.class)
        .transientOn(StaleReadException.class)
        .onResult(r -> r instanceof Reply && ((Reply) r).busy(), Verdict.TRANSIENT)
        .otherwise(Classifier.DEFAULT);
    // --- end ---
    assertThat(classifier.classify(null, new StaleReadException())).isEqualTo(Verdict.TRANSIENT);
    assertThat(classifier.classify(null, new IllegalArgumentException())).isEqualTo(Verdict.PERMANENT);
    assertThat(classifier.classify(new Reply(), null)).isEqualTo(Verdict.OK);
  }

  @Test
  void backoffs() {
    // --- backoff ---
    Backoff standard = Backoff.exponential();                          // 100 ms, ×2, max 30 s, full jitter
    Backoff quick = Backoff.exponential(Duration.ofMillis(20)).withMax(Duration.ofSeconds(1));
    Backoff steady = Backoff.exponential().withJitter(Jitter.EQUAL);
    Backoff fixed = Backoff.constant(Duration.ofMillis(250));
    Backoff linear = Backoff.of((retry, verdict) -> Duration.ofMillis(100L * retry));
    // --- end ---
    assertThat(standard.max()).isEqualTo(Duration.ofSeconds(30));
    assertThat(quick.max()).isEqualTo(Duration.ofSeconds(1));
    assertThat(steady).isNotEqualTo(standard);
    assertThat(fixed).isNotEqualTo(linear);
  }

  @Test
  void running() throws Exception {
    VirtualTime time = VirtualTime.create();
    Resilience policy = Resilience.DEFAULT.withName("inventory").withTimeSource(time);
    // --- running ---
    Stock stock = policy.execute(() -> inventory.lookup(sku));         // value, or throws

    Outcome<Stock> outcome = policy.run(() -> inventory.lookup(sku));  // never throws for failures
    switch (outcome.stopReason()) {
      case SUCCEEDED:
        break;
      case BUDGET_EXHAUSTED:
      case DEADLINE_EXCEEDED:
        // the dependency is struggling: fall back
        break;
      default:
        // PERMANENT, ATTEMPTS_EXHAUSTED, ...: outcome.failure() says what went wrong
    }

    CompletableFuture<Stock> later = policy.executeAsync(() -> inventory.lookupAsync(sku));

    Stock bounded = policy.execute((Attempt attempt) ->
        inventory.lookup(sku, attempt.timeout()));                     // pass the time left downstream
    // --- end ---
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(stock).isNotNull();
    assertThat(later).isDone();
    assertThat(bounded).isNotNull();
  }

  @Test
  void exceptions() {
    VirtualTime time = VirtualTime.create();
    Resilience policy = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.of(0.1, 0, time));
    policy.budget().trySpend();
    String result;
    // --- exceptions ---
    try {
      result = policy.execute(() -> { throw new IOException("down"); });
    } catch (CallRejectedException e) {
      result = "fallback";      // the budget (or a breaker, or a limiter) refused; e.retryAfter() may say when
    } catch (DeadlineExceededException e) {
      result = "too late";
    } catch (Exception e) {
      result = "failed";        // your own exception, rethrown unchanged
    }
    // --- end ---
    assertThat(result).isEqualTo("fallback");
  }

  @Test
  void listening() {
    // --- listener ---
    Resilience observed = Resilience.DEFAULT.withListener(event -> {
      if (event.type() == ResilienceEvent.Type.REJECTED_BY_BUDGET) {
        System.getLogger("inventory").log(System.Logger.Level.WARNING, "retry refused: " + event);
      }
    });
    // --- end ---
    assertThat(observed.listeners()).hasSize(1);
  }
}
