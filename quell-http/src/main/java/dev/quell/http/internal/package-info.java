/**
 * Machinery shared by Quell's HTTP integrations. Public only so that {@code quell-okhttp} can reach
 * it: not API, and it may change in any release.
 */
@NullMarked
package dev.quell.http.internal;

import org.jspecify.annotations.NullMarked;
