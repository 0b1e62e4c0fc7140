package dev.quell.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import org.jspecify.annotations.Nullable;

/** A limiter refused an attempt, and the call stopped with LIMITED. */
@Name("dev.quell.LimiterRefusal")
@Label("Quell Limiter Refusal")
@Category({"Quell", "Refusals"})
@Description("A rate limit, bulkhead or adaptive limit refused an attempt, so the call stopped with LIMITED.")
@Enabled(false)
@StackTrace(false)
final class LimiterRefusalEvent extends Event {
  @Label("Policy")
  @Nullable String policy;

  @Label("Key")
  @Description("The dependency key, when the policy is a PolicyScope key's; empty otherwise.")
  @Nullable String key;

  @Label("Limiters")
  @Description("The policy's limiters, as kind:name; one of them refused.")
  @Nullable String limiters;

  @Label("Attempts")
  @Description("Attempts the call made before it stopped.")
  int attempts;
}
