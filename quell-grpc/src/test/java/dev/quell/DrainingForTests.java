package dev.quell;

/** Lets the gRPC tests undo {@link Draining#begin}, which latches for the whole JVM. */
public final class DrainingForTests {
  private DrainingForTests() {}

  /** Forgets that draining began. */
  public static void reset() {
    Draining.resetForTests();
  }
}
