package dev.quell.spring;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * For tests whose contexts fail to start on purpose: Spring's warning that a context's refresh was
 * cancelled (with the whole exception) stays off the console; the test asserts the failure itself.
 */
final class QuietContextFailures implements BeforeEachCallback, AfterEachCallback {
  private static final String CONTEXT = "org.springframework.context";

  @Override
  public void beforeEach(ExtensionContext context) {
    ((Logger) LoggerFactory.getLogger(CONTEXT)).setLevel(Level.ERROR);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    ((Logger) LoggerFactory.getLogger(CONTEXT)).setLevel(null);
  }
}
