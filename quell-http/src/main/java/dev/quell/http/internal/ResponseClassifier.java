package dev.quell.http.internal;

import dev.quell.Classifier;
import dev.quell.Verdict;
import dev.quell.internal.HttpClassification;
import dev.quell.internal.Internal;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Wraps a policy's classifier for an HTTP client whose responses the core does not know (OkHttp's), and
 * for {@code java.net.http} so that an HTTP-date without a {@code Date} header is measured from a clock
 * the client chose. The status rules and the Retry-After reader are the core's own
 * ({@link HttpClassification}), so every client reads a response the same way.
 *
 * <ul>
 *   <li>{@link Classifier#HTTP} is taken to mean "HTTP status rules" for whatever response type the
 *       client has: 2xx/3xx OK, 408 and 5xx transient, 429 and 503-with-Retry-After throttled, other
 *       4xx permanent; failures as {@link Classifier#DEFAULT}.
 *   <li>Any other classifier decides as it likes; then, if its verdict is retryable and the answer is a
 *       429 or 503 (or the verdict already says throttled) with a readable Retry-After, the verdict
 *       becomes {@code THROTTLED} with that wait.
 * </ul>
 */
@Internal
public final class ResponseClassifier implements Classifier {

  /** How to read a response of the client's type. */
  public interface Access {
    /** The status code, or -1 when {@code result} is not a response of this client. */
    int status(Object result);

    /** The first value of header {@code name}, or null. Only called when {@link #status} was not -1. */
    @Nullable String header(Object result, String name);
  }

  private final Classifier classifier;
  private final Access access;
  private final Clock clock;

  private ResponseClassifier(Classifier classifier, Access access, Clock clock) {
    this.classifier = classifier;
    this.access = access;
    this.clock = clock;
  }

  /** {@code classifier}, made to read responses through {@code access}; wall time from the system clock. */
  public static Classifier wrap(Classifier classifier, Access access) {
    return wrap(classifier, access, Clock.systemUTC());
  }

  /** As {@link #wrap(Classifier, Access)}, reading wall time (for HTTP-dates without a Date header) from {@code clock}. */
  public static Classifier wrap(Classifier classifier, Access access, Clock clock) {
    Objects.requireNonNull(classifier, "classifier");
    if (classifier instanceof ResponseClassifier && ((ResponseClassifier) classifier).access == access) {
      return classifier; // already wrapped for this client
    }
    return new ResponseClassifier(classifier, access, clock);
  }

  @Override
  @SuppressWarnings("ConstantConditions") // a user's classifier may return null all the same
  public Verdict classify(@Nullable Object result, @Nullable Throwable failure) {
    if (result == null) {
      return orPermanent(classifier.classify(null, failure));
    }
    int status = access.status(result);
    if (status < 0) {
      return orPermanent(classifier.classify(result, failure));
    }
    if (classifier == Classifier.HTTP) {
      return HttpClassification.classifyStatus(status, access.header(result, HttpClassification.RETRY_AFTER),
          access.header(result, HttpClassification.DATE), clock.instant());
    }
    Verdict verdict = orPermanent(classifier.classify(result, failure));
    if (!verdict.isRetryable()) {
      return verdict;
    }
    if (verdict.kind() != Verdict.Kind.THROTTLED && status != 429 && status != 503) {
      return verdict; // a Retry-After on, say, a 500 is not an ask to slow down
    }
    Duration wait = HttpClassification.parseRetryAfter(access.header(result, HttpClassification.RETRY_AFTER),
        access.header(result, HttpClassification.DATE), clock.instant());
    return wait == null ? verdict : Verdict.throttled(wait);
  }

  private static Verdict orPermanent(@Nullable Verdict v) {
    return v == null ? Verdict.PERMANENT : v; // as the core reads a null verdict
  }

  /** The classifier this one wraps. */
  public Classifier wrapped() {
    return classifier;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof ResponseClassifier && ((ResponseClassifier) o).classifier.equals(classifier)
        && ((ResponseClassifier) o).access == access && ((ResponseClassifier) o).clock.equals(clock);
  }

  @Override
  public int hashCode() {
    return classifier.hashCode() * 31 + access.hashCode();
  }

  @Override
  public String toString() {
    return "ResponseClassifier[" + classifier + "]";
  }
}
