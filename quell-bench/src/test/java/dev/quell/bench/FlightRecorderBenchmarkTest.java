package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Each benchmark method returns the work's value under every recording, so it measures a success, not a failure. */
class FlightRecorderBenchmarkTest {
  @Test
  void everyPathReturnsTheValueUnderEveryRecording() throws Exception {
    FlightRecorderBenchmark benchmark = new FlightRecorderBenchmark();
    for (String recording : new String[] {"none", "jdk", "quell"}) {
      FlightRecorderBenchmark.Recorder recorder = new FlightRecorderBenchmark.Recorder();
      recorder.recording = recording;
      FlightRecorderBenchmark.Work work = new FlightRecorderBenchmark.Work();
      recorder.start();
      try {
        for (int i = 0; i < 3; i++) {
          assertThat(benchmark.success(recorder, work)).isEqualTo("ok");
          assertThat(benchmark.failOnce(recorder, work)).isEqualTo("ok");
        }
      } finally {
        recorder.stop();
      }
    }
  }
}
