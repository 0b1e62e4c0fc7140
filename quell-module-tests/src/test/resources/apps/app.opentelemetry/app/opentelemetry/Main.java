package app.opentelemetry;

import app.support.Friends;
import dev.quell.Resilience;
import dev.quell.opentelemetry.QuellOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;

/** bind(...) reads the core's BudgetTracker; the listener is a CallObserver: both in dev.quell.internal. */
public final class Main {
  public static void main(String[] args) throws Exception {
    Friends.check("dev.quell.opentelemetry", QuellOpenTelemetry.class);
    OpenTelemetry otel = OpenTelemetry.noop(); // the API alone: the application would bring an SDK
    Resilience policy = Resilience.DEFAULT.withName("inventory").withListener(QuellOpenTelemetry.listener(otel));
    QuellOpenTelemetry.bind(policy, otel);
    String answer = policy.execute(() -> "ok");
    System.out.println("quell-opentelemetry on the module path: " + answer);
  }
}
