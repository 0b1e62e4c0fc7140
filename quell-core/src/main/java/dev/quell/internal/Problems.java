package dev.quell.internal;

import dev.quell.ResilienceConfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Collects every configuration problem before throwing, so a user fixes them in one round. */
@Internal
public final class Problems {
  private final List<String> problems = new ArrayList<>();

  /** Records a problem unless {@code ok}: "{parameter} was {value}: {rule}". */
  public Problems require(boolean ok, String parameter, @Nullable Object value, String rule) {
    if (!ok) {
      problems.add(parameter + " was " + render(value) + ": " + rule);
    }
    return this;
  }

  /** Records a free-form problem. */
  public Problems add(String problem) {
    problems.add(problem);
    return this;
  }

  /** Checks that a duration is present and strictly positive. */
  public Problems positive(String parameter, @Nullable Duration value) {
    return require(value != null && !value.isNegative() && !value.isZero(), parameter, value, "must be a positive duration");
  }

  /** Checks that a duration is present and not negative. */
  public Problems notNegative(String parameter, @Nullable Duration value) {
    return require(value != null && !value.isNegative(), parameter, value, "must be zero or positive");
  }

  /** Whether anything was recorded. */
  public boolean isEmpty() {
    return problems.isEmpty();
  }

  /** Throws {@link ResilienceConfigurationException} listing every recorded problem, if any. */
  public void throwIfAny() {
    if (!problems.isEmpty()) {
      throw new ResilienceConfigurationException(problems);
    }
  }

  /** A duration as every message here writes it ("250 ms", or ISO form); never throws. */
  public static String duration(Duration d) {
    return render(d);
  }

  static String render(@Nullable Object value) {
    if (value instanceof Duration) {
      Duration d = (Duration) value;
      // whole milliseconds read as "250 ms"; anything else (negative, sub-millisecond, too long to
      // count in nanoseconds) in ISO form, which never overflows
      boolean wholeMillis = !d.isNegative() && d.getSeconds() < Long.MAX_VALUE / 1_000_000_000L
          && d.getNano() % 1_000_000 == 0;
      return wholeMillis ? d.toMillis() + " ms" : d.toString();
    }
    return String.valueOf(value);
  }
}
