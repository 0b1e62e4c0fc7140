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

  /**
   * A duration as every message and {@code toString} in Quell writes it, and never throws: whole
   * milliseconds as "250 ms", a duration too long to count in nanoseconds (Long.MAX_VALUE seconds,
   * {@code ChronoUnit.FOREVER}) as "forever", anything else (negative, sub-millisecond) in ISO form.
   */
  public static String duration(Duration d) {
    if (d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L) {
      return "forever";
    }
    boolean wholeMillis = !d.isNegative() && d.getNano() % 1_000_000 == 0;
    return wholeMillis ? d.toMillis() + " ms" : d.toString();
  }

  static String render(@Nullable Object value) {
    return value instanceof Duration ? duration((Duration) value) : String.valueOf(value);
  }
}
