package dev.quell.slf4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Through a real SLF4J backend (slf4j-simple, which prints WARN and up to standard error by default). */
class QuellSlf4jTest {

  @Test
  void aBudgetRefusalReachesTheBackendOnceUnderItsEventName() {
    VirtualTime time = VirtualTime.create();
    Resilience tight = Resilience.DEFAULT.withName("slf4j-demo").withTimeSource(time)
        .withBudget(RetryBudget.of(0.1, 0, time))
        .withListener(QuellSlf4j.listener(Duration.ofMinutes(1), time));
    PrintStream saved = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      for (int i = 0; i < 5; i++) {
        assertThat(tight.run(() -> {
          throw new IOException("down");
        }).stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
      }
    } finally {
      System.setErr(saved);
    }
    String out = captured.toString(StandardCharsets.UTF_8);
    assertThat(out).contains("WARN dev.quell.Resilience - quell.rejected.budget policy=slf4j-demo");
    assertThat(out.split("quell.rejected.budget", -1)).hasSize(2);
  }

  @Test
  void theDefaultListenerIsOneInstanceSoPoliciesCompareEqual() {
    assertThat(QuellSlf4j.listener()).isSameAs(QuellSlf4j.listener());
    assertThat(Resilience.DEFAULT.withListener(QuellSlf4j.listener()))
        .isEqualTo(Resilience.DEFAULT.withListener(QuellSlf4j.listener()));
  }

  @Test
  void theDocsWiring() throws Exception {
    Resilience inventory = Resilience.DEFAULT
        .withName("inventory")
        .withListener(QuellSlf4j.listener());
    assertThat(inventory.execute(() -> "42 in stock")).isEqualTo("42 in stock");
  }
}
