package dev.quell.spring.internal;

import dev.quell.Draining;
import dev.quell.spring.QuellProperties;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Begins {@link Draining} when the application shuts down, in a phase just below the web server's
 * graceful shutdown ({@code WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE - 1}): higher phases stop
 * first, so while in-flight inbound requests finish, their outbound calls work as usual (retries and
 * all); then draining begins, and whatever is still in flight — background work, requests that outlived
 * the graceful wait — gets at most the grace, makes no new attempts, and ends with {@code DRAINING}. The
 * phase holds the shutdown until the calls and requests the starter runs have ended, or the grace and then
 * {@code quell.draining.answer-time} have passed — the calls the grace ends still have answers to write — so
 * the web server (stopped in a lower phase) is still there to send them.
 *
 * <p>Draining is process-wide and one-way, so by default it begins only when the JVM itself is shutting
 * down (SIGTERM, {@code System.exit}, the end of {@code main}): a context that closes in a JVM that goes on
 * — a devtools restart, a test's context — does not drain ({@code quell.draining.on-context-close}).
 */
public final class DrainingLifecycle implements SmartLifecycle {
  /** {@code WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE - 1}, without needing the web server on the class path. */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024 - 1;

  // Spring's own logging: java.util.logging (behind System.Logger) resets its handlers when the JVM begins to shut down
  private static final Log LOG = LogFactory.getLog("dev.quell.spring");

  private final Supplier<QuellProperties.Draining> settings;
  private final InFlight inFlight;
  private final BooleanSupplier jvmShuttingDown;
  private volatile boolean running;

  /** @param settings read when the application stops, so a refresh of quell.draining.* applies */
  public DrainingLifecycle(Supplier<QuellProperties.Draining> settings, InFlight inFlight) {
    this(settings, inFlight, DrainingLifecycle::jvmShuttingDown);
  }

  DrainingLifecycle(Supplier<QuellProperties.Draining> settings, InFlight inFlight, BooleanSupplier jvmShuttingDown) {
    this.settings = settings;
    this.inFlight = inFlight;
    this.jvmShuttingDown = jvmShuttingDown;
  }

  @Override
  public void start() {
    running = true;
  }

  @Override
  public void stop() {
    stop(() -> {});
  }

  @Override
  public void stop(Runnable callback) {
    running = false;
    QuellProperties.Draining settings = this.settings.get();
    if (!settings.isEnabled() || !(settings.isOnContextClose() || jvmShuttingDown.getAsBoolean())) {
      callback.run();
      return;
    }
    Duration grace = settings.getGrace();
    boolean began = Draining.begin(grace);
    LOG.info("quell.draining: " + (began ? "began" : "already began") + ", grace " + grace
        + ", " + inFlight.count() + " calls and requests in flight");
    if (inFlight.count() == 0) {
      callback.run();
      return;
    }
    Duration answerTime = settings.getAnswerTime();
    Thread waiter = new Thread(() -> {
      try {
        boolean idle = inFlight.awaitIdle(grace);
        if (!idle) {
          // the grace just ended the calls still running: their requests are writing a 503 DRAINING now, and
          // the web server (a lower phase) must not stop before those answers are out
          LOG.info("quell.draining: grace over, " + inFlight.count() + " still in flight; up to " + answerTime
              + " for their answers");
          idle = inFlight.awaitIdle(answerTime);
        }
        LOG.info("quell.draining: " + (idle ? "nothing left in flight"
            : inFlight.count() + " still in flight after the grace and the answer time"));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        callback.run();
      }
    }, "quell-draining");
    waiter.setDaemon(true);
    waiter.start();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** True while the JVM runs its shutdown hooks: a hook can no longer be added then. */
  static boolean jvmShuttingDown() {
    Thread probe = new Thread(() -> {}, "quell-shutdown-probe");
    try {
      Runtime.getRuntime().addShutdownHook(probe);
    } catch (IllegalStateException shuttingDown) {
      return true;
    }
    Runtime.getRuntime().removeShutdownHook(probe);
    return false;
  }
}
