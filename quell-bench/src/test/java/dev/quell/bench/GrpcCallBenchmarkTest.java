package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Each gRPC benchmark method, called a few times by hand, gets the echo back over a real loopback
 * connection: a benchmark that measured a failing call would fail the build instead.
 */
class GrpcCallBenchmarkTest {

  @Test
  void everyContenderEchoes() throws Exception {
    GrpcCallBenchmark benchmark = new GrpcCallBenchmark();
    benchmark.start();
    try {
      for (int i = 0; i < 5; i++) {
        assertThat(benchmark.bareChannel()).isEqualTo("ping");
        assertThat(benchmark.bareChannelRetryOff()).isEqualTo("ping");
        assertThat(benchmark.quell()).isEqualTo("ping");
        assertThat(benchmark.quellPerService()).isEqualTo("ping");
      }
    } finally {
      benchmark.stop();
    }
  }
}
