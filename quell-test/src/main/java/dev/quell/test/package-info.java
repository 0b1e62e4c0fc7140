/**
 * The Quell test kit: test code that uses Quell without real waiting. Add
 * {@code dev.quell:quell-test} in test scope.
 *
 * <ul>
 *   <li>{@link dev.quell.test.VirtualTime}: a {@code TimeSource} whose clock moves only when a sleep
 *       or the test moves it.
 *   <li>{@link dev.quell.test.Sequence}: a scripted dependency that returns, throws and delays on
 *       the virtual clock, and fails loudly when run past its script.
 *   <li>{@link dev.quell.test.EventRecorder}: a thread-safe listener that keeps every event.
 *   <li>{@link dev.quell.test.TestPolicy}: a policy on a fresh virtual clock, with a recorder.
 *   <li>{@link dev.quell.test.Chaos}: seeded fault and latency injection around the work, off by
 *       default.
 *   <li>{@link dev.quell.test.PolicyCheck}: a policy regression test: your policy against a model of
 *       its dependency on the simulator's virtual clock, with assertions on the load multiplier,
 *       worst second, availability, recovery, attempts per call and p99
 *       ({@link dev.quell.test.PolicyOutcome}).
 * </ul>
 *
 * <p>docs/testing.md walks through them with examples.
 */
@NullMarked
package dev.quell.test;

import org.jspecify.annotations.NullMarked;
