/**
 * SLF4J logging for Quell: {@link dev.quell.slf4j.QuellSlf4j#listener()} logs a policy's retries,
 * give-ups and refusals under stable event names, with refusal warnings flood-controlled. See
 * {@code docs/telemetry.md}.
 */
@NullMarked
package dev.quell.slf4j;

import org.jspecify.annotations.NullMarked;
