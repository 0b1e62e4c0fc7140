package dev.quell.http.internal;

import dev.quell.AttemptTimeoutException;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.internal.Internal;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * How a call's failure leaves an HTTP client whose methods may throw only {@link IOException} (and,
 * for {@code java.net.http}, {@link InterruptedException}). One place, so that every client reports
 * the same outcome the same way.
 *
 * <p>Every method throws an unchecked failure ({@link RuntimeException}, {@link Error}) as it is and
 * returns the {@code IOException} the caller is to throw for anything else, so a client writes
 * {@code throw Failures.xxx(failure)}.
 */
@Internal
public final class Failures {
  private Failures() {}

  /** How Quell's own refusals and timeouts leave the client. */
  public enum Refusals {
    /**
     * As themselves: {@link CallRejectedException}, {@link DeadlineExceededException} and
     * {@link AttemptTimeoutException} are unchecked and are thrown unchanged (the {@code java.net.http}
     * client, Spring's {@code RestClient}): a server filter up the stack maps them to 503 and 504.
     */
    UNCHANGED,
    /**
     * Wrapped in an {@code IOException}, for a client whose callers expect nothing else (OkHttp, where an
     * unchecked exception would crash an enqueued call's dispatcher thread): a refusal becomes an
     * {@code IOException} whose cause is the refusal, a missed deadline or a last attempt that timed out a
     * {@link SocketTimeoutException} whose cause is Quell's exception.
     */
    AS_IO_EXCEPTION
  }

  /**
   * The {@code IOException} to throw for {@code failure}: an {@code IOException} itself, unchanged; an
   * {@link InterruptedException} as an {@link InterruptedIOException} whose cause it is (the thread's
   * interrupt flag stays set, as Quell keeps it); Quell's refusals as {@code refusals} says; any other
   * checked exception wrapped. Unchecked failures are thrown, not returned.
   */
  public static IOException asIOException(@Nullable Throwable failure, Refusals refusals) {
    if (failure instanceof IOException) {
      return (IOException) failure;
    }
    if (failure instanceof InterruptedException) {
      InterruptedIOException interrupted = new InterruptedIOException(failure.getMessage());
      interrupted.initCause(failure);
      return interrupted;
    }
    if (refusals == Refusals.AS_IO_EXCEPTION) {
      if (failure instanceof DeadlineExceededException || failure instanceof AttemptTimeoutException) {
        SocketTimeoutException timeout = new SocketTimeoutException(failure.getMessage());
        timeout.initCause(failure);
        return timeout;
      }
      if (failure instanceof CallRejectedException) {
        return new IOException(failure.getMessage(), failure);
      }
    }
    throwIfUnchecked(failure);
    return new IOException("request failed", failure);
  }

  /**
   * As {@link #asIOException} with {@link Refusals#UNCHANGED}, for a client that may throw
   * {@link InterruptedException} ({@code java.net.http}): an {@code InterruptedException} is thrown as it is.
   */
  public static IOException asIOExceptionOrInterrupt(@Nullable Throwable failure) throws InterruptedException {
    if (failure instanceof InterruptedException) {
      throw (InterruptedException) failure;
    }
    return asIOException(failure, Refusals.UNCHANGED);
  }

  private static void throwIfUnchecked(@Nullable Throwable failure) {
    if (failure instanceof RuntimeException) {
      throw (RuntimeException) failure;
    }
    if (failure instanceof Error) {
      throw (Error) failure;
    }
  }
}
