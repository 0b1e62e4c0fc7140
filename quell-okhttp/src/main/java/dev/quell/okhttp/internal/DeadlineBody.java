package dev.quell.okhttp.internal;

import dev.quell.internal.Internal;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.ResponseBody;
import okio.AsyncTimeout;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import org.jspecify.annotations.Nullable;

/**
 * A response body that can be read only until the call's deadline. The read timeout bounds each read,
 * so a server that sends a few bytes now and then would otherwise keep the caller reading for as long
 * as it likes. At the deadline the call is cancelled (its connection closed), and the read in progress,
 * or the next one, fails with a {@link SocketTimeoutException}. Reading to the end or closing the body
 * first disarms it.
 */
@Internal
public final class DeadlineBody extends ResponseBody {
  private final ResponseBody body;
  private final Watch watch;
  private final BufferedSource source;

  private DeadlineBody(ResponseBody body, Call call, long deadlineNanoTime) {
    this.body = body;
    this.watch = new Watch(call);
    watch.deadlineNanoTime(deadlineNanoTime);
    watch.enter();
    this.source = Okio.buffer(new ForwardingSource(body.source()) {
      @Override
      public long read(Buffer sink, long byteCount) throws IOException {
        if (watch.expired) {
          throw watch.timeout(null);
        }
        long read;
        try {
          read = super.read(sink, byteCount);
        } catch (IOException e) {
          watch.end();
          throw watch.expired ? watch.timeout(e) : e;
        }
        if (read == -1) {
          watch.end();
        }
        return read;
      }

      @Override
      public void close() throws IOException {
        watch.end();
        super.close();
      }
    });
  }

  /** {@code body}, readable until {@code deadlineNanoTime} ({@link System#nanoTime()}); after that {@code call} is cancelled. */
  public static DeadlineBody of(ResponseBody body, Call call, long deadlineNanoTime) {
    return new DeadlineBody(body, call, deadlineNanoTime);
  }

  @Override
  public @Nullable MediaType contentType() {
    return body.contentType();
  }

  @Override
  public long contentLength() {
    return body.contentLength();
  }

  @Override
  public BufferedSource source() {
    return source;
  }

  /** Cancels the call when the deadline passes, on okio's watchdog thread. */
  private static final class Watch extends AsyncTimeout {
    private final Call call;
    private final AtomicBoolean ended = new AtomicBoolean();
    volatile boolean expired;

    Watch(Call call) {
      this.call = call;
    }

    @Override
    protected void timedOut() {
      if (!ended.get()) {
        expired = true;
        call.cancel();
      }
    }

    void end() {
      if (ended.compareAndSet(false, true)) {
        exit();
      }
    }

    SocketTimeoutException timeout(@Nullable IOException cause) {
      SocketTimeoutException e = new SocketTimeoutException("the call's deadline passed while its response body was being read");
      if (cause != null) {
        e.initCause(cause);
      }
      return e;
    }
  }
}
