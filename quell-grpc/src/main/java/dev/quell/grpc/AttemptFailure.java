package dev.quell.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * How an attempt made by {@link ResilienceInterceptor} failed: its status and trailers, and whether
 * the caller's own deadline had passed when it ended (then nothing is retried). Made per failed
 * attempt, by our machinery, on a transport thread: it carries no stack trace.
 */
final class AttemptFailure extends StatusRuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean callerDeadlinePassed;

  AttemptFailure(Status status, Metadata trailers, boolean callerDeadlinePassed) {
    super(status, trailers);
    this.callerDeadlinePassed = callerDeadlinePassed;
  }

  boolean callerDeadlinePassed() {
    return callerDeadlinePassed;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this; // our own machinery made it; a trace would say nothing about the caller's code
  }
}
