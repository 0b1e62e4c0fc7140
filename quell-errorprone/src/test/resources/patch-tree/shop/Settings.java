package shop;

import dev.quell.Resilience;
import java.time.Duration;

/** Copies dropped where the intent is plain, in a third class of the tree. */
class Settings {
  static final Resilience BASE = Resilience.DEFAULT.withName("settings");

  String folded() throws Exception {
    Resilience policy = BASE;
    policy.withAttempts(2).withDeadline(Duration.ofSeconds(5));
    return policy.execute(() -> "x");
  }

  String assigned(boolean slow) throws Exception {
    Resilience policy = BASE;
    if (slow) {
      policy.withDeadline(Duration.ofMinutes(1));
    }
    return policy.once().execute(() -> "y");
  }
}
