package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The public façade over the core's Retry-After reader. The reader's rules, bounds and jqwik properties
 * are tested where it lives, in quell-core ({@code RetryAfterParsingTest}, {@code RetryAfterParsingProperties}).
 */
class RetryAfterTest {
  // Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example
  private static final Instant NOW = Instant.parse("1994-11-06T08:49:37Z");

  @Test
  void readsWhatTheCoreReadsAsAnOptional() {
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:47 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", NOW.plusSeconds(3600)))
        .contains(Duration.ofSeconds(10));
    assertThat(RetryAfter.parse("99999999999999999999", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("١٢٣", NOW)).isEmpty();
    assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    assertThat(RetryAfter.parseHttpDate("Sun Nov  6 08:49:40 1994", NOW)).isEqualTo(Instant.parse("1994-11-06T08:49:40Z"));
    assertThat(RetryAfter.MAX).isEqualTo(Duration.ofDays(1));
    assertThat(RetryAfter.HEADER).isEqualTo("Retry-After");
  }

  @Test
  void formatWritesWholeSecondsRoundedUpAtLeastOne() {
    assertThat(RetryAfter.format(Duration.ofMillis(1500))).isEqualTo("2");
    assertThat(RetryAfter.format(Duration.ofSeconds(3))).isEqualTo("3");
    assertThat(RetryAfter.format(Duration.ZERO)).isEqualTo("1");
    assertThat(RetryAfter.format(Duration.ofSeconds(-4))).isEqualTo("1");
    assertThat(RetryAfter.format(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999))).as("saturates, never overflows")
        .isEqualTo(Long.toString(Long.MAX_VALUE));
  }
}
