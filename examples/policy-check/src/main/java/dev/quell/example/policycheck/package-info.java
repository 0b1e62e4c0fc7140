/** The example's production code: the policies a team ships and checks in its build. */
@NullMarked
package dev.quell.example.policycheck;

import org.jspecify.annotations.NullMarked;
