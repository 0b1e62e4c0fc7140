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

/** One attempt of a call ended. Committed when it ends, so the event's own duration is 0: see latency. */
@Name("dev.quell.Attempt")
@Label("Quell Attempt")
@Category({"Quell", "Calls"})
@Description("An attempt of a call made under a Quell policy ended: the first, a retry or a hedge, how long it"
    + " took and how the policy's classifier judged it.")
@Enabled(false)
@StackTrace(false)
final class AttemptEvent extends Event {
  @Label("Policy")
  @Description("The policy's name (for a PolicyScope key, template:key).")
  @Nullable String policy;

  @Label("Key")
  @Description("The dependency key, when the policy is a PolicyScope key's (the part of its name after the first"
      + " colon); empty otherwise.")
  @Nullable String key;

  @Label("Attempt")
  @Description("The attempt's number in its call, the first being 1.")
  int attempt;

  @Label("Kind")
  @Description("first, retry or hedge.")
  @Nullable String kind;

  @Label("Latency")
  @Description("How long the attempt ran, on the policy's clock.")
  @Timespan(Timespan.NANOSECONDS)
  long latency;

  @Label("Outcome")
  @Description("returned when the work returned a value, else the class of what it threw (an attempt timeout is"
      + " dev.quell.AttemptTimeoutException).")
  @Nullable String outcome;

  @Label("Verdict")
  @Description("The classifier's verdict: OK, TRANSIENT, THROTTLED or PERMANENT; CANCELLED when the call no longer"
      + " wanted the attempt.")
  @Nullable String verdict;

  @Label("Criticality")
  @Description("The call's criticality.")
  @Nullable String criticality;

  @Label("Policy Clock")
  @Description("The policy's clock when the attempt ended, in nanoseconds (System.nanoTime() on the real clock,"
      + " the simulated time in quell-sim); only differences between events mean anything.")
  long clock;
}
