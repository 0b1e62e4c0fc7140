package dev.quell.test;

import static dev.quell.ResilienceEvent.Type.ATTEMPT_ENDED;
import static dev.quell.ResilienceEvent.Type.ATTEMPT_STARTED;
import static dev.quell.ResilienceEvent.Type.REJECTED_BY_BUDGET;
import static dev.quell.ResilienceEvent.Type.RETRYING;
import static dev.quell.ResilienceEvent.Type.SUCCEEDED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.AttemptTimeoutException;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Every Java example in docs/testing.md, compiled and run. The code between {@code // --- name ---}
 * and {@code // --- end ---} is copied verbatim into the page, and {@link #theDocShowsTheseExamplesVerbatim}
 * fails when the two drift apart.
 */
class TestingDocsExamplesTest {

  // --- policy under test ---
  static final Resilience INVENTORY_POLICY = Resilience.DEFAULT
      .withName("inventory")
      .withAttempts(3)
      .withDeadline(Duration.ofSeconds(2))
      .withAttemptTimeout(Duration.ofMillis(600));
  // --- end ---

  /** The dependency in the examples. */
  interface Inventory {
    String stock(String sku) throws IOException;
  }

  // --- chaos in production code ---
  static final class InventoryClient {
    private final Resilience policy;
    private final Inventory inventory;
    private final Chaos chaos;   // Chaos.OFF in production: wrap returns the call itself

    InventoryClient(Resilience policy, Inventory inventory, Chaos chaos) {
      this.policy = policy;
      this.inventory = inventory;
      this.chaos = chaos;
    }

    Outcome<String> stock(String sku) {
      return policy.run(chaos.wrap(() -> inventory.stock(sku)));
    }
  }
  // --- end ---

  @Test
  void firstTest() {
    // --- first test ---
    VirtualTime time = VirtualTime.create();
    Resilience policy = INVENTORY_POLICY.withTimeSource(time);

    Sequence<String> inventory = Sequence.<String>script(time)
        .thenThrow(new IOException("connection reset"))
        .thenThrow(new IOException("connection reset"))
        .thenReturn("42 in stock");

    Outcome<String> outcome = policy.run(inventory);

    assertThat(outcome.value()).isEqualTo("42 in stock");
    assertThat(outcome.attempts()).isEqualTo(3);
    assertThat(inventory.calls()).isEqualTo(3);
    assertThat(time.elapsed()).isLessThan(Duration.ofMillis(300)); // two jittered backoffs, not slept
    // --- end ---
  }

  @Test
  void testPolicyAndEvents() throws Exception {
    // --- test policy ---
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY);   // same policy, on a fresh VirtualTime
    Sequence<String> inventory = Sequence.<String>script(test.time())
        .thenThrow(new IOException("connection reset"))
        .thenReturn("42 in stock");

    assertThat(test.policy().execute(inventory)).isEqualTo("42 in stock");

    EventRecorder events = test.events();
    assertThat(events.types()).containsExactly(
        ATTEMPT_STARTED, ATTEMPT_ENDED, RETRYING, ATTEMPT_STARTED, ATTEMPT_ENDED, SUCCEEDED);
    assertThat(events.count(RETRYING)).isEqualTo(1);
    assertThat(events.terminal().attempt()).isEqualTo(2);   // exactly one terminal event, after 2 attempts
    // --- end ---
  }

  @Test
  void recorderOnItsOwn() {
    // --- recorder ---
    EventRecorder events = new EventRecorder();
    Resilience policy = TestPolicy.instant().withListener(events);

    policy.run(() -> "ok");

    assertThat(events.terminal().type()).isEqualTo(SUCCEEDED);
    // --- end ---
  }

  @Test
  void attemptTimeouts() {
    // --- attempt timeout ---
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY.withAttemptTimeout(Duration.ofMillis(200)));
    Sequence<String> inventory = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofSeconds(5), "too late")   // hangs past the attempt timeout
        .thenReturn("42 in stock");

    Outcome<String> outcome = test.policy().run(inventory);

    assertThat(outcome.value()).isEqualTo("42 in stock");
    ResilienceEvent first = test.events().ofType(ATTEMPT_ENDED).get(0);
    assertThat(first.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(first.attemptDuration()).contains(Duration.ofMillis(200));
    // --- end ---
  }

  @Test
  void asynchronousCalls() {
    // --- async ---
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY.withAttemptTimeout(Duration.ofMillis(200)));
    Sequence<String> inventory = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofSeconds(5), "too late")
        .thenReturn("42 in stock");

    CompletableFuture<Outcome<String>> future = test.policy().runAsync(inventory);
    assertThat(future).isNotDone();                     // nothing moves until the clock does

    test.time().runUntilIdle(Duration.ofMinutes(1));     // play every timer out, in order

    assertThat(future.join().value()).isEqualTo("42 in stock");
    assertThat(test.time().pendingTimers()).isZero();    // the abandoned answer's timer was cancelled
    // --- end ---
  }

  @Test
  void deadline() {
    // --- deadline ---
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY.withoutAttemptTimeout());   // only the 2 s deadline
    Sequence<String> inventory = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofMinutes(1), "never seen");

    Outcome<String> outcome = test.policy().run(inventory);

    assertThat(outcome.stopReason()).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(test.time().elapsed()).isEqualTo(Duration.ofSeconds(2));
    // --- end ---
  }

  @Test
  void budgetRefusal() {
    // --- budget refusal ---
    VirtualTime time = VirtualTime.create();
    RetryBudget oneRetry = RetryBudget.of(0.1, 0, time);   // no floor: capacity 1, so it funds one retry
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY.withAttempts(5).withBudget(oneRetry), time);
    Sequence<String> down = Sequence.<String>script(time)
        .thenThrow(() -> new IOException("down")).times(2);

    Outcome<String> outcome = test.policy().run(down);

    assertThat(outcome.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(outcome.attempts()).isEqualTo(2);
    assertThat(test.events().terminal().type()).isEqualTo(REJECTED_BY_BUDGET);
    assertThat(test.events().terminal().delay()).contains(Duration.ofMillis(100)); // the guarded pause, virtual
    // --- end ---
  }

  @Test
  void chaos() {
    // --- chaos test ---
    TestPolicy test = TestPolicy.instant(INVENTORY_POLICY);
    Chaos chaos = Chaos.seeded(7)
        .failing(0.5, () -> new IOException("chaos"))                 // half of all attempts fail
        .slowing(0.1, Duration.ofMillis(300), test.time());           // a tenth take 300 ms longer
    InventoryClient client = new InventoryClient(test.policy(), sku -> "42 in stock", chaos);

    for (int i = 0; i < 1000; i++) {
      client.stock("sku-" + i);
    }

    // the same seed gives the same run, every time; the budget held the retries to a fraction of traffic
    int calls = test.events().terminals().size();
    int attempts = test.events().count(ATTEMPT_STARTED);
    assertThat(calls).isEqualTo(1000);
    assertThat(test.events().count(REJECTED_BY_BUDGET)).isPositive();
    assertThat((double) attempts / calls).isLessThan(1.5);
    // --- end ---
  }

  @Test
  void theDocShowsTheseExamplesVerbatim() throws IOException {
    Path self = Path.of("src/test/java/dev/quell/test/TestingDocsExamplesTest.java");
    Path doc = Path.of("../docs/testing.md");
    String page = Files.readString(doc);
    Map<String, String> snippets = snippets(Files.readAllLines(self));

    assertThat(snippets).hasSizeGreaterThanOrEqualTo(10);
    snippets.forEach((name, code) ->
        assertThat(page).as("docs/testing.md shows the \"%s\" example verbatim", name).contains(code));
  }

  /** The marked blocks of {@code lines}, by name, with their common indentation removed. */
  private static Map<String, String> snippets(List<String> lines) {
    Map<String, String> snippets = new LinkedHashMap<>();
    String name = null;
    List<String> block = new ArrayList<>();
    for (String line : lines) {
      String t = line.trim();
      if (name == null && t.startsWith("// --- ") && t.endsWith(" ---") && !t.equals("// --- end ---")) {
        name = t.substring(7, t.length() - 4);
        block.clear();
      } else if (name != null && t.equals("// --- end ---")) {
        snippets.put(name, dedent(block));
        name = null;
      } else if (name != null) {
        block.add(line);
      }
    }
    return snippets;
  }

  private static String dedent(List<String> block) {
    int indent = Integer.MAX_VALUE;
    for (String line : block) {
      if (!line.isBlank()) {
        indent = Math.min(indent, line.length() - line.stripLeading().length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String line : block) {
      sb.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
    }
    return sb.toString();
  }
}
