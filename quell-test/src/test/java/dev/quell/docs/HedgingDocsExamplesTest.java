package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Hedge;
import dev.quell.MeasuredTiming;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Every Java example in docs/hedging.md, compiled and run. */
class HedgingDocsExamplesTest {

  // --- catalog ---
  static final Resilience CATALOG = Resilience.HTTP
      .withName("catalog")
      .withHedge(Hedge.maxExtraLoad(0.05));          // hedge at the live p95: about 5% more attempts
  // --- end ---

  @Test
  void theCatalogPolicyHedgesAtAMeasuredDelay() {
    assertThat(CATALOG.hedge()).isPresent();
    assertThat(CATALOG.hedge().orElseThrow().maxExtraLoad()).hasValue(0.05);
  }

  @Test
  void fixedDelay() {
    // --- fixed ---
    Resilience search = Resilience.DEFAULT
        .withName("search")
        .withAttempts(3)                                           // every hedge is an attempt
        .withHedge(Hedge.after(Duration.ofMillis(40)).withMaxHedges(2));
    // --- end ---
    assertThat(search.hedge().orElseThrow().maxHedges()).isEqualTo(2);
  }

  @Test
  void dashboards() throws Exception {
    VirtualTime time = VirtualTime.create();
    Resilience catalog = CATALOG.withTimeSource(time).withBudget(RetryBudget.NONE);
    for (int i = 0; i < 60; i++) {
      catalog.execute(() -> {
        time.sleep(Duration.ofMillis(30));
        return "ok";
      });
    }
    // --- stats ---
    MeasuredTiming.Stats stats = catalog.timing().orElseThrow();
    Duration p95 = stats.p95().orElseThrow();                  // the live 95th percentile
    Duration hedgeDelay = stats.hedgeDelay().orElseThrow();    // when the next hedge would go out
    // --- end ---
    assertThat(p95.toMillis()).isBetween(30L, 34L);
    assertThat(hedgeDelay).isEqualTo(p95);
  }

  @Test
  void discardHook() {
    AtomicInteger closed = new AtomicInteger();
    // --- discard ---
    Resilience streams = Resilience.HTTP
        .withHedge(Hedge.after(Duration.ofMillis(50)))
        .withDiscard(unseen -> {
          if (unseen instanceof HttpResponse<?> response && response.body() instanceof InputStream body) {
            try {
              body.close();                                        // a loser's body: give its connection back
            } catch (java.io.IOException ignored) {
              // nothing more to do
            }
          }
        });
    // --- end ---
    VirtualTime time = VirtualTime.create();
    AtomicInteger n = new AtomicInteger();
    CompletableFuture<String> loser = new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterrupt) {
        return false;
      }
    };
    CompletableFuture<String> call = streams.withTimeSource(time).withBudget(RetryBudget.NONE)
        .withDiscard(v -> closed.incrementAndGet())
        .executeAsync(() -> n.getAndIncrement() == 0 ? loser : CompletableFuture.completedFuture("winner"));
    time.advance(Duration.ofMillis(50));
    assertThat(call.join()).isEqualTo("winner");
    loser.complete("late");
    assertThat(closed).hasValue(1);
  }

  @Test
  void outcomeCountsEveryAttempt() {
    VirtualTime time = VirtualTime.create();
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withHedge(Hedge.after(Duration.ofMillis(10)));
    AtomicInteger n = new AtomicInteger();
    CompletableFuture<Outcome<String>> f = p.runAsync(a -> {
      CompletableFuture<String> answer = new CompletableFuture<>();
      time.schedule(() -> answer.complete("#" + a.number()), (n.getAndIncrement() == 0 ? 100 : 5) * 1_000_000L);
      return answer;
    });
    time.runUntilIdle(Duration.ofSeconds(1));
    Outcome<String> o = f.join();
    assertThat(o.stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(o.value()).isEqualTo("#2");
    assertThat(o.attempts()).isEqualTo(2);
  }
}
