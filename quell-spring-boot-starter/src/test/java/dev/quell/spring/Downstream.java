package dev.quell.spring;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A real HTTP server on loopback standing in for a dependency: each path answers from a script (the last
 * answer repeats), may hold a request until the test lets it go, and records the headers of every request.
 */
public final class Downstream implements AutoCloseable {
  /** One answer: a status and body; optionally held until {@code release} opens. */
  public record Answer(int status, String body, Map<String, String> headers, CountDownLatch release) {
    public static Answer ok(String body) {
      return new Answer(200, body, Map.of(), new CountDownLatch(0));
    }

    public static Answer status(int status) {
      return new Answer(status, "{\"status\":" + status + "}", Map.of(), new CountDownLatch(0));
    }

    /** This answer, given only once {@code release} opens. */
    public Answer heldUntil(CountDownLatch release) {
      return new Answer(status, body, headers, release);
    }
  }

  /** A request as the dependency saw it. */
  public record Seen(String path, String method, Map<String, String> headers) {
    public String header(String name) {
      return headers.get(name.toLowerCase(java.util.Locale.ROOT));
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "downstream");
    t.setDaemon(true);
    return t;
  });
  private final Map<String, List<Answer>> scripts = new ConcurrentHashMap<>();
  private final Map<String, Integer> next = new ConcurrentHashMap<>();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();

  private Downstream() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  public static Downstream start() {
    try {
      return new Downstream();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:PORT} */
  public String url() {
    return "http://127.0.0.1:" + port();
  }

  /** The host key Quell gives this server: {@code 127.0.0.1:PORT}. */
  public String host() {
    return "127.0.0.1:" + port();
  }

  /** Requests to {@code path} get these answers in turn, then the last one for ever. Unscripted paths answer 200 "ok". */
  public Downstream script(String path, Answer... answers) {
    scripts.put(path, List.of(answers));
    next.put(path, 0);
    return this;
  }

  /** The requests to {@code path} so far, in order. */
  public List<Seen> seen(String path) {
    List<Seen> out = new ArrayList<>();
    for (Seen s : seen) {
      if (s.path().equals(path)) {
        out.add(s);
      }
    }
    return out;
  }

  /** Waits until {@code path} has been asked {@code count} times; fails after {@code timeout}. */
  public void awaitSeen(String path, int count, java.time.Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    synchronized (seen) {
      while (seen(path).size() < count) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(path + " was asked " + seen(path).size() + " times, not " + count);
        }
        TimeUnit.NANOSECONDS.timedWait(seen, left);
      }
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    Map<String, String> headers = new ConcurrentHashMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(java.util.Locale.ROOT), String.join(",", v)));
    synchronized (seen) {
      seen.add(new Seen(path, exchange.getRequestMethod(), headers));
      seen.notifyAll();
    }
    Answer answer = answerFor(path);
    try {
      if (!answer.release().await(60, TimeUnit.SECONDS)) {
        exchange.close();
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exchange.close();
      return;
    }
    byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
    answer.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
    exchange.getResponseHeaders().set("Content-Type", "text/plain");
    try (OutputStream out = exchange.getResponseBody()) {
      exchange.sendResponseHeaders(answer.status(), body.length);
      out.write(body);
    } catch (IOException clientGone) {
      // the client gave up on this attempt (a timeout, a lost hedge): nothing to answer
    }
  }

  private synchronized Answer answerFor(String path) {
    List<Answer> script = scripts.get(path);
    if (script == null || script.isEmpty()) {
      return Answer.ok("ok");
    }
    int i = next.merge(path, 1, Integer::sum) - 1;
    return script.get(Math.min(i, script.size() - 1));
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
