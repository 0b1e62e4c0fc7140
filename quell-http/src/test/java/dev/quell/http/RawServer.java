package dev.quell.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small HTTP/1.1 server on raw loopback sockets, for the faults the JDK's HttpServer cannot make: a
 * connection reset (RST) after the request, a server that reads the request and never answers, and
 * answers with exact bytes (a fixed {@code Date} header). It counts connections: open now, and how many
 * the client closed while the server was hanging — the sign that the client aborted the exchange.
 *
 * <p>Each request takes the next action from the script; when the script is empty, it answers 200 "ok".
 */
final class RawServer implements AutoCloseable {
  /** What to do with one request. */
  interface Action {}

  /** Answer with these exact bytes (status line, headers, blank line, body). */
  static final class Respond implements Action {
    final byte[] bytes;

    Respond(String raw) {
      this.bytes = raw.getBytes(StandardCharsets.ISO_8859_1);
    }
  }

  /** Reset the connection (RST, not FIN) once the request has been read. */
  static final Action RESET = new Action() {};
  /** Read the request and never answer; wait for the client to give up and close. */
  static final Action HANG = new Action() {};
  /** Answer 200 with a chunked body that never ends: 1 KiB every 10 ms until the client closes the connection. */
  static final Action ENDLESS = new Endless(200);

  /**
   * An answer with a chunked body that never ends — 1 KiB every 10 ms, so that a client buffering it
   * does not run out of memory first: the server stays busy until the client closes the connection.
   */
  static final class Endless implements Action {
    final int status;

    Endless(int status) {
      this.status = status;
    }
  }

  private final ServerSocket socket;
  private final Thread acceptor;
  private final ConcurrentLinkedQueue<Action> script = new ConcurrentLinkedQueue<>();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final List<Map<String, String>> requests = new CopyOnWriteArrayList<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicInteger busy = new AtomicInteger();
  private final AtomicInteger answered2xx = new AtomicInteger();
  private volatile java.util.function.Supplier<Action> otherwise = () -> respond(200, "", "ok");
  private final Semaphore hangsAbandoned = new Semaphore(0);
  private final Semaphore hanging = new Semaphore(0);
  private final List<Thread> workers = Collections.synchronizedList(new ArrayList<>());
  private volatile boolean closed;

  RawServer() throws IOException {
    socket = new ServerSocket();
    socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    acceptor = new Thread(this::accept, "raw-server-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  RawServer then(Action... actions) {
    script.addAll(List.of(actions));
    return this;
  }

  /** When the script is empty, each request gets {@code actions.get()}. */
  RawServer otherwise(java.util.function.Supplier<Action> actions) {
    this.otherwise = actions;
    return this;
  }

  static Respond respond(int status, String headers, String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    return new Respond("HTTP/1.1 " + status + " X\r\n" + headers + "Content-Length: " + b.length + "\r\n\r\n" + body);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
  }

  /** Connections accepted so far. */
  int connections() {
    return connections.get();
  }

  /** Connections open now. */
  int openConnections() {
    return open.size();
  }

  /**
   * Connections in the middle of an exchange: the request read, the answer not yet written in full (or
   * the server hanging on it). A connection idle between requests — in the client's pool — is not busy.
   */
  int busyConnections() {
    return busy.get();
  }

  /** Answers with a 2xx status written so far (every request that could have been a success). */
  int answered2xx() {
    return answered2xx.get();
  }

  /** The headers of every request, in arrival order, with lower-cased names. */
  List<Map<String, String>> requests() {
    return requests;
  }

  /** Waits until {@code n} hanging requests have been read. */
  boolean awaitHanging(int n, long seconds) throws InterruptedException {
    return hanging.tryAcquire(n, seconds, TimeUnit.SECONDS);
  }

  /** Waits until the client has closed {@code n} connections the server was hanging on. */
  boolean awaitAbandoned(int n, long seconds) throws InterruptedException {
    return hangsAbandoned.tryAcquire(n, seconds, TimeUnit.SECONDS);
  }

  private void accept() {
    while (!closed) {
      Socket s;
      try {
        s = socket.accept();
      } catch (IOException e) {
        return;
      }
      connections.incrementAndGet();
      open.add(s);
      Thread t = new Thread(() -> serve(s), "raw-server-conn");
      t.setDaemon(true);
      workers.add(t);
      t.start();
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        Map<String, String> headers = readRequest(in);
        if (headers == null) {
          return;
        }
        requests.add(headers);
        busy.incrementAndGet();
        try {
          Action action = script.poll();
          if (action == null) {
            action = otherwise.get();
          }
          if (action == RESET) {
            s.setSoLinger(true, 0);
            return; // closing with linger 0 sends RST
          }
          if (action == HANG) {
            hanging.release();
            try {
              while (in.read() >= 0) {
                // wait for the client to give up: read returns -1 when it closes the connection
              }
            } catch (IOException reset) {
              // ... or throws when it resets it: giving up all the same
            }
            hangsAbandoned.release();
            return;
          }
          if (action instanceof Endless) {
            int status = ((Endless) action).status;
            if (status / 100 == 2) {
              answered2xx.incrementAndGet();
            }
            out.write(("HTTP/1.1 " + status + " X\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            byte[] chunk = ("400\r\n" + "x".repeat(1024) + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
            while (true) {
              out.write(chunk); // until the client closes the connection, and the write fails
              out.flush();
              try {
                Thread.sleep(10);
              } catch (InterruptedException e) {
                return; // the server is closing
              }
            }
          }
          byte[] bytes = ((Respond) action).bytes;
          if (bytes.length > 9 && bytes[9] == '2') {
            answered2xx.incrementAndGet();
          }
          out.write(bytes);
          out.flush();
        } finally {
          busy.decrementAndGet();
        }
      }
    } catch (IOException e) {
      // connection gone
    } finally {
      open.remove(s);
    }
  }

  /** Reads one request's head (and discards a Content-Length body); null at end of stream. */
  private static Map<String, String> readRequest(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1
          : b == '\r' ? 1 : 0;
    }
    String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
    Map<String, String> headers = new TreeMap<>();
    headers.put(":request-line", lines[0]);
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
      }
    }
    String length = headers.get("content-length");
    if (length != null) {
      in.readNBytes(Integer.parseInt(length));
    }
    return headers;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    closed = true;
    socket.close();
    for (Socket s : open) {
      s.close();
    }
    acceptor.join(5000);
    synchronized (workers) {
      for (Thread t : workers) {
        t.join(5000);
      }
    }
  }
}
