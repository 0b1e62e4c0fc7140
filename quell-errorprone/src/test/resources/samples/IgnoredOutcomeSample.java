import dev.quell.Resilience;

/** Deliberately wrong: the outcome, the only report of a failure, is dropped. */
class IgnoredOutcomeSample {
  static final Resilience MAIL = Resilience.DEFAULT.withName("mail");

  void send(String message) {
    MAIL.run(() -> deliver(message)); // expect: QuellIgnoredOutcome
  }

  String deliver(String message) {
    return message;
  }
}
