package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Both benchmark methods make a real loopback request and return its body. */
class HttpClientBenchmarkTest {

  @Test
  void bothClientsGetTheBodyFromTheLoopbackServer() throws Exception {
    HttpClientBenchmark benchmark = new HttpClientBenchmark();
    HttpClientBenchmark.Loopback loopback = new HttpClientBenchmark.Loopback();
    loopback.start();
    try {
      for (int i = 0; i < 3; i++) {
        assertThat(benchmark.bareHttpClient(loopback)).isEqualTo("ok");
        assertThat(benchmark.resilientHttpClient(loopback)).isEqualTo("ok");
      }
      assertThat(loopback.quell.budgetsByHost()).hasSize(1);
      HttpClientBenchmark.Alone alone = new HttpClientBenchmark.Alone();
      assertThat(benchmark.quellAlone(alone)).isEqualTo("ok");
      assertThat(benchmark.instantAlone(alone)).isEqualTo("ok");
    } finally {
      loopback.stop();
    }
  }
}
