/**
 * The {@code quell} command. {@link dev.quell.cli.Quell} is its entry point; run it through the
 * {@code ./quell} launcher at the repository root, or as {@code java -jar quell.jar}.
 */
@NullMarked
package dev.quell.cli;

import org.jspecify.annotations.NullMarked;
