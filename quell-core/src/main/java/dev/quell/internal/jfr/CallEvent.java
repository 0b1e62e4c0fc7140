package dev.quell.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;

/** A call ended. Committed when it ends, so the event's own duration is 0: see elapsed. */
@Name("dev.quell.Call")
@Label("Quell Call")
@Category({"Quell", "Calls"})
@Description("A call made under a Quell policy ended: how many attempts it made, why it stopped and what the"
    + " caller waited.")
@Enabled(false)
@StackTrace(false)
final class CallEvent extends Event {
  @Label("Policy")
  @Description("The policy's name (for a PolicyScope key, template:key).")
  @Nullable String policy;

  @Label("Key")
  @Description("The dependency key, when the policy is a PolicyScope key's; empty otherwise.")
  @Nullable String key;

  @Label("Attempts")
  @Description("Attempts made, the first included (hedges too).")
  int attempts;

  @Label("Stop Reason")
  @Description("Why the call stopped: SUCCEEDED, PERMANENT, ATTEMPTS_EXHAUSTED, DEADLINE_EXCEEDED,"
      + " BUDGET_EXHAUSTED, DEPENDENCY_UNAVAILABLE, LIMITED, CANCELLED or DRAINING.")
  @Nullable String stopReason;

  @Label("Last Verdict")
  @Description("The last classified attempt's verdict; empty when none was classified.")
  @Nullable String verdict;

  @Label("Elapsed")
  @Description("What the caller waited, backoff and the pause after a refusal included, on the policy's clock.")
  @Timespan(Timespan.NANOSECONDS)
  long elapsed;

  @Label("Criticality")
  @Description("The call's criticality.")
  @Nullable String criticality;

  @Label("Policy Clock")
  @Description("The policy's clock when the call ended, in nanoseconds (System.nanoTime() on the real clock, the"
      + " simulated time in quell-sim); only differences between events mean anything.")
  long clock;
}
