package dev.quell.errorprone;

/**
 * Where each check's page section lives: an absolute address a user can open from their own
 * project's build output. It is the project's {@code <url>} (the root pom) followed by the page's
 * path in the repository; a test holds the two to each other.
 */
final class Docs {
  /** The project's public repository, as the root pom's {@code <url>} names it. */
  static final String REPOSITORY = "https://github.com/quell-dev/quell";

  /** The page's path inside the repository. */
  static final String PATH = "docs/errorprone.md";

  /** The page, as a user opens it. */
  static final String PAGE = REPOSITORY + "/blob/main/" + PATH;

  private Docs() {}
}
