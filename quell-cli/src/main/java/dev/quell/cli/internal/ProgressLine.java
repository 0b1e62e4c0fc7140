package dev.quell.cli.internal;

import dev.quell.sim.Progress;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress line on standard error while a long run goes on, rewritten in place ({@code \r}); only
 * when standard error is a terminal, and only once a run has taken longer than a couple of seconds.
 * Cleared when the run ends, so the table follows on a clean line.
 */
final class ProgressLine implements AutoCloseable {
  private final Progress progress;
  private final PrintWriter err;
  private final long delayMillis;
  private final long started = System.nanoTime();
  private final Thread thread;
  private volatile boolean shown;
  private volatile boolean closed;
  private int width;

  private ProgressLine(Progress progress, PrintWriter err, long delayMillis) {
    this.progress = progress;
    this.err = err;
    this.delayMillis = delayMillis;
    this.thread = new Thread(this::loop, "quell-progress");
    thread.setDaemon(true);
  }

  /** Starts showing {@code progress} on {@code err} after {@code delayMillis}, when {@code terminal}; else a no-op. */
  static ProgressLine start(Progress progress, PrintWriter err, boolean terminal, long delayMillis) {
    ProgressLine line = new ProgressLine(progress, err, delayMillis);
    if (terminal) {
      if (delayMillis <= 0) {
        line.show(); // at once: the run may end before the thread's first turn
      }
      line.thread.start();
    } else {
      line.closed = true;
    }
    return line;
  }

  private void loop() {
    try {
      Thread.sleep(delayMillis);
      while (!closed) {
        show();
        Thread.sleep(250);
      }
    } catch (InterruptedException e) {
      // closed
    }
  }

  private synchronized void show() {
    if (closed) {
      return;
    }
    double f = progress.fraction();
    double elapsed = (System.nanoTime() - started) / 1e9;
    String left = f > 0.02 ? ", about " + Math.max(1, Math.round(elapsed * (1 - f) / f)) + " s left" : "";
    String text = String.format(Locale.ROOT, "simulating: %3.0f%% (%d of %d runs done)%s", 100 * f,
        progress.runsDone(), progress.runsPlanned(), left);
    width = Math.max(width, text.length());
    err.print("\r" + text + " ".repeat(width - text.length()));
    err.flush();
    shown = true;
  }

  /** Stops, and clears the line if anything was shown. */
  @Override
  public void close() {
    if (thread.isAlive()) {
      synchronized (this) {
        closed = true;
      }
      thread.interrupt();
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    closed = true;
    if (shown) {
      err.print("\r" + " ".repeat(width) + "\r");
      err.flush();
    }
  }
}
