import dev.quell.Resilience;
import java.util.concurrent.CompletableFuture;

/** Deliberately wrong: async work that blocks before it returns its future. */
class BlockingAsyncWorkSample {
  static final Resilience PRICES = Resilience.DEFAULT.withName("prices");

  CompletableFuture<String> price(CompletableFuture<String> quote) {
    return PRICES.executeAsync(() -> CompletableFuture.completedFuture(quote.join())); // expect: QuellBlockingAsyncWork
  }
}
