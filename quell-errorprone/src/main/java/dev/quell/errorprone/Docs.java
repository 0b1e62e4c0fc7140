package dev.quell.errorprone;

/** Where each check's page section lives. */
final class Docs {
  /** The page, relative to the root of the Quell repository. */
  static final String PAGE = "docs/errorprone.md";

  private Docs() {}
}
