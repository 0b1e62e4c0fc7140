package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** A call listener that records what it hears and checks the listener contract as it goes. */
class RecordingListener extends ClientCall.Listener<String> {
  private final List<String> events = new ArrayList<>();
  private final List<String> violations = new ArrayList<>();
  private final List<String> messages = new ArrayList<>();
  private final CountDownLatch closed = new CountDownLatch(1);
  private @Nullable Metadata headers;
  private @Nullable Status status;
  private @Nullable Metadata trailers;
  private int closes;
  private boolean inCallback;

  @Override
  public synchronized void onHeaders(Metadata h) {
    enter("headers");
    if (headers != null || !messages.isEmpty()) {
      violations.add("headers after headers or messages");
    }
    headers = h;
    leave();
  }

  @Override
  public synchronized void onMessage(String message) {
    enter("message " + message);
    messages.add(message);
    leave();
  }

  @Override
  public synchronized void onClose(Status s, Metadata t) {
    enter("close " + s.getCode());
    closes++;
    status = s;
    trailers = t;
    leave();
    closed.countDown();
  }

  private void enter(String event) {
    if (inCallback) {
      violations.add("callbacks overlapped at " + event);
    }
    inCallback = true;
    if (closes > 0) {
      violations.add(event + " after close");
    }
    events.add(event);
  }

  private void leave() {
    inCallback = false;
  }

  /** Waits for the close and checks the call ended exactly once, with nothing after it. */
  Status awaitClose() throws InterruptedException {
    assertThat(closed.await(10, TimeUnit.SECONDS)).as("the call should close").isTrue();
    synchronized (this) {
      assertThat(violations).as("listener contract, events %s", events).isEmpty();
      assertThat(closes).as("closes").isEqualTo(1);
      return status;
    }
  }

  boolean closedWithin(long millis) throws InterruptedException {
    return closed.await(millis, TimeUnit.MILLISECONDS);
  }

  synchronized List<String> messages() {
    return List.copyOf(messages);
  }

  synchronized @Nullable Metadata headers() {
    return headers;
  }

  synchronized Metadata trailers() {
    return trailers;
  }

  synchronized int closes() {
    return closes;
  }

  synchronized List<String> violations() {
    return List.copyOf(violations);
  }

  synchronized List<String> events() {
    return List.copyOf(events);
  }
}
