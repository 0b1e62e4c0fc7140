/** The machinery behind {@code dev.quell.spring}. Not API: it may change in any release. */
@NullMarked
package dev.quell.spring.internal;

import org.jspecify.annotations.NullMarked;
