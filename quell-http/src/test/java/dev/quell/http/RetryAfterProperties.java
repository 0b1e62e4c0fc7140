package dev.quell.http;

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

/** Bounds of {@link RetryAfter}: every form reads back exactly, waits are never negative, never past MAX, never thrown. */
class RetryAfterProperties {
  private static final DateTimeFormatter IMF = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);
  private static final DateTimeFormatter RFC850 = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US);
  private static final DateTimeFormatter ASCTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US);

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
    long expected = Math.max(0, Math.min(aheadSeconds, RetryAfter.MAX.getSeconds()));
    Instant anyLocalClock = Instant.EPOCH;

    assertThat(RetryAfter.parse(IMF.format(utc), date, anyLocalClock)).contains(Duration.ofSeconds(expected));
    assertThat(RetryAfter.parse(ASCTIME.format(utc), date, anyLocalClock)).contains(Duration.ofSeconds(expected));
    if (Math.abs(utc.getYear() - serverNow.atZone(ZoneOffset.UTC).getYear()) < 50) {
      assertThat(RetryAfter.parse(RFC850.format(utc), date, anyLocalClock)).contains(Duration.ofSeconds(expected));
    }
  }

  @Property
  void aWaitFromOurOwnClockIsRoundedUpToWholeSecondsAndNeverEarly(@ForAll("instants") Instant at,
      @ForAll @LongRange(min = 0, max = 86_399_999) long millisBefore) {
    Instant now = at.minusMillis(millisBefore);
    Duration wait = RetryAfter.parse(IMF.format(at.atZone(ZoneOffset.UTC)), now).orElseThrow();

    assertThat(wait.getNano()).isZero();
    assertThat(now.plus(wait)).as("never before the server's instant").isAfterOrEqualTo(at);
    assertThat(now.plus(wait)).as("less than a second after it").isBefore(at.plusSeconds(1));
  }

  @Property
  void deltaSecondsAreExactUpToTheMaximum(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seconds) {
    Duration wait = RetryAfter.parse(Long.toString(seconds), Instant.EPOCH).orElseThrow();
    assertThat(wait).isEqualTo(Duration.ofSeconds(Math.min(seconds, RetryAfter.MAX.getSeconds())));
  }

  @Property
  void anyTextAtAllIsReadOrIgnoredNeverThrownAndNeverOutOfBounds(@ForAll String value, @ForAll("instants") Instant now) {
    RetryAfter.parse(value, value, now).ifPresent(wait -> {
      assertThat(wait.isNegative()).isFalse();
      assertThat(wait).isLessThanOrEqualTo(RetryAfter.MAX);
    });
  }
}
