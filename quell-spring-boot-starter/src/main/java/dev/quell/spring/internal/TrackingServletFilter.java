package dev.quell.spring.internal;

import dev.quell.http.QuellServletFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;

/** quell-http's servlet filter, with each request counted as in flight so that draining waits for it. */
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
    try {
      delegate.doFilter(request, response, chain);
    } finally {
      inFlight.exit();
    }
  }

  @Override
  public String toString() {
    return "TrackingServletFilter[" + delegate + "]";
  }
}
