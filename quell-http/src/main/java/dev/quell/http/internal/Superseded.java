package dev.quell.http.internal;

import dev.quell.internal.Internal;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The responses one call has received, so that every one the caller will never see is closed and its
 * connection given back: a 503 that was retried, an answer that arrived after its attempt timed out,
 * a losing hedge, an answer to a call the caller cancelled. Only the response the call returns is
 * kept open.
 *
 * <p>Thread-safe: answers may arrive on the client's threads while the call moves on. Closing happens
 * outside the lock.
 */
@Internal
public final class Superseded<R> {
  private final Consumer<? super R> closer;
  private final List<R> held = new ArrayList<>(2);
  private boolean ended;
  private @Nullable R kept;

  /** A tracker that closes superseded responses with {@code closer}, which must not throw. */
  public Superseded(Consumer<? super R> closer) {
    this.closer = closer;
  }

  /** An attempt produced {@code response}. After the call has ended it is closed at once, unless it is the one kept. */
  public void received(R response) {
    synchronized (this) {
      if (!ended) {
        held.add(response);
        return;
      }
      if (response == kept) {
        return;
      }
    }
    close(response);
  }

  /** A retry is starting: every response received so far has been superseded. */
  public void supersede() {
    List<R> drop;
    synchronized (this) {
      if (held.isEmpty()) {
        return;
      }
      drop = new ArrayList<>(held);
      held.clear();
    }
    drop.forEach(this::close);
  }

  /** The call ended returning {@code keep} (null when it returns none): close every other response. */
  public void end(@Nullable R keep) {
    List<R> drop = new ArrayList<>(2);
    synchronized (this) {
      ended = true;
      kept = keep;
      for (R r : held) {
        if (r != keep) {
          drop.add(r);
        }
      }
      held.clear();
    }
    drop.forEach(this::close);
  }

  private void close(R response) {
    try {
      closer.accept(response);
    } catch (RuntimeException | LinkageError ignored) {
      // closing is best effort: a broken connection is already gone
    }
  }
}
