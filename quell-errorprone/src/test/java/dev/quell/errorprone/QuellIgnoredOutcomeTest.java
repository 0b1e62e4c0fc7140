package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellIgnoredOutcomeTest {
  private final CompilationTestHelper helper = CompilationTestHelper.newInstance(QuellIgnoredOutcome.class, getClass());

  @Test
  void anIgnoredOutcomeIsReported() {
    helper.addSourceLines("Sender.java", """
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import java.util.concurrent.CompletableFuture;
        class Sender {
          static final Resilience POLICY = Resilience.DEFAULT.withName("mail");
          static final PolicyScope<String> SCOPE = PolicyScope.of(POLICY);
          void send(String message) {
            // BUG: Diagnostic contains: The Outcome of run(...) is ignored
            POLICY.run(() -> deliver(message));
            // BUG: Diagnostic contains: QuellIgnoredOutcome
            SCOPE.run("tenant", () -> deliver(message));
            // BUG: Diagnostic contains: The Outcome of runAsync(...) is ignored
            POLICY.runAsync(attempt -> CompletableFuture.completedFuture(deliver(message)));
            // BUG: Diagnostic contains: QuellIgnoredOutcome
            Runnable later = () -> POLICY.run(() -> deliver(message));
            later.run();
          }
          String deliver(String message) { return message; }
        }
        """).doTest();
  }

  @Test
  void aUsedOutcomeIsNotReported() {
    helper.addSourceLines("Sender.java", """
        import dev.quell.Outcome;
        import dev.quell.Resilience;
        import java.util.concurrent.Callable;
        import java.util.concurrent.CompletableFuture;
        class Sender {
          static final Resilience POLICY = Resilience.DEFAULT.withName("mail");
          boolean send(String message) throws Exception {
            Outcome<String> outcome = POLICY.run(() -> deliver(message));
            CompletableFuture<Outcome<String>> later =
                POLICY.runAsync(attempt -> CompletableFuture.completedFuture(deliver(message)));
            Callable<Outcome<String>> kept = () -> POLICY.run(() -> deliver(message));
            POLICY.execute(() -> deliver(message)); // execute throws: nothing is lost
            var unused = POLICY.run(() -> deliver(message)); // ignored on purpose, and visibly
            return outcome.isSuccess() && POLICY.run(() -> deliver(message)).isSuccess() && later.get().isSuccess()
                && kept.call().isSuccess();
          }
          Outcome<String> own(String message) { return POLICY.run(() -> deliver(message)); }
          void ownIgnored() {
            own("only Quell's own calls are checked");
          }
          @org.junit.jupiter.api.Test
          void aTestRunsForTheEvents() {
            POLICY.run(() -> deliver("the test reads the recorded events instead"));
          }
          String deliver(String message) { return message; }
        }
        """).doTest();
  }

  @Test
  void anOutcomeWaitedForAndThenDroppedIsReported() {
    helper.addSourceLines("Waited.java", """
        import dev.quell.Outcome;
        import dev.quell.Resilience;
        import java.util.concurrent.CompletableFuture;
        class Waited {
          static final Resilience MAIL = Resilience.DEFAULT.withName("mail");
          void send(String user) throws Exception {
            // BUG: Diagnostic contains: The Outcome of runAsync(...).join() is ignored
            MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user)).join();
            // BUG: Diagnostic contains: The Outcome of runAsync(...).get() is ignored
            MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user)).get();
          }
          boolean kept(String user) {
            Outcome<String> sent = MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user)).join();
            CompletableFuture<Outcome<String>> later = MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user));
            return sent.isSuccess() && MAIL.runAsync(attempt -> CompletableFuture.completedFuture(user)).join().isSuccess()
                && later != null;
          }
        }
        """).doTest();
  }
}
