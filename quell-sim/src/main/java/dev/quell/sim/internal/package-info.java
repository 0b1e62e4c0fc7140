/** The simulator's machinery. Not API: nothing here is stable, and user code must not depend on it. */
@NullMarked
package dev.quell.sim.internal;

import org.jspecify.annotations.NullMarked;
