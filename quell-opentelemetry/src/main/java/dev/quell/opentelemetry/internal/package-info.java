/** The machinery behind {@code dev.quell.opentelemetry}. Not API: it may change in any release. */
@NullMarked
package dev.quell.opentelemetry.internal;

import org.jspecify.annotations.NullMarked;
