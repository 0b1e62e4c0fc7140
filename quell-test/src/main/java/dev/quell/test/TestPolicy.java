package dev.quell.test;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.util.Objects;

/**
 * Policies for tests that never wait for real: every wait a policy makes (backoff between attempts,
 * attempt timeouts, the deadline, the guarded pause after a budget refusal) runs on a fresh
 * {@link VirtualTime}, so it advances that clock instead of blocking.
 *
 * <pre>{@code
 * TestPolicy test = TestPolicy.instant(INVENTORY);           // your production policy, on virtual time
 * Sequence<String> inventory = Sequence.<String>script(test.time())
 *     .thenThrow(new IOException("reset"))
 *     .thenReturn("ok");
 *
 * Outcome<String> outcome = test.policy().run(inventory);
 * assertThat(outcome.attempts()).isEqualTo(2);
 * assertThat(test.events().terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED);
 * }</pre>
 *
 * <p>Moving a policy to virtual time gives it a fresh automatic budget on that clock, so its floor
 * refills in virtual seconds. A budget you configured yourself ({@link RetryBudget#of}, a shared
 * budget, a replenishing allowance) stays as it is, on the clock it was made with: give it the
 * virtual clock when you make it if its refill matters to the test. Synchronous attempts time out
 * only when virtual time passes during them (a {@link Sequence} delay or a {@code VirtualTime.sleep}
 * in your stub does that); asynchronous calls move when the test drives the clock with
 * {@link VirtualTime#advance} or {@link VirtualTime#runUntilIdle}.
 *
 * <p>A {@code TestPolicy} holds the policy, its clock and an {@link EventRecorder} attached to it.
 * It is thread-safe, as its parts are.
 */
public final class TestPolicy {
  private final Resilience policy;
  private final VirtualTime time;
  private final EventRecorder events;

  private TestPolicy(Resilience policy, VirtualTime time, EventRecorder events) {
    this.policy = policy;
    this.time = time;
    this.events = events;
  }

  /**
   * {@link Resilience#DEFAULT} (3 attempts, 30 s deadline, 10 s attempt timeout, exponential backoff
   * with full jitter, automatic budget), named {@code "test"}, on a fresh {@link VirtualTime}. Get
   * the clock back with {@link #timeOf(Resilience)}.
   */
  public static Resilience instant() {
    return Resilience.DEFAULT.with(s -> s.name("test").timeSource(VirtualTime.create()));
  }

  /**
   * {@code base} on a fresh {@link VirtualTime} (seeded with 42), with an {@link EventRecorder}
   * attached; everything else about {@code base} is kept.
   */
  public static TestPolicy instant(Resilience base) {
    return instant(base, VirtualTime.create());
  }

  /** {@code base} on {@code time}, with an {@link EventRecorder} attached; for a clock made earlier or with another seed. */
  public static TestPolicy instant(Resilience base, VirtualTime time) {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(time, "time");
    EventRecorder events = new EventRecorder();
    Resilience policy = base.with(s -> s.timeSource(time).listener(events));
    return new TestPolicy(policy, time, events);
  }

  /**
   * The virtual clock of a policy made by {@link #instant()} (or put on a {@link VirtualTime} in any
   * other way).
   *
   * @throws IllegalArgumentException when the policy runs on another time source
   */
  public static VirtualTime timeOf(Resilience policy) {
    TimeSource time = policy.timeSource();
    if (!(time instanceof VirtualTime)) {
      throw new IllegalArgumentException("policy '" + policy.name() + "' runs on " + time
          + ", not on a VirtualTime; make it with TestPolicy.instant() or withTimeSource(VirtualTime.create())");
    }
    return (VirtualTime) time;
  }

  /** The policy, on {@link #time()}, reporting to {@link #events()}. */
  public Resilience policy() {
    return policy;
  }

  /** The virtual clock the policy runs on. Script {@link Sequence}s and {@link Chaos} delays on it. */
  public VirtualTime time() {
    return time;
  }

  /** The recorder attached to the policy. */
  public EventRecorder events() {
    return events;
  }

  @Override
  public String toString() {
    return "TestPolicy[" + policy + " on " + time + "]";
  }
}
