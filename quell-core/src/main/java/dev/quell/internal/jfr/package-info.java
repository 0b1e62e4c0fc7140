/**
 * Quell's JDK Flight Recorder events and the observer that emits them (docs/jfr.md). Only
 * {@link dev.quell.internal.jfr.QuellJfr} may be named from the rest of the core: it links no
 * {@code jdk.jfr} type, so the core runs where the {@code jdk.jfr} module is absent; every other class
 * here is loaded only once Flight Recorder is known to be there.
 */
@NullMarked
package dev.quell.internal.jfr;

import org.jspecify.annotations.NullMarked;
