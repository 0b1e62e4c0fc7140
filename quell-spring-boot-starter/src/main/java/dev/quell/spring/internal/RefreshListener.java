package dev.quell.spring.internal;

import dev.quell.spring.QuellPropertiesException;
import java.util.function.Consumer;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;

/**
 * Rebuilds the policies when Spring Cloud's refresh changed {@code quell.*} properties (or could not
 * say which keys changed). Bad new properties are logged and the policies in force kept.
 */
public final class RefreshListener implements ApplicationListener<EnvironmentChangeEvent> {
  private final Runnable reload;
  private final Consumer<QuellPropertiesException> rejected;

  public RefreshListener(Runnable reload) {
    this(reload, PolicyRegistry::logRejected);
  }

  RefreshListener(Runnable reload, Consumer<QuellPropertiesException> rejected) {
    this.reload = reload;
    this.rejected = rejected;
  }

  @Override
  public void onApplicationEvent(EnvironmentChangeEvent event) {
    if (event.getKeys().isEmpty() || event.getKeys().stream().anyMatch(k -> k.startsWith("quell.") || k.startsWith("QUELL_"))) {
      try {
        reload.run();
      } catch (QuellPropertiesException e) {
        rejected.accept(e);
      }
    }
  }
}
