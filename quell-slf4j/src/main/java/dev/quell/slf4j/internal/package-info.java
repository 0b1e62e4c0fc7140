/** The machinery behind {@code dev.quell.slf4j}. Not API: it may change in any release. */
@NullMarked
package dev.quell.slf4j.internal;

import org.jspecify.annotations.NullMarked;
