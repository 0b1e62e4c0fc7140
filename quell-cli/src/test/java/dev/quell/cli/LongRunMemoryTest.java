package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §9: memory is bounded by simulated seconds, not by calls. A day at 1,000 calls a second (86.4
 * million calls, the reference brownout in the middle of it) runs through the real command, chart
 * included, in a JVM held to 512 MB of heap.
 */
class LongRunMemoryTest {
  @TempDir
  Path dir;

  @Test
  void aDayAtAThousandCallsASecondRunsIn512MegabytesOfHeap() throws Exception {
    Path day = dir.resolve("day.yaml");
    Files.writeString(day, String.join("\n",
        "name: day",
        "duration: 24h",
        "load: {perSecond: 1000}",
        "dependency:",
        "  p50: 20ms",
        "  p99: 100ms",
        "  capacity: 400",
        "  incidents: [{brownout: 8, from: 12h, to: 12h1m}]",
        "arms:",
        "  - name: budget on",
        "    policy: {attempts: 3, attemptTimeout: 160ms, backoff: 50ms, deadline: 1s, budget: automatic}",
        ""));
    Path chart = dir.resolve("day.png");
    // over the attempt limit (up to 259 million attempts), so it needs the confirmation
    Process p = JavaProcess.quell(dir, "-Xmx512m", "simulate", "--scenario", day.toString(), "--chart",
        chart.toString(), "--allow-large").start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(30, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).doesNotContain("OutOfMemoryError")
        .containsPattern("calls\\s+86,[0-9]{3},[0-9]{3}")
        .contains("Simulated 1 run of 24:00:00");
    assertThat(chart).exists();
  }
}
