package dev.quell.http;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's own HttpServer on loopback, answering from a script (then 200 "ok", or what {@link #otherwise} says),
 * and counting the exchanges still in progress: an exchange whose response body the client never
 * closes stays in progress, so a count that returns to zero means no connection was left holding a body.
 */
final class JdkServer implements AutoCloseable {
  /** One scripted answer. */
  interface Reply {
    void send(HttpExchange exchange) throws IOException;
  }

  final HttpServer server;
  final HttpContext context;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
  private volatile java.util.function.Supplier<Reply> otherwise = () -> status(200, "ok");
  private final List<Headers> requests = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private int inProgress;
  private int handled;
  private int arrived;

  JdkServer(Filter... filters) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(pool);
    context = server.createContext("/", this::handle);
    context.getFilters().addAll(Arrays.asList(filters));
    server.start();
  }

  /** Answers with {@code replies.get()} once the script is empty. */
  JdkServer otherwise(java.util.function.Supplier<Reply> replies) {
    this.otherwise = replies;
    return this;
  }

  JdkServer then(Reply... replies) {
    script.addAll(List.of(replies));
    return this;
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  /** The request headers of every exchange, in arrival order. */
  List<Headers> requests() {
    return requests;
  }

  int handled() {
    synchronized (lock) {
      return handled;
    }
  }

  int inProgress() {
    synchronized (lock) {
      return inProgress;
    }
  }

  /** Waits until no exchange is in progress; true if that happened within {@code seconds}. */
  boolean awaitIdle(long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    synchronized (lock) {
      while (inProgress > 0) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  /**
   * Waits until at most {@code n} exchanges are in progress; true if that happened within {@code seconds}.
   * A client closing a body is seen by the server only when its next write fails, a moment later.
   */
  boolean awaitInProgressAtMost(int n, long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    synchronized (lock) {
      while (inProgress > n) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  /** Waits until {@code n} exchanges have arrived; true if that happened within {@code seconds}. */
  boolean awaitArrived(int n, long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    synchronized (lock) {
      while (arrived < n) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    synchronized (lock) {
      inProgress++;
      arrived++;
      lock.notifyAll();
    }
    try (exchange) {
      requests.add(exchange.getRequestHeaders());
      try (InputStream in = exchange.getRequestBody()) {
        in.transferTo(OutputStream.nullOutputStream());
      }
      Reply reply = script.poll();
      (reply == null ? otherwise.get() : reply).send(exchange);
    } finally {
      synchronized (lock) {
        inProgress--;
        handled++;
        lock.notifyAll();
      }
    }
  }

  /** A complete answer; {@code headers} are name, value pairs. */
  static Reply status(int code, String body, String... headers) {
    return exchange -> {
      for (int i = 0; i < headers.length; i += 2) {
        exchange.getResponseHeaders().add(headers[i], headers[i + 1]);
      }
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(code, b.length == 0 ? -1 : b.length);
      if (b.length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(b);
        }
      }
    };
  }

  /**
   * An answer whose body never ends: it is written until the client closes the connection. Only a
   * client that closes the body ends this exchange, so it makes an unclosed body visible.
   */
  static Reply endless(int code, String... headers) {
    return exchange -> {
      for (int i = 0; i < headers.length; i += 2) {
        exchange.getResponseHeaders().add(headers[i], headers[i + 1]);
      }
      exchange.sendResponseHeaders(code, 0);
      byte[] chunk = new byte[8192];
      Arrays.fill(chunk, (byte) 'x');
      OutputStream out = exchange.getResponseBody();
      try {
        while (true) {
          out.write(chunk);
          out.flush();
        }
      } catch (IOException closedByClient) {
        // the client closed the body: this exchange is over
      }
    };
  }

  /** Closes the connection without an answer. */
  static Reply drop() {
    return exchange -> {
      throw new IOException("dropped on purpose"); // HttpServer closes the connection of a failed exchange
    };
  }

  @Override
  public void close() throws InterruptedException {
    server.stop(0);
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
