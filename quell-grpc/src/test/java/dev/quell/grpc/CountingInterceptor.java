package dev.quell.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A per-attempt metrics interceptor, as a user installs one below Quell: it opens a "span" when a
 * call starts and ends it when the call's listener hears {@code onClose}. Every span it opens must
 * end, or a tracing backend leaks it.
 */
final class CountingInterceptor implements ClientInterceptor {
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
      @Override
      public void start(Listener<RespT> responseListener, Metadata headers) {
        opened.incrementAndGet();
        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(responseListener) {
          @Override
          public void onClose(Status status, Metadata trailers) {
            try {
              super.onClose(status, trailers);
            } finally {
              ended();
            }
          }
        }, headers);
      }
    };
  }

  int opened() {
    return opened.get();
  }

  int closed() {
    return closed.get();
  }

  private synchronized void ended() {
    closed.incrementAndGet();
    notifyAll();
  }

  /**
   * Waits up to {@code seconds} for every span opened so far to end (the last closes travel from the
   * transport's threads); returns how many are still open.
   */
  synchronized int openAfter(long seconds) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    long left;
    while (opened.get() != closed.get() && (left = until - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return opened.get() - closed.get();
  }
}
