package dev.quell;

import dev.quell.internal.Problems;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Classifier} says about the result of one attempt. Immutable; the three plain
 * verdicts are constants, so classifying allocates nothing unless a server names a Retry-After.
 */
public final class Verdict {

  /** The four kinds of verdict. */
  public enum Kind {
    /** The attempt succeeded: the call ends with its result and the budget is credited. */
    OK,
    /** The attempt failed in a way that may pass: retry after a backoff, if the bounds allow. */
    TRANSIENT,
    /** The dependency asked us to slow down: retry, after its Retry-After if it gave one. */
    THROTTLED,
    /** Retrying cannot help: the call ends now and nothing is charged. */
    PERMANENT
  }

  /** The attempt succeeded. */
  public static final Verdict OK = new Verdict(Kind.OK, null);
  /** The attempt failed and may succeed if retried. */
  public static final Verdict TRANSIENT = new Verdict(Kind.TRANSIENT, null);
  /** The dependency is throttling us but did not say for how long. */
  public static final Verdict THROTTLED = new Verdict(Kind.THROTTLED, null);
  /** The attempt failed and retrying cannot help. */
  public static final Verdict PERMANENT = new Verdict(Kind.PERMANENT, null);

  private final Kind kind;
  private final @Nullable Duration retryAfter;

  private Verdict(Kind kind, @Nullable Duration retryAfter) {
    this.kind = kind;
    this.retryAfter = retryAfter;
  }

  /**
   * The dependency is throttling us and asked us to wait {@code retryAfter} before trying again.
   * That wait replaces the backoff for the next retry (capped by the backoff's maximum).
   */
  public static Verdict throttled(Duration retryAfter) {
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (retryAfter.isNegative()) {
      retryAfter = Duration.ZERO;
    }
    return new Verdict(Kind.THROTTLED, retryAfter);
  }

  /** The kind of verdict. */
  public Kind kind() {
    return kind;
  }

  /** The wait the dependency asked for, when it named one. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** True for {@link Kind#TRANSIENT} and {@link Kind#THROTTLED}: a retry may help. */
  public boolean isRetryable() {
    return kind == Kind.TRANSIENT || kind == Kind.THROTTLED;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Verdict && ((Verdict) o).kind == kind && Objects.equals(((Verdict) o).retryAfter, retryAfter);
  }

  @Override
  public int hashCode() {
    return kind.hashCode() * 31 + Objects.hashCode(retryAfter);
  }

  @Override
  public String toString() {
    return retryAfter == null ? kind.name() : kind + "(retryAfter=" + Problems.duration(retryAfter) + ")";
  }
}
