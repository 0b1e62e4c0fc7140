/**
 * OpenTelemetry for Quell: {@link dev.quell.opentelemetry.QuellOpenTelemetry#listener} records a
 * policy's calls, attempts and budgets on the OpenTelemetry metrics API and adds attempt, retry and
 * rejection events to the current span. See {@code docs/telemetry.md}.
 */
@NullMarked
package dev.quell.opentelemetry;

import org.jspecify.annotations.NullMarked;
