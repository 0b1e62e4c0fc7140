package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A scenario's policy may carry the adaptive throttle: {@code limiter: {throttle: K, window: D}}. */
class ThrottleScenarioTest {
  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  private Path scenario(String limiter) throws Exception {
    Path f = dir.resolve("throttle.yaml");
    Files.writeString(f, "name: throttle\nduration: 20s\nload: {perSecond: 200}\n"
        + "dependency: {p50: 20ms, p99: 100ms, capacity: 10, incidents: [{brownout: 8, from: 5s, to: 10s}]}\n"
        + "arms:\n  - name: throttled\n    policy: {attempts: 2, attemptTimeout: 100ms, budget: automatic, limiter: "
        + limiter + "}\n");
    return f;
  }

  @Test
  void aThrottleInAScenarioRefusesFirstAttemptsWhileTheDependencyRejects() throws Exception {
    assertThat(quell.run("simulate", "--scenario", scenario("{throttle: 1.1, window: 5s}").toString(), "--json",
        "--no-chart")).as(quell.err()).isZero();
    assertThat(quell.out()).contains("\"LIMITED\"");
  }

  @Test
  void aBadThrottleIsAOneLineErrorNamingTheSetting() throws Exception {
    assertThat(quell.run("simulate", "--scenario", scenario("{throttle: 0.5}").toString(), "--no-chart")).isEqualTo(2);
    assertThat(quell.err()).contains("throttle k was 0.5").doesNotContain("Exception");
  }
}
