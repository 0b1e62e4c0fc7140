package lookalike;

import dev.quell.Outcome;
import dev.quell.Resilience;
import java.util.concurrent.CompletableFuture;

/** Outcomes that are read, and async work that returns its future at once. */
public class Outcomes {
  private static final Resilience MAIL = Resilience.DEFAULT.withName("mail");
  private static final System.Logger LOG = System.getLogger("mail");

  void notify(String user) {
    Outcome<String> sent = MAIL.run(() -> user);
    if (!sent.isSuccess()) {
      LOG.log(System.Logger.Level.WARNING, "not sent: " + sent);
    }
  }

  boolean waited(String user) {
    return MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user)).join().isSuccess();
  }

  CompletableFuture<Outcome<String>> later(String user) {
    return MAIL.runAsync(attempt -> CompletableFuture.supplyAsync(() -> user));
  }

  void onPurpose(String user) {
    var unused = MAIL.run(() -> user);
  }

  CompletableFuture<String> quote(String sku) {
    return MAIL.executeAsync(() -> CompletableFuture.supplyAsync(() -> CompletableFuture.completedFuture(sku).join()));
  }
}
