package dev.quell.errorprone;

import static com.google.errorprone.BugCheckerRefactoringTestHelper.TestMode.TEXT_MATCH;

import com.google.errorprone.BugCheckerRefactoringTestHelper;
import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellGuardPerCallTest {
  private final CompilationTestHelper helper = CompilationTestHelper.newInstance(QuellGuardPerCall.class, getClass());
  private final BugCheckerRefactoringTestHelper refactoring =
      BugCheckerRefactoringTestHelper.newInstance(QuellGuardPerCall.class, getClass());

  @Test
  void policyBuiltAndUsedInAMethodIsReported() {
    helper.addSourceLines("Inventory.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Inventory {
          String stock(String sku) throws Exception {
            // BUG: Diagnostic contains: each call gets a new automatic retry budget
            return Resilience.DEFAULT.withName("inventory").withAttempts(4).execute(() -> lookup(sku));
          }
          String viaLocal(String sku) throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            Resilience policy = Resilience.HTTP.withDeadline(Duration.ofSeconds(2));
            policy.run(() -> lookup(sku));
            return policy.execute(() -> lookup(sku));
          }
          String lookup(String sku) { return sku; }
        }
        """).doTest();
  }

  @Test
  void guardsBuiltInALambdaThatRunsPerRequestAreReported() {
    helper.addSourceLines("Handler.java", """
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        import java.util.function.Function;
        class Handler {
          static final Resilience BASE = Resilience.DEFAULT.withName("backend");
          // a field holds the handler, but the handler's body runs per request
          static final Function<String, String> HANDLE = request -> {
            // BUG: Diagnostic contains: each call starts with a full bucket
            RetryBudget budget = RetryBudget.of(0.2, 5);
            try {
              return BASE.withBudget(budget).execute(() -> request);
            } catch (Exception e) {
              return "failed";
            }
          };
          String scoped(String tenant) throws Exception {
            // BUG: Diagnostic contains: its per-key budgets start full on every call
            return PolicyScope.<String>of(BASE).execute(tenant, () -> tenant);
          }
          String feedback() throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            return BASE.withBudget(RetryBudget.feedback()).execute(() -> "x");
          }
          String allowance() throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            return BASE.withBudget(RetryBudget.replenishing(10, Duration.ofSeconds(1))).execute(() -> "x");
          }
          String derived() throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            return BASE.withName("other").execute(() -> "x");
          }
        }
        """).doTest();
  }

  @Test
  void guardsKeptInFieldsConstructorsAndInitializersAreNotReported() {
    helper.addSourceLines("Client.java", """
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        class Client {
          private static final Resilience POLICY = Resilience.DEFAULT.withName("inventory");
          private static final RetryBudget SHARED;
          static {
            SHARED = RetryBudget.of();
          }
          private final Resilience perInstance;
          private final PolicyScope<String> scope;
          Client() {
            perInstance = Resilience.HTTP.withAttempts(4);
            RetryBudget budget = RetryBudget.of();
            scope = PolicyScope.of(Resilience.DEFAULT.withBudget(budget));
          }
          String call() throws Exception {
            return POLICY.execute(() -> "x") + perInstance.execute(() -> "y") + scope.execute("k", () -> "z");
          }
          public static void main(String[] args) throws Exception {
            System.out.println(Resilience.DEFAULT.withName("once").execute(() -> "main runs once"));
          }
        }
        """).doTest();
  }

  @Test
  void guardsThatOutliveTheCallAreNotReported() {
    helper.addSourceLines("Factory.java", """
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.util.Map;
        import java.util.concurrent.ConcurrentHashMap;
        import java.util.function.Supplier;
        class Factory {
          private final Map<String, Resilience> byHost = new ConcurrentHashMap<>();
          private Resilience kept;
          Resilience policy() {
            return Resilience.DEFAULT.withName("made-here-kept-by-the-caller");
          }
          Resilience forHost(String host) {
            return byHost.computeIfAbsent(host, h -> Resilience.DEFAULT.withName(h));
          }
          void store() {
            Resilience p = Resilience.DEFAULT.withAttempts(4);
            kept = p;
          }
          void register(Map<String, RetryBudget> registry) {
            registry.put("x", RetryBudget.of());
          }
          Supplier<String> later() {
            Resilience p = Resilience.DEFAULT.withAttempts(4);
            return () -> { try { return p.execute(() -> "x"); } catch (Exception e) { return "failed"; } };
          }
        }
        """).doTest();
  }

  @Test
  void policiesWithoutAnAutomaticBudgetAreNotReported() {
    helper.addSourceLines("NoBudget.java", """
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        class NoBudget {
          static final RetryBudget SHARED = RetryBudget.shared("payments");
          String call(int attempts) throws Exception {
            String a = Resilience.DEFAULT.withBudget(SHARED).execute(() -> "shared budget");
            String b = Resilience.DEFAULT.withBudget(RetryBudget.NONE).execute(() -> "no budget");
            String c = Resilience.DEFAULT.withAttempts(1).execute(() -> "one attempt: no budget");
            String d = Resilience.NONE.withName("pass-through").execute(() -> "none");
            String e = Resilience.DEFAULT.withAttempts(attempts).execute(() -> "attempts unknown");
            String f = Resilience.DEFAULT.with(s -> s.budget(SHARED)).execute(() -> "settings");
            String g = Resilience.DEFAULT.withBudget(RetryBudget.shared("other")).execute(() -> "looked up by name");
            return a + b + c + d + e + f + g;
          }
        }
        """).doTest();
  }

  @Test
  void testMethodsAreNotPerCall() {
    helper.addSourceLines("PolicyTest.java", """
        import dev.quell.Resilience;
        import org.junit.jupiter.api.Test;
        class PolicyTest {
          @Test
          void retries() throws Exception {
            Resilience policy = Resilience.DEFAULT.withAttempts(4);
            policy.execute(() -> "a test builds the policy it tests");
          }
        }
        """).doTest();
  }

  @Test
  void fixHoistsALocalPolicyToAField() {
    refactoring.addInputLines("Inventory.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Inventory {
          String stock(String sku) throws Exception {
            Resilience inventoryPolicy = Resilience.DEFAULT.withName("inventory").withDeadline(Duration.ofSeconds(2));
            return inventoryPolicy.execute(() -> sku);
          }
        }
        """).addOutputLines("Inventory.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Inventory {
          private static final Resilience INVENTORY_POLICY = Resilience.DEFAULT.withName("inventory").withDeadline(Duration.ofSeconds(2));
          String stock(String sku) throws Exception {
            return INVENTORY_POLICY.execute(() -> sku);
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void fixHoistsAnInlineGuardAndNamesItAfterThePolicy() {
    refactoring.addInputLines("Inventory.java", """
        import dev.quell.Resilience;
        class Inventory {
          String stock(String sku) throws Exception {
            return Resilience.HTTP.withName("inventory-api").execute(() -> sku);
          }
        }
        """).addOutputLines("Inventory.java", """
        import dev.quell.Resilience;
        class Inventory {
          private static final Resilience INVENTORY_API = Resilience.HTTP.withName("inventory-api");
          String stock(String sku) throws Exception {
            return INVENTORY_API.execute(() -> sku);
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void noFixWhenTheGuardReadsTheCallsOwnValues() {
    // the policy is built from a parameter: hoisting it would change what it is built from
    refactoring.addInputLines("Inventory.java", """
        import dev.quell.Resilience;
        class Inventory {
          String stock(String sku, String name) throws Exception {
            return Resilience.DEFAULT.withName(name).withAttempts(2).execute(() -> sku);
          }
        }
        """).expectUnchanged().doTest();
  }

  @Test
  void aPrivateHelperThatBuildsAGuardForEachCallerIsReportedAtItsReturn() {
    helper.addSourceLines("Helpers.java", """
        import dev.quell.Resilience;
        import java.util.ArrayList;
        import java.util.List;
        class Helpers {
          private Resilience perRequest() {
            // BUG: Diagnostic contains: is built anew each time perRequest() is called
            return Resilience.DEFAULT.withName("per-request");
          }
          String a() throws Exception {
            return perRequest().execute(() -> "a");
          }

          // look-alikes: a helper whose result is kept, one others may call, one handed on as a method reference
          private Resilience keptByTheConstructor() {
            return Resilience.DEFAULT.withName("kept");
          }
          private final Resilience kept = keptByTheConstructor();
          Resilience forOthers() {
            return Resilience.DEFAULT.withName("others");
          }
          private Resilience referenced() {
            return Resilience.DEFAULT.withName("referenced");
          }
          private final java.util.function.Supplier<Resilience> supplier = this::referenced;
          private final List<Resilience> all = new ArrayList<>();
          private Resilience stored() {
            return Resilience.DEFAULT.withName("stored");
          }
          void store() {
            all.add(stored());
          }
          String b() throws Exception {
            return kept.execute(() -> "b") + forOthers().execute(() -> "b") + supplier.get().execute(() -> "b");
          }
        }
        """).doTest();
  }

  @Test
  void aPolicyChosenByAConditionalIsReportedForTheBranchBuiltThere() {
    helper.addSourceLines("Choice.java", """
        import dev.quell.Resilience;
        class Choice {
          static final Resilience SLOW = Resilience.HTTP.withName("slow");
          String call(boolean fast) throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            Resilience policy = fast ? Resilience.DEFAULT.withName("fast").withAttempts(2) : SLOW;
            return policy.execute(() -> "x");
          }
          Resilience handedOn(boolean fast) {
            return fast ? Resilience.DEFAULT.withName("fast").withAttempts(2) : SLOW;
          }
          String condition(boolean fast) throws Exception {
            return (fast ? SLOW : SLOW.once()).execute(() -> "y");
          }
        }
        """).doTest();
  }
}
