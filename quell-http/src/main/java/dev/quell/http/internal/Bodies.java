package dev.quell.http.internal;

import dev.quell.internal.Internal;
import java.net.http.HttpResponse;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * Closes the body of a {@code java.net.http} response nobody will read, so that its connection is
 * released: an {@code InputStream} or a {@code Stream<String>} is closed, a {@code Flow.Publisher} is
 * subscribed to and cancelled. Bodies the client already read in full (a {@code String}, a
 * {@code byte[]}, a file, nothing) hold no connection and need nothing.
 */
@Internal
public final class Bodies {
  private Bodies() {}

  /** Releases {@code response}'s body; never throws. */
  public static void discard(HttpResponse<?> response) {
    discardBody(response.body());
  }

  /** Releases {@code body}; never throws. */
  public static void discardBody(@Nullable Object body) {
    try {
      if (body instanceof AutoCloseable) {
        ((AutoCloseable) body).close(); // InputStream, Stream<String> from ofLines, anything closeable
      } else if (body instanceof Flow.Publisher) {
        ((Flow.Publisher<?>) body).subscribe(CANCELLING);
      }
    } catch (Exception | LinkageError ignored) {
      // best effort: a body that cannot be closed is already broken, and so is its connection
    }
  }

  private static final Flow.Subscriber<Object> CANCELLING = new Flow.Subscriber<>() {
    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      subscription.cancel();
    }

    @Override
    public void onNext(Object item) {}

    @Override
    public void onError(Throwable throwable) {}

    @Override
    public void onComplete() {}
  };
}
