/** Machinery of the OkHttp integration: not API. */
@NullMarked
package dev.quell.okhttp.internal;

import org.jspecify.annotations.NullMarked;
