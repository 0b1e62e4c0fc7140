/** The machinery behind {@code dev.quell.micrometer}. Not API: it may change in any release. */
@NullMarked
package dev.quell.micrometer.internal;

import org.jspecify.annotations.NullMarked;
