package dev.quell.internal;

import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Asynchronous work that can say an attempt answered while {@code start} ran without making a
 * stage for it: {@code start} returns {@link #ANSWERED}, and the driver reads the answer from
 * {@link #answerFailure()} and {@link #answerValue()} at once, on the same thread, before it starts
 * anything else of the call. quell-kotlin's suspend calls implement it, so a suspend function that
 * returns without suspending costs no future per attempt.
 *
 * <p>When the call then ends on that value in place (the asynchronous first-attempt lane and the
 * retry loop it goes on in), {@code executeAsync} returns {@link #ANSWERED} too instead of a
 * completed future: the call's value is {@link #answerValue()}. The outcome style always returns a
 * future of its outcome.
 */
@Internal
public interface InPlaceWork {

  /**
   * What {@code start} and {@code executeAsync} return for an answer given in place. Failed from the
   * start with an {@code IllegalStateException}, so that code that mistakes it for a stage learns
   * so at once instead of waiting for ever.
   */
  CompletableFuture<Object> ANSWERED = new Answered();

  /** The value of the attempt that last answered in place (when {@link #answerFailure()} is null). */
  @Nullable Object answerValue();

  /** The failure of the attempt that last answered in place, or null when it answered with a value. */
  @Nullable Throwable answerFailure();

  /** {@link #ANSWERED}: a marker, which nothing else completes, cancels or obtrudes a value on. */
  final class Answered extends CompletableFuture<Object> {
    private Answered() {
      super.completeExceptionally(new IllegalStateException(
          "InPlaceWork.ANSWERED is a marker, not a stage: the answer is the work's (answerValue, answerFailure)"));
    }

    @Override
    public boolean complete(@Nullable Object value) {
      return false;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
      return false;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return false;
    }

    @Override
    public void obtrudeValue(@Nullable Object value) {
      // a marker: it holds no value
    }

    @Override
    public void obtrudeException(Throwable ex) {
      // a marker: it holds no failure
    }

    @Override
    public String toString() {
      return "InPlaceWork.ANSWERED";
    }
  }
}
