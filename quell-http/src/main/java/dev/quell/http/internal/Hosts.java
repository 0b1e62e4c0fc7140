package dev.quell.http.internal;

import dev.quell.internal.Internal;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The per-host scope key: the host, lower-cased, with the port when it is not the scheme's default. */
@Internal
public final class Hosts {
  private Hosts() {}

  /** The key for a request to {@code scheme://host:port}; {@code port} is -1 when absent. */
  public static String key(@Nullable String scheme, @Nullable String host, int port) {
    String h = host == null || host.isEmpty() ? "unknown-host" : host.toLowerCase(Locale.ROOT);
    if (port < 0 || (port == 80 && "http".equalsIgnoreCase(scheme)) || (port == 443 && "https".equalsIgnoreCase(scheme))) {
      return h;
    }
    return h + ":" + port;
  }
}
