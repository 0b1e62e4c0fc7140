package dev.quell.grpc;

import dev.quell.Classifier;
import dev.quell.Verdict;
import dev.quell.internal.Problems;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Classifies gRPC outcomes by status code, honouring the server's pushback
 * ({@code grpc-retry-pushback-ms}, gRFC A6).
 *
 * <p>{@link #DEFAULT}:
 * <ul>
 *   <li>{@code OK} is a success;
 *   <li>{@code UNAVAILABLE} is transient (the server did not process the call, or is restarting);
 *   <li>{@code RESOURCE_EXHAUSTED} is throttled: the server or a limiter asks us to slow down;
 *   <li>{@code DEADLINE_EXCEEDED} is transient while the call's own deadline has time left: it then
 *       means one attempt ran out of time, and a retry may still answer in time;
 *   <li>every other code is permanent.
 * </ul>
 *
 * <p>Pushback: a failed status whose trailers carry {@code grpc-retry-pushback-ms} is retried after
 * exactly that many milliseconds when its code is retryable (the wait replaces the backoff, capped
 * by the backoff's maximum); a negative or unparseable pushback means the server asks not to be
 * retried, and the verdict is permanent whatever the code. A pushback on a code this classifier
 * calls permanent does not make it retryable (grpc-java's own retry would retry it; here the status
 * code decides whether, the pushback only when).
 *
 * <p>It classifies {@link StatusRuntimeException} and {@link StatusException} from any code, so it
 * also works around a blocking stub call inside {@code policy.execute(...)}. Other failures go to
 * {@link Classifier#DEFAULT} (timeouts and I/O errors transient, the rest permanent). Immutable and
 * thread-safe.
 */
public final class GrpcClassifier implements Classifier {

  /** UNAVAILABLE and DEADLINE_EXCEEDED transient, RESOURCE_EXHAUSTED throttled, the rest permanent. */
  public static final GrpcClassifier DEFAULT = new GrpcClassifier(defaultKinds());

  private static final Status.Code[] CODES = Status.Code.values();

  /** The verdict kind of each status code, indexed by {@link Status.Code#ordinal()}. */
  private final Verdict.Kind[] kinds;

  private GrpcClassifier(Verdict.Kind[] kinds) {
    this.kinds = kinds;
  }

  private static Verdict.Kind[] defaultKinds() {
    Verdict.Kind[] kinds = new Verdict.Kind[Status.Code.values().length];
    Arrays.fill(kinds, Verdict.Kind.PERMANENT);
    kinds[Status.Code.OK.ordinal()] = Verdict.Kind.OK;
    kinds[Status.Code.UNAVAILABLE.ordinal()] = Verdict.Kind.TRANSIENT;
    kinds[Status.Code.DEADLINE_EXCEEDED.ordinal()] = Verdict.Kind.TRANSIENT;
    kinds[Status.Code.RESOURCE_EXHAUSTED.ordinal()] = Verdict.Kind.THROTTLED;
    return kinds;
  }

  /**
   * A copy in which {@code code} gets {@code kind}: {@code TRANSIENT} or {@code THROTTLED} to retry
   * it, {@code PERMANENT} not to.
   *
   * <pre>{@code
   * GrpcClassifier classifier = GrpcClassifier.DEFAULT
   *     .with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT)          // optimistic-concurrency conflicts
   *     .with(Status.Code.DEADLINE_EXCEEDED, Verdict.Kind.PERMANENT); // never repeat slow, non-idempotent work
   * }</pre>
   *
   * @throws dev.quell.ResilienceConfigurationException if {@code code} is {@code OK} (a success stays
   *     one) or {@code kind} is {@code OK} (a failed status cannot be a success)
   */
  public GrpcClassifier with(Status.Code code, Verdict.Kind kind) {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(kind, "kind");
    new Problems()
        .require(code != Status.Code.OK, "status code", code, "OK is always a success and cannot be reclassified")
        .require(kind != Verdict.Kind.OK, "verdict for " + code, kind,
            "a failed status cannot be a success; use PERMANENT not to retry it")
        .throwIfAny();
    Verdict.Kind[] copy = kinds.clone();
    copy[code.ordinal()] = kind;
    return new GrpcClassifier(copy);
  }

  /** The verdict kind this classifier gives {@code code} when the server sends no pushback. */
  public Verdict.Kind kindOf(Status.Code code) {
    return kinds[code.ordinal()];
  }

  /**
   * The verdict for a call that ended with {@code status} and {@code trailers}: by code, then
   * adjusted by the server's pushback as described on the class.
   */
  public Verdict classify(Status status, @Nullable Metadata trailers) {
    Verdict.Kind kind = kinds[status.getCode().ordinal()];
    if (kind == Verdict.Kind.OK) {
      return Verdict.OK;
    }
    long pushback = QuellMetadata.pushbackMillis(trailers);
    if (pushback != QuellMetadata.NO_PUSHBACK) {
      if (pushback < 0) {
        return Verdict.PERMANENT; // the server asks not to be retried
      }
      if (kind != Verdict.Kind.PERMANENT) {
        return Verdict.throttled(Duration.ofMillis(pushback));
      }
    }
    switch (kind) {
      case TRANSIENT:
        return Verdict.TRANSIENT;
      case THROTTLED:
        return Verdict.THROTTLED;
      default:
        return Verdict.PERMANENT;
    }
  }

  /**
   * Classifies one attempt: any returned value is a success; a {@link StatusRuntimeException} or
   * {@link StatusException} by its status and trailers; anything else as {@link Classifier#DEFAULT}
   * does. An attempt made by {@link ResilienceInterceptor} that failed after the caller's own
   * deadline (CallOptions or gRPC Context) had passed is permanent, whatever its code.
   */
  @Override
  public Verdict classify(@Nullable Object result, @Nullable Throwable failure) {
    if (failure == null) {
      return Verdict.OK;
    }
    if (failure instanceof AttemptFailure && ((AttemptFailure) failure).callerDeadlinePassed()) {
      return Verdict.PERMANENT; // the caller has stopped waiting: nothing to retry for
    }
    if (failure instanceof StatusRuntimeException) {
      StatusRuntimeException e = (StatusRuntimeException) failure;
      return classify(e.getStatus(), e.getTrailers());
    }
    if (failure instanceof StatusException) {
      StatusException e = (StatusException) failure;
      return classify(e.getStatus(), e.getTrailers());
    }
    return Classifier.DEFAULT.classify(null, failure);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof GrpcClassifier && Arrays.equals(((GrpcClassifier) o).kinds, kinds);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(kinds);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("GrpcClassifier[");
    boolean first = true;
    for (Status.Code code : CODES) {
      Verdict.Kind kind = kinds[code.ordinal()];
      if (kind != Verdict.Kind.PERMANENT && kind != Verdict.Kind.OK) {
        sb.append(first ? "" : ", ").append(code).append('=').append(kind);
        first = false;
      }
    }
    return sb.append(", others PERMANENT]").toString();
  }
}
