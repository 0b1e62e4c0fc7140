package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * Bounds of {@link HttpClassification#parseRetryAfter}: every form reads back exactly, waits are never
 * negative, never past the maximum, never thrown, and only ASCII digits are digits.
 */
class RetryAfterParsingProperties {
  private static final DateTimeFormatter IMF = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);
  private static final DateTimeFormatter RFC850 = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US);
  private static final DateTimeFormatter ASCTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US);
  private static final Duration MAX = HttpClassification.MAX_RETRY_AFTER;

  @Provide
  Arbitrary<Instant> instants() {
    // 1970 to 2100, whole seconds: what an HTTP-date can say
    return Arbitraries.longs().between(0, 4_102_444_800L).map(Instant::ofEpochSecond);
  }

  @Property
  void everyDateFormReadsBackAsTheWaitFromTheDateHeader(@ForAll("instants") Instant serverNow,
      @ForAll @LongRange(min = -100_000, max = 200_000) long aheadSeconds) {
    Instant at = serverNow.plusSeconds(aheadSeconds);
    ZonedDateTime utc = at.atZone(ZoneOffset.UTC);
    String date = IMF.format(serverNow.atZone(ZoneOffset.UTC));
    Duration expected = Duration.ofSeconds(Math.max(0, Math.min(aheadSeconds, MAX.getSeconds())));
    Instant anyLocalClock = Instant.EPOCH;

    assertThat(HttpClassification.parseRetryAfter(IMF.format(utc), date, anyLocalClock)).isEqualTo(expected);
    assertThat(HttpClassification.parseRetryAfter(ASCTIME.format(utc), date, anyLocalClock)).isEqualTo(expected);
    if (Math.abs(utc.getYear() - serverNow.atZone(ZoneOffset.UTC).getYear()) < 50) {
      assertThat(HttpClassification.parseRetryAfter(RFC850.format(utc), date, anyLocalClock)).isEqualTo(expected);
    }
  }

  @Property
  void aWaitFromOurOwnClockIsRoundedUpToWholeSecondsAndNeverEarly(@ForAll("instants") Instant at,
      @ForAll @LongRange(min = 0, max = 86_399_999) long millisBefore) {
    Instant now = at.minusMillis(millisBefore);
    Duration wait = HttpClassification.parseRetryAfter(IMF.format(at.atZone(ZoneOffset.UTC)), now);

    assertThat(wait).isNotNull();
    assertThat(wait.getNano()).isZero();
    assertThat(now.plus(wait)).as("never before the server's instant").isAfterOrEqualTo(at);
    assertThat(now.plus(wait)).as("less than a second after it").isBefore(at.plusSeconds(1));
  }

  @Property
  void deltaSecondsAreExactUpToTheMaximumAndSaturateBeyond(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seconds) {
    assertThat(HttpClassification.parseRetryAfter(Long.toString(seconds), Instant.EPOCH))
        .isEqualTo(Duration.ofSeconds(Math.min(seconds, MAX.getSeconds())));
  }

  @Property
  void anyRunOfAsciiDigitsIsAWaitOfAtMostTheMaximum(@ForAll("digitRuns") String digits) {
    Duration wait = HttpClassification.parseRetryAfter(digits, Instant.EPOCH);
    assertThat(wait).isNotNull().isBetween(Duration.ZERO, MAX);
    if (digits.replaceFirst("^0+", "").length() > 5) {
      assertThat(wait).as("six significant digits or more is over a day").isEqualTo(MAX);
    }
  }

  @Provide
  Arbitrary<String> digitRuns() {
    return Arbitraries.strings().withChars("0123456789").ofMinLength(1).ofMaxLength(400);
  }

  @Property
  void aDigitOfAnotherScriptIsNeverADigit(@ForAll("digitRuns") String digits, @ForAll("foreignDigits") char foreign,
      @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 400) int where) {
    int at = Math.min(where, digits.length());
    String value = digits.substring(0, at) + foreign + digits.substring(at);
    assertThat(HttpClassification.parseRetryAfter(value, Instant.EPOCH)).isNull();
  }

  @Provide
  Arbitrary<Character> foreignDigits() {
    // every character Java calls a digit that is not ASCII 0-9: Arabic-Indic, Devanagari, fullwidth...
    java.util.List<Character> digits = new java.util.ArrayList<>();
    for (char c = '\u0080'; c < '\uffff'; c++) {
      if (Character.isDigit(c)) {
        digits.add(c);
      }
    }
    return Arbitraries.of(digits);
  }

  @Property
  void anyTextAtAllIsReadOrIgnoredNeverThrownAndNeverOutOfBounds(@ForAll String value, @ForAll("instants") Instant now) {
    Duration wait = HttpClassification.parseRetryAfter(value, value, now);
    if (wait != null) {
      assertThat(wait).isBetween(Duration.ZERO, MAX);
    }
  }

  @Property
  void anyInstantAtAllAsOurClockNeverOverflows(@ForAll("dates") String value,
      @ForAll @LongRange(min = -31_557_014_167_219_200L, max = 31_556_889_864_403_199L) long epochSecond) {
    Duration wait = HttpClassification.parseRetryAfter(value, Instant.ofEpochSecond(epochSecond));
    assertThat(wait).isNotNull().isBetween(Duration.ZERO, MAX);
  }

  @Provide
  Arbitrary<String> dates() {
    return Arbitraries.longs().between(-62_135_596_800L, 253_402_300_799L) // years 1 to 9999
        .map(s -> IMF.format(Instant.ofEpochSecond(s).atZone(ZoneOffset.UTC)));
  }
}
