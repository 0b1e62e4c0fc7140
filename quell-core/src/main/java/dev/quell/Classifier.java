package dev.quell;

import dev.quell.internal.HttpClassification;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether one attempt succeeded, failed in a way a retry may fix, or failed for good.
 *
 * <p>The classifier sees either the attempt's result (and {@code failure == null}) or the exception
 * it threw (and {@code result == null}). It must be fast, thread-safe and must not throw; if it does
 * throw, the attempt is treated as {@link Verdict#PERMANENT}.
 *
 * <p>Interrupts and cancellation of the caller are never passed to a classifier: they end the call
 * with {@link StopReason#CANCELLED}. An attempt that ran past its attempt timeout arrives as an
 * {@link AttemptTimeoutException}, which both built-in classifiers treat as transient.
 */
@FunctionalInterface
public interface Classifier {

  /**
   * Any returned value is a success; timeouts ({@link TimeoutException}, {@link AttemptTimeoutException})
   * and I/O errors ({@link IOException}, {@link UncheckedIOException}) are transient; every other
   * exception is permanent.
   */
  Classifier DEFAULT = Classifier::classifyDefault;

  /**
   * {@link #DEFAULT}, plus the status of a {@link java.net.http.HttpResponse} result: 2xx and 3xx are
   * {@code OK}; 408 and 5xx are transient; 429, and 503 with a {@code Retry-After} header, are
   * throttled (honouring the header, in seconds or as an HTTP date); other 4xx are permanent.
   */
  Classifier HTTP = (result, failure) ->
      result != null ? HttpClassification.classify(result) : classifyDefault(null, failure);

  /** Classifies one attempt's outcome. */
  Verdict classify(@Nullable Object result, @Nullable Throwable failure);

  /** Starts an ordered list of rules; the first rule that matches decides. */
  static Rules rules() {
    return new Rules(List.of(), DEFAULT);
  }

  private static Verdict classifyDefault(@Nullable Object result, @Nullable Throwable failure) {
    if (failure == null) {
      return Verdict.OK;
    }
    if (failure instanceof TimeoutException
        || failure instanceof AttemptTimeoutException
        || failure instanceof IOException
        || failure instanceof UncheckedIOException) {
      return Verdict.TRANSIENT;
    }
    return Verdict.PERMANENT;
  }

  /**
   * An immutable, ordered list of classification rules over exception types and results. Each
   * method returns a new list; the first matching rule decides, and anything no rule matches goes
   * to the fallback ({@link #DEFAULT} unless {@link #otherwise} says otherwise).
   *
   * <pre>{@code
   * Classifier c = Classifier.rules()
   *     .permanentOn(IllegalArgumentException.class)
   *     .transientOn(StaleReadException.class)
   *     .onResult(r -> r instanceof Reply reply && reply.busy(), Verdict.TRANSIENT)
   *     .otherwise(Classifier.DEFAULT);
   * }</pre>
   */
  final class Rules implements Classifier {
    private final List<Rule> rules;
    private final Classifier fallback;

    private Rules(List<Rule> rules, Classifier fallback) {
      this.rules = rules;
      this.fallback = fallback;
    }

    /** Exceptions of these types (and subtypes) are transient. */
    @SafeVarargs
    public final Rules transientOn(Class<? extends Throwable>... types) {
      return onFailure(Verdict.TRANSIENT, types);
    }

    /** Exceptions of these types (and subtypes) are permanent. */
    @SafeVarargs
    public final Rules permanentOn(Class<? extends Throwable>... types) {
      return onFailure(Verdict.PERMANENT, types);
    }

    /** Exceptions of these types (and subtypes) mean the dependency is throttling us. */
    @SafeVarargs
    public final Rules throttledOn(Class<? extends Throwable>... types) {
      return onFailure(Verdict.THROTTLED, types);
    }

    /** Exceptions matching {@code test} get {@code verdict}. */
    public Rules onFailure(Predicate<? super Throwable> test, Verdict verdict) {
      Objects.requireNonNull(test, "test");
      Objects.requireNonNull(verdict, "verdict");
      return add(new Rule(null, test, verdict));
    }

    /** Results (never exceptions) matching {@code test} get {@code verdict}. */
    public Rules onResult(Predicate<@Nullable Object> test, Verdict verdict) {
      Objects.requireNonNull(test, "test");
      Objects.requireNonNull(verdict, "verdict");
      return add(new Rule(test, null, verdict));
    }

    /** What no rule matches goes to {@code fallback}. */
    public Rules otherwise(Classifier fallback) {
      return new Rules(rules, Objects.requireNonNull(fallback, "fallback"));
    }

    @Override
    public Verdict classify(@Nullable Object result, @Nullable Throwable failure) {
      for (Rule rule : rules) {
        if (failure != null ? rule.failureTest != null && rule.failureTest.test(failure)
                            : rule.resultTest != null && rule.resultTest.test(result)) {
          return rule.verdict;
        }
      }
      return fallback.classify(result, failure);
    }

    @SafeVarargs
    private Rules onFailure(Verdict verdict, Class<? extends Throwable>... types) {
      List<Class<? extends Throwable>> list = List.of(types);
      return add(new Rule(null, t -> {
        for (Class<? extends Throwable> type : list) {
          if (type.isInstance(t)) {
            return true;
          }
        }
        return false;
      }, verdict));
    }

    private Rules add(Rule rule) {
      List<Rule> next = new ArrayList<>(rules);
      next.add(rule);
      return new Rules(List.copyOf(next), fallback);
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Rules && ((Rules) o).rules.equals(rules) && ((Rules) o).fallback.equals(fallback);
    }

    @Override
    public int hashCode() {
      return rules.hashCode() * 31 + fallback.hashCode();
    }

    private static final class Rule {
      final @Nullable Predicate<@Nullable Object> resultTest;
      final @Nullable Predicate<? super Throwable> failureTest;
      final Verdict verdict;

      Rule(@Nullable Predicate<@Nullable Object> resultTest, @Nullable Predicate<? super Throwable> failureTest, Verdict verdict) {
        this.resultTest = resultTest;
        this.failureTest = failureTest;
        this.verdict = verdict;
      }
    }
  }
}
