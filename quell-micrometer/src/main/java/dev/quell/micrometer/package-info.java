/**
 * Micrometer meters for Quell: {@link dev.quell.micrometer.QuellMicrometer#listener} turns a
 * policy's calls and attempts into counters and timers, and every retry budget in play into gauges.
 * See {@code docs/telemetry.md} for the instruments and the alert to wire.
 */
@NullMarked
package dev.quell.micrometer;

import org.jspecify.annotations.NullMarked;
