package dev.quell.spring.internal;

import dev.quell.Draining;
import dev.quell.http.QuellServletFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;

/**
 * quell-http's servlet filter, with each request counted as in flight so that draining waits for it.
 *
 * <p>While draining, a request is counted until its answer has been handed to the connection: the web
 * server stops as soon as nothing is in flight, and a response still in the container's buffer when it
 * does is a dropped connection for the caller, not the 503 DRAINING it should have had.
 */
public final class TrackingServletFilter implements Filter {
  private final QuellServletFilter delegate;
  private final InFlight inFlight;

  public TrackingServletFilter(QuellServletFilter delegate, InFlight inFlight) {
    this.delegate = delegate;
    this.inFlight = inFlight;
  }

  @Override
  public void init(FilterConfig config) throws ServletException {
    delegate.init(config);
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException {
    inFlight.enter();
    boolean answered = false;
    try {
      delegate.doFilter(request, response, chain);
      answered = true;
    } finally {
      try {
        if (answered && Draining.isDraining() && !request.isAsyncStarted()) {
          finish(response);
        }
      } finally {
        inFlight.exit();
      }
    }
  }

  /**
   * Hands what the response holds to the connection: all of it when its length is known, as it is for
   * Quell's own answers. A caller that is gone has nothing to be sent.
   */
  private static void finish(ServletResponse response) {
    try {
      response.flushBuffer();
    } catch (IOException callerGone) {
      // nothing to deliver to
    }
  }

  @Override
  public String toString() {
    return "TrackingServletFilter[" + delegate + "]";
  }
}
