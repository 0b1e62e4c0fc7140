/**
 * Error Prone checks for code that uses Quell. Each check is a {@code BugChecker} registered for
 * Error Prone's plugin loader; put this artifact on the annotation processor path next to
 * {@code error_prone_core}. The checks, what they report and how to fix each finding are in
 * {@code docs/errorprone.md}.
 *
 * <p>Every check reports only what the code at hand proves: values it cannot work out from
 * constants (a budget read from configuration, a policy built in another file) are never guessed.
 */
@NullMarked
package dev.quell.errorprone;

import org.jspecify.annotations.NullMarked;
