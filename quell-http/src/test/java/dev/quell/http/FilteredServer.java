package dev.quell.http;

import com.sun.net.httpserver.HttpServer;
import dev.quell.ResilienceContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * One handler behind one of Quell's two server filters: the JDK HttpServer with
 * {@link QuellHttpServerFilter}, or Jetty 12 (ee10 servlets) with {@link QuellServletFilter}.
 */
abstract class FilteredServer implements AutoCloseable {

  /** What the handler does; it may throw, and the filter sees what it throws. */
  interface Handler {
    /** Returns the body of a 200 answer. {@code attribute} reads a request attribute. */
    String handle(Exchange exchange) throws Exception;
  }

  /** What a handler can see and do. */
  interface Exchange {
    Object attribute(String name);

    /** Sends a 200 with part of a body, committing the response, before the handler goes on. */
    void commitPartly() throws IOException;
  }

  /** Which server and filter. */
  enum Kind {
    JDK {
      @Override
      FilteredServer start(Handler handler, ResilienceContext.Inbound inbound, String trustedHeader) throws Exception {
        return new Jdk(handler, inbound, trustedHeader);
      }
    },
    JETTY {
      @Override
      FilteredServer start(Handler handler, ResilienceContext.Inbound inbound, String trustedHeader) throws Exception {
        return new Jetty(handler, inbound, trustedHeader);
      }
    };

    /** Starts the server; requests carrying {@code trustedHeader} may claim CRITICAL_PLUS. */
    abstract FilteredServer start(Handler handler, ResilienceContext.Inbound inbound, String trustedHeader) throws Exception;
  }

  final AtomicInteger handled = new AtomicInteger();

  abstract URI uri(String path);

  /** A body describing the context the handler runs in: remaining deadline in ms (or "none") and criticality. */
  static String describeContext() {
    ResilienceContext c = ResilienceContext.current();
    return c.remaining().map(d -> Long.toString(d.toMillis())).orElse("none") + " " + c.criticality();
  }

  private static final class Jdk extends FilteredServer {
    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    Jdk(Handler handler, ResilienceContext.Inbound inbound, String trustedHeader) throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.setExecutor(pool);
      server.createContext("/", exchange -> {
        handled.incrementAndGet();
        String body;
        try {
          body = handler.handle(new Exchange() {
            @Override
            public Object attribute(String name) {
              return exchange.getAttribute(name);
            }

            @Override
            public void commitPartly() throws IOException {
              exchange.sendResponseHeaders(200, 0);
              exchange.getResponseBody().write("partial".getBytes(StandardCharsets.UTF_8));
              exchange.getResponseBody().flush();
            }
          });
        } catch (IOException | RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IOException(e);
        }
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, b.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(b);
        }
      }).getFilters().add(new QuellHttpServerFilter(inbound, exchange -> exchange.getRequestHeaders().containsKey(trustedHeader)));
      server.start();
    }

    @Override
    URI uri(String path) {
      return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    @Override
    public void close() throws InterruptedException {
      server.stop(0);
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static final class Jetty extends FilteredServer {
    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);

    Jetty(Handler handler, ResilienceContext.Inbound inbound, String trustedHeader) throws Exception {
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler();
      context.setContextPath("/");
      context.addServlet(new ServletHolder(new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException {
          handled.incrementAndGet();
          String body;
          try {
            body = handler.handle(new Exchange() {
              @Override
              public Object attribute(String name) {
                return request.getAttribute(name);
              }

              @Override
              public void commitPartly() throws IOException {
                response.setStatus(200);
                response.getOutputStream().write("partial".getBytes(StandardCharsets.UTF_8));
                response.flushBuffer();
              }
            });
          } catch (IOException | ServletException | RuntimeException e) {
            throw e;
          } catch (Exception e) {
            throw new ServletException(e);
          }
          response.setStatus(200);
          response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
        }
      }), "/*");
      Function<HttpServletRequest, Boolean> trusted = r -> r.getHeader(trustedHeader) != null;
      context.addFilter(new FilterHolder(new QuellServletFilter(inbound, trusted::apply)), "/*",
          EnumSet.of(DispatcherType.REQUEST));
      server.setHandler(context);
      server.start();
    }

    @Override
    URI uri(String path) {
      return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    @Override
    public void close() throws Exception {
      server.stop();
    }
  }
}
