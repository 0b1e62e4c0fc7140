/**
 * The Quell test kit: a virtual clock and helpers for testing code that uses Quell without real
 * waiting. Add {@code dev.quell:quell-test} in test scope.
 */
@NullMarked
package dev.quell.test;

import org.jspecify.annotations.NullMarked;
