package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryMarkerTest {

  @Property
  void everyMarkerReadsBackAsItWasWritten(@ForAll @IntRange(min = 1, max = 1_000_000) int attempt,
      @ForAll @IntRange(min = 0, max = 1_000_000) int more) {
    RetryMarker m = RetryMarker.of(attempt, attempt + more);

    assertThat(RetryMarker.parse(m.headerValue())).contains(m);
    assertThat(m.isRetry()).isEqualTo(attempt > 1);
  }

  @Property
  void anyTextIsReadOrIgnoredNeverThrown(@ForAll String value) {
    RetryMarker.parse(value).ifPresent(m -> assertThat(m.attempt()).isBetween(1, m.attempts()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "/", "1/", "/3", "0/3", "4/3", "-1/3", "1/-3", "a/b", "1/3/5", "1 / 3",
      "9999999999/9999999999", "١/٣"})
  void malformedMarkersAreIgnored(String value) {
    assertThat(RetryMarker.parse(value)).isEmpty();
  }

  @Test
  void anImpossibleMarkerIsAClearError() {
    assertThat(catchThrowable(() -> RetryMarker.of(4, 3))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("attempt was 4 of 3");
  }

  @Test
  void repeatableByMethodAllowsTheIdempotentMethodsAndKeyedRequests() {
    Map<String, String> none = Map.of();
    for (String m : new String[] {"GET", "head", "OPTIONS", "PUT", "DELETE"}) {
      assertThat(Repeatable.BY_METHOD.allows(m, none::get)).as(m).isTrue();
    }
    for (String m : new String[] {"POST", "PATCH", "CONNECT", "PROPFIND"}) {
      assertThat(Repeatable.BY_METHOD.allows(m, none::get)).as(m).isFalse();
    }
    assertThat(Repeatable.BY_METHOD.allows("POST", Map.of("Idempotency-Key", "k")::get)).isTrue();
    assertThat(Repeatable.BY_METHOD.allows("POST", Map.of("Idempotency-Key", " ")::get)).as("a blank key is no key").isFalse();
    assertThat(Repeatable.YES.allows("POST", none::get)).isTrue();
    assertThat(Repeatable.NO.allows("GET", none::get)).isFalse();
  }
}
