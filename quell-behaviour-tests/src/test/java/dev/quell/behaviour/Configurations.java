package dev.quell.behaviour;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The configurations every behaviour expands over: driver × budget kind × preset. */
final class Configurations {
  private Configurations() {
  }

  /** Every kind of retry budget, made on the driver's clock; whether it can be emptied before a call. */
  enum Budget {
    TOKEN_BUCKET(t -> RetryBudget.of(0.1, 3, t), true),
    SHARED(t -> RetryBudget.shared("expanded-" + java.util.UUID.randomUUID()), true),
    FEEDBACK(t -> RetryBudget.feedback(), true),
    REPLENISHING(t -> RetryBudget.replenishing(5, Duration.ofHours(1), t), true),
    CONCURRENT(t -> RetryBudget.concurrent(), false),
    NONE(t -> RetryBudget.NONE, false);

    final Function<TimeSource, RetryBudget> make;
    final boolean emptiable;

    Budget(Function<TimeSource, RetryBudget> make, boolean emptiable) {
      this.make = make;
      this.emptiable = emptiable;
    }
  }

  enum Preset {
    DEFAULT(Resilience.DEFAULT), HTTP(Resilience.HTTP), NONE(Resilience.NONE);

    final Resilience policy;

    Preset(Resilience policy) {
      this.policy = policy;
    }

    boolean retries() {
      return policy.attempts() >= 2;
    }
  }

  /**
   * The preset with {@code budget} and no waits between attempts (the behaviours here are not the
   * backoff's, and real-clock lanes must not sleep), and no listener of its own: the driver adds one.
   */
  static Resilience policy(Preset preset, RetryBudget budget) {
    return preset.policy.withBudget(budget).withBackoff(Backoff.NONE).with(Resilience.Settings::clearListeners);
  }

  static Stream<Arguments> where(Predicate<Driver> drivers, Predicate<Preset> presets) {
    List<Arguments> all = new ArrayList<>();
    for (Driver driver : Driver.values()) {
      if (!drivers.test(driver)) {
        continue;
      }
      for (Budget budget : Budget.values()) {
        for (Preset preset : Preset.values()) {
          if (presets.test(preset)) {
            all.add(Arguments.of(driver, budget, preset));
          }
        }
      }
    }
    return all.stream();
  }

  /** Every driver × budget × preset. */
  static Stream<Arguments> all() {
    return where(d -> true, p -> true);
  }

  /** The drivers on a virtual clock (every one but the real-clock lanes) × budget × preset. */
  static Stream<Arguments> virtual() {
    return where(Driver::virtual, p -> true);
  }

  /** The drivers on a virtual clock but Kotlin's × budget × preset. */
  static Stream<Arguments> virtualButKotlin() {
    return where(d -> d.virtual() && !d.kotlin(), p -> true);
  }

  /** Kotlin's drivers × budget × preset. */
  static Stream<Arguments> kotlin() {
    return where(Driver::kotlin, p -> true);
  }

  /** The drivers on a virtual clock × budget × the presets that retry (hedging needs two attempts). */
  static Stream<Arguments> virtualRetrying() {
    return where(Driver::virtual, Preset::retries);
  }

  /** The drivers whose work can ignore cancellation × budget × the presets that retry. */
  static Stream<Arguments> stubbornRetrying() {
    return where(d -> d.stubbornWork, Preset::retries);
  }
}
