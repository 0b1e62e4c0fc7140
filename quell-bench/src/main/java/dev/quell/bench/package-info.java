/**
 * JMH benchmarks that put Quell beside Resilience4j and Failsafe in one run. Not a library: build
 * {@code quell-bench/target/benchmarks.jar} and run it (see {@code docs/benchmarks.md}).
 */
@NullMarked
package dev.quell.bench;

import org.jspecify.annotations.NullMarked;
