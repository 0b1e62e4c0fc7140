package dev.quell.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import org.jspecify.annotations.Nullable;

/** A circuit breaker moved to another state. */
@Name("dev.quell.BreakerTransition")
@Label("Quell Breaker Transition")
@Category({"Quell", "Breakers"})
@Description("A circuit breaker moved to another state, because of the attempts it saw or by hand (isolate(),"
    + " reset()). A breaker shared by several policies records each move once.")
@Enabled(false)
@StackTrace(false)
final class BreakerTransitionEvent extends Event {
  @Label("Breaker")
  @Description("The breaker's name.")
  @Nullable String breaker;

  @Label("State")
  @Description("The state it moved into: CLOSED, OPEN, HALF_OPEN or ISOLATED.")
  @Nullable String state;

  @Label("Cause")
  @Description("attempts when the attempts it admitted or saw end moved it; isolate or reset when moved by hand.")
  @Nullable String cause;
}
