package dev.quell;

/** Lets this module's tests end draining, which otherwise latches for the life of the JVM. */
public final class DrainingForTests {
  private DrainingForTests() {}

  /** Forgets that draining began. */
  public static void reset() {
    Draining.resetForTests();
  }
}
