import dev.quell.Resilience;

/** Deliberately wrong: a changed copy thrown away. */
class DiscardedConfigurationSample {
  static final Resilience POLICY = Resilience.DEFAULT.withName("sample");

  static {
    POLICY.withAttempts(5); // expect: QuellDiscardedConfiguration
  }
}
