package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link HttpClassification}'s Retry-After reader, which {@code Classifier.HTTP} and both HTTP clients use. */
class RetryAfterParsingTest {
  // Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example
  private static final Instant NOW = Instant.parse("1994-11-06T08:49:37Z");
  private static final Duration MAX = HttpClassification.MAX_RETRY_AFTER;

  private static Duration parse(String value, Instant now) {
    return HttpClassification.parseRetryAfter(value, now);
  }

  @Test
  void deltaSecondsAreReadAsTheyAre() {
    assertThat(parse("120", NOW)).isEqualTo(Duration.ofSeconds(120));
    assertThat(parse(" 0 ", NOW)).isEqualTo(Duration.ZERO);
    assertThat(parse("\t7\t", NOW)).as("HTTP's optional whitespace is spaces and tabs").isEqualTo(Duration.ofSeconds(7));
    assertThat(parse("007", NOW)).isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void allThreeDateFormsAreRead() {
    Instant expected = Instant.parse("1994-11-06T08:49:40Z");
    assertThat(HttpClassification.parseHttpDate("Sun, 06 Nov 1994 08:49:40 GMT", NOW)).isEqualTo(expected);
    assertThat(HttpClassification.parseHttpDate("Sunday, 06-Nov-94 08:49:40 GMT", NOW)).isEqualTo(expected);
    assertThat(HttpClassification.parseHttpDate("Sun Nov  6 08:49:40 1994", NOW)).isEqualTo(expected);
    assertThat(HttpClassification.parseHttpDate("Sun Nov 16 08:49:40 1994", NOW)).isEqualTo(Instant.parse("1994-11-16T08:49:40Z"));
  }

  @Test
  void aDateIsAWaitFromNowRoundedUpToTheWholeSecond() {
    assertThat(parse("Sun, 06 Nov 1994 08:49:40 GMT", NOW.plusMillis(1))).isEqualTo(Duration.ofSeconds(3));
    assertThat(parse("Sun, 06 Nov 1994 08:49:40 GMT", NOW.plusMillis(2_001)))
        .as("0.999 s left is a whole second: never retry before the server's second").isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aDateIsMeasuredFromTheResponsesDateHeaderWhenThereIsOne() {
    Instant skewedLocalClock = NOW.plusSeconds(3600);
    assertThat(HttpClassification.parseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
        skewedLocalClock)).isEqualTo(Duration.ofSeconds(10));
    assertThat(HttpClassification.parseRetryAfter("Sunday, 06-Nov-94 08:49:47 GMT", "Sun Nov  6 08:49:37 1994",
        skewedLocalClock)).as("any form against any form").isEqualTo(Duration.ofSeconds(10));
    assertThat(HttpClassification.parseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", "not a date", NOW.plusSeconds(4)))
        .as("an unreadable Date header falls back to our clock").isEqualTo(Duration.ofSeconds(6));
    assertThat(HttpClassification.parseRetryAfter("30", "Sun, 06 Nov 1994 08:49:37 GMT", skewedLocalClock))
        .as("delta-seconds need no clock").isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aDateInThePastIsNoWait() {
    assertThat(parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW)).isEqualTo(Duration.ZERO);
  }

  @Test
  void hugeWaitsSaturateAtTheMaximumNeverOverflowNorAreIgnored() {
    assertThat(parse("86399", NOW)).isEqualTo(Duration.ofSeconds(86399));
    assertThat(parse("86400", NOW)).isEqualTo(MAX);
    assertThat(parse("9999999999", NOW)).as("ten digits: the old reader ignored it").isEqualTo(MAX);
    assertThat(parse("9223372036854775807", NOW)).as("Long.MAX_VALUE").isEqualTo(MAX);
    assertThat(parse("9223372036854775808", NOW)).as("past Long.MAX_VALUE").isEqualTo(MAX);
    assertThat(parse("9".repeat(10_000), NOW)).isEqualTo(MAX);
    assertThat(parse("Fri, 31 Dec 9999 23:59:59 GMT", NOW)).isEqualTo(MAX);
    assertThat(HttpClassification.parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", NOW))
        .as("the longest span two dates can have").isEqualTo(MAX);
    assertThat(parse("Sun, 06 Nov 1994 08:49:37 GMT", Instant.MAX)).isEqualTo(Duration.ZERO);
    assertThat(parse("Sun, 06 Nov 1994 08:49:37 GMT", Instant.MIN)).isEqualTo(MAX);
  }

  @Test
  void rfc850YearsMoreThanFiftyYearsAheadBelongToTheLastCentury() {
    Instant in2030 = Instant.parse("2030-01-01T00:00:00Z");
    assertThat(HttpClassification.parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", in2030)).isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
    assertThat(HttpClassification.parseHttpDate("Tuesday, 06-Nov-40 08:49:37 GMT", in2030)).isEqualTo(Instant.parse("2040-11-06T08:49:37Z"));
    assertThat(HttpClassification.parseHttpDate("Wednesday, 06-Nov-80 08:49:37 GMT", in2030))
        .as("2080 is 50 years after 2030, not more").isEqualTo(Instant.parse("2080-11-06T08:49:37Z"));
    assertThat(HttpClassification.parseHttpDate("Thursday, 06-Nov-81 08:49:37 GMT", in2030))
        .as("2081 is more than 50 years after 2030").isEqualTo(Instant.parse("1981-11-06T08:49:37Z"));
    assertThat(HttpClassification.parseHttpDate("Tuesday, 06-Nov-40 08:49:37 GMT", Instant.parse("1999-06-01T00:00:00Z")))
        .as("from 1999, '40' is 2040, 41 years ahead, not 1940").isEqualTo(Instant.parse("2040-11-06T08:49:37Z"));
  }

  @Test
  void aLeapSecondRoundsUpNeverDown() {
    assertThat(parse("Sun, 06 Nov 1994 08:49:60 GMT", NOW)).isEqualTo(Duration.ofSeconds(23));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "", "  ", "-5", "1.5", "+3", "0x10", "1e3", "soon", "5 s", "\n5",
      "١٢٣", // Arabic-Indic digits are not delta-seconds
      "１２", // nor are fullwidth ones
      "Sun, ٠٦ Nov 1994 08:49:37 GMT", "Sun, 06 Nov １９９４ 08:49:37 GMT", "Sun, 06 Nov 1994 ０8:49:37 GMT",
      "Sun, 31 Apr 1994 08:49:37 GMT", // April has 30 days
      "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:61:00 GMT", "Sun, 06 Nov 1994 08:49 GMT",
      "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
      "Sund, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37",
      "Sun, 006 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, , GMT", ",",
      "Sun, 06 Nov 1994 08:49:37 GMT Sun, 06 Nov 1994 08:49:37 GMT Sun, 06 Nov 1994 08:49:37 GMT"})
  void anythingElseIsIgnoredNeverThrown(String value) {
    assertThat(parse(value, NOW)).isNull();
  }

  @Test
  void nullIsNoHeader() {
    assertThat(HttpClassification.parseRetryAfter(null, NOW)).isNull();
    assertThat(HttpClassification.parseRetryAfter(null, "Sun, 06 Nov 1994 08:49:37 GMT", NOW)).isNull();
    assertThat(HttpClassification.parseHttpDate(null, NOW)).isNull();
  }

  @ParameterizedTest
  @CsvSource({"200, OK", "204, OK", "304, OK", "404, PERMANENT", "400, PERMANENT", "408, TRANSIENT", "500, TRANSIENT",
      "502, TRANSIENT", "503, TRANSIENT", "429, THROTTLED"})
  void statusRulesWithoutARetryAfter(int status, Verdict.Kind kind) {
    assertThat(HttpClassification.statusVerdict(status).kind()).isEqualTo(kind);
    assertThat(HttpClassification.classifyStatus(status, null, null, NOW).kind()).isEqualTo(kind);
    assertThat(HttpClassification.classifyStatus(status, Optional.empty()).kind()).isEqualTo(kind);
  }

  @Test
  void a429OrA503WithAReadableRetryAfterIsThrottledForThatLongAndNothingElseIs() {
    String date = "Sun, 06 Nov 1994 08:49:37 GMT";
    assertThat(HttpClassification.classifyStatus(503, "Sunday, 06-Nov-94 08:49:47 GMT", date, NOW.plusSeconds(3600)))
        .isEqualTo(Verdict.throttled(Duration.ofSeconds(10)));
    assertThat(HttpClassification.classifyStatus(429, "2", date, NOW)).isEqualTo(Verdict.throttled(Duration.ofSeconds(2)));
    assertThat(HttpClassification.classifyStatus(429, "99999999999999999999", null, NOW)).isEqualTo(Verdict.throttled(MAX));
    assertThat(HttpClassification.classifyStatus(429, "garbage", null, NOW)).isEqualTo(Verdict.THROTTLED);
    assertThat(HttpClassification.classifyStatus(503, "garbage", null, NOW)).isEqualTo(Verdict.TRANSIENT);
    assertThat(HttpClassification.classifyStatus(500, "5", null, NOW))
        .as("a Retry-After on a 500 is not an ask to slow down").isEqualTo(Verdict.TRANSIENT);
    assertThat(HttpClassification.classifyStatus(200, "5", null, NOW)).isEqualTo(Verdict.OK);
  }

  @Test
  void anythingButAnHttpResponseIsOk() {
    assertThat(HttpClassification.classify("not a response")).isEqualTo(Verdict.OK);
  }
}
