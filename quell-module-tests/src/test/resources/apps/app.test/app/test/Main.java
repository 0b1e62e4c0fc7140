package app.test;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.test.Sequence;
import dev.quell.test.TestPolicy;
import java.io.IOException;

/** The quell-test kit's own example: a scripted dependency on virtual time, retried without waiting. */
public final class Main {
  public static void main(String[] args) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withName("inventory"));
    Sequence<String> inventory = Sequence.<String>script(test.time())
        .thenThrow(new IOException("reset"))
        .thenReturn("ok");
    Outcome<String> outcome = test.policy().run(inventory);
    System.out.println("quell-test on the module path: " + outcome.value() + " after " + outcome.attempts()
        + " attempts, " + test.events().terminal().type());
  }
}
