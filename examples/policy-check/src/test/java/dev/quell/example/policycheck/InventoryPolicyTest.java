package dev.quell.example.policycheck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.test.PolicyCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checkout team's promise to the inventory team, kept by the build: in last quarter's brownout,
 * with the whole fleet calling, this policy must not amplify the load beyond 1.2× in any second, and
 * must let inventory recover within a minute. docs/testing.md shows the first test verbatim.
 */
class InventoryPolicyTest {

  // --- the check ---
  /** The model: inventory as production knows it, in last quarter's brownout, with 16 pods calling. */
  static final Path INVENTORY_BROWNOUT = Path.of("src/test/resources/inventory-brownout.yaml");

  @Test
  void theInventoryPolicyDoesNotAmplifyABrownout() {
    PolicyCheck.of(Policies.INVENTORY)
        .against(INVENTORY_BROWNOUT)
        .run()
        .hasWorstSecondAtMost(1.2)
        .hasAttemptsPerCallDuringIncidentAtMost(1.1)
        .recoversWithin(Duration.ofSeconds(60))
        .hasAvailabilityAtLeast(0.6);
  }
  // --- end ---

  /** docs/testing.md shows the production policy; this copy of it (the page's words) must be the same. */
  public static final Resilience INVENTORY = Resilience.DEFAULT.with(s -> s
      .name("inventory")
      .attempts(3)
      .attemptTimeout(Duration.ofMillis(160))
      .backoff(Backoff.exponential(Duration.ofMillis(50)))
      .deadline(Duration.ofSeconds(1))
      .budget(RetryBudget.AUTOMATIC));

  @Test
  void thePageShowsTheProductionPolicy() {
    assertThat(INVENTORY).isEqualTo(Policies.INVENTORY);
  }

  /**
   * What the check is for: the day someone turns the budget off "for availability", the build says
   * no, and why. docs/testing.md shows this message word for word (its chart's folder aside).
   */
  @Test
  void withoutItsBudgetThePolicyFailsTheCheckAndSaysWhy() throws IOException {
    Resilience withoutBudget = Policies.INVENTORY.withBudget(RetryBudget.NONE);

    Throwable failure = catchThrowable(() -> PolicyCheck.of(withoutBudget)
        .against(INVENTORY_BROWNOUT)
        .run()
        .hasWorstSecondAtMost(1.2));

    Path chart = Path.of("target", "quell-checks", "inventory-seed-1.png").toAbsolutePath();
    assertThat(failure).isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("policy check 'inventory' failed: worst second was 3.23× at 2:18, above the allowed"
            + " 1.20× by 2.03× (169%)")
        .hasMessageContaining("in one line: load 2.20×, worst second 3.23× at 2:18, availability 40.1% (during"
            + " brownout ×8: 0.1%), not recovered")
        .hasMessageContaining(": metastable failure")
        .hasMessageEndingWith("chart: " + chart);
    assertThat(chart).isNotEmptyFile();
    String page = Files.readString(Path.of("..", "..", "docs", "testing.md"));
    assertThat(page).contains(failure.getMessage().replace(chart.toString(),
        "/home/you/shop/target/quell-checks/inventory-seed-1.png"));
  }

  @Test
  void theTestingPageShowsTheCheckVerbatim() throws IOException {
    List<String> self = Files.readAllLines(Path.of("src/test/java/dev/quell/example/policycheck/InventoryPolicyTest.java"));
    List<String> block = new ArrayList<>();
    boolean in = false;
    for (String line : self) {
      if (line.trim().equals("// --- the check ---")) {
        in = true;
      } else if (line.trim().equals("// --- end ---")) {
        break;
      } else if (in) {
        block.add(line.length() >= 2 ? line.substring(2) : line);
      }
    }
    String page = Files.readString(Path.of("..", "..", "docs", "testing.md"));
    assertThat(page).contains(String.join("\n", block) + "\n");
  }
}
