package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  // Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example
  private static final Instant NOW = Instant.parse("1994-11-06T08:49:37Z");

  @Test
  void deltaSecondsAreReadAsTheyAre() {
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
  }

  @Test
  void allThreeDateFormsAreRead() {
    Instant expected = Instant.parse("1994-11-06T08:49:40Z");
    assertThat(RetryAfter.parseHttpDate("Sun, 06 Nov 1994 08:49:40 GMT", NOW)).isEqualTo(expected);
    assertThat(RetryAfter.parseHttpDate("Sunday, 06-Nov-94 08:49:40 GMT", NOW)).isEqualTo(expected);
    assertThat(RetryAfter.parseHttpDate("Sun Nov  6 08:49:40 1994", NOW)).isEqualTo(expected);
    assertThat(RetryAfter.parseHttpDate("Sun Nov 16 08:49:40 1994", NOW)).isEqualTo(Instant.parse("1994-11-16T08:49:40Z"));
  }

  @Test
  void aDateIsAWaitFromNowRoundedUpToTheWholeSecond() {
    Instant almost = NOW.plusMillis(2_001);
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:40 GMT", NOW.plusMillis(1))).contains(Duration.ofSeconds(3));
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:40 GMT", almost))
        .as("0.999 s left is a whole second: never retry before the server's second").contains(Duration.ofSeconds(1));
  }

  @Test
  void aDateIsMeasuredFromTheResponsesDateHeaderWhenThereIsOne() {
    Instant skewedLocalClock = NOW.plusSeconds(3600);
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", skewedLocalClock))
        .contains(Duration.ofSeconds(10));
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", "not a date", NOW.plusSeconds(4)))
        .as("an unreadable Date header falls back to our clock").contains(Duration.ofSeconds(6));
  }

  @Test
  void aDateInThePastIsNoWait() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW)).contains(Duration.ZERO);
  }

  @Test
  void absurdlyLongWaitsAreReadAsTheMaximumNotIgnored() {
    assertThat(RetryAfter.parse("999999999999", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("99999999999999999999999999", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("86399", NOW)).contains(Duration.ofSeconds(86399));
  }

  @Test
  void rfc850YearsMoreThanFiftyYearsAheadBelongToTheLastCentury() {
    Instant in2030 = Instant.parse("2030-01-01T00:00:00Z");
    assertThat(RetryAfter.parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", in2030)).isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
    assertThat(RetryAfter.parseHttpDate("Tuesday, 06-Nov-40 08:49:37 GMT", in2030)).isEqualTo(Instant.parse("2040-11-06T08:49:37Z"));
    assertThat(RetryAfter.parseHttpDate("Wednesday, 06-Nov-80 08:49:37 GMT", in2030))
        .as("2080 is 50 years after 2030, not more").isEqualTo(Instant.parse("2080-11-06T08:49:37Z"));
    assertThat(RetryAfter.parseHttpDate("Thursday, 06-Nov-81 08:49:37 GMT", in2030))
        .as("2081 is more than 50 years after 2030").isEqualTo(Instant.parse("1981-11-06T08:49:37Z"));
    assertThat(RetryAfter.parseHttpDate("Tuesday, 06-Nov-40 08:49:37 GMT", Instant.parse("1999-06-01T00:00:00Z")))
        .as("from 1999, '40' is 2040, 41 years ahead, not 1940").isEqualTo(Instant.parse("2040-11-06T08:49:37Z"));
  }

  @Test
  void aLeapSecondRoundsUpNeverDown() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:60 GMT", NOW)).contains(Duration.ofSeconds(23));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "", "  ", "-5", "1.5", "+3", "0x10", "soon", "١٢٣", // Arabic-Indic digits are not delta-seconds
      "Sun, 31 Apr 1994 08:49:37 GMT", // April has 30 days
      "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:61:00 GMT", "Sun, 06 Nov 1994 08:49 GMT",
      "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
      "Sund, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37",
      "Sun, 006 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, , GMT", ",",
      "Sun, 06 Nov 1994 08:49:37 GMT Sun, 06 Nov 1994 08:49:37 GMT Sun, 06 Nov 1994 08:49:37 GMT"})
  void anythingElseIsIgnoredNeverThrown(String value) {
    assertThat(RetryAfter.parse(value, NOW)).isEmpty();
  }

  @Test
  void nullIsNoHeader() {
    assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    assertThat(RetryAfter.parseHttpDate(null, NOW)).isNull();
  }

  @Test
  void formatWritesWholeSecondsRoundedUpAtLeastOne() {
    assertThat(RetryAfter.format(Duration.ofMillis(1500))).isEqualTo("2");
    assertThat(RetryAfter.format(Duration.ofSeconds(3))).isEqualTo("3");
    assertThat(RetryAfter.format(Duration.ZERO)).isEqualTo("1");
    assertThat(RetryAfter.format(Duration.ofSeconds(-4))).isEqualTo("1");
  }
}
