package dev.quell.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Classifier;
import dev.quell.Verdict;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The classifier the HTTP clients put around a policy's own, on plain values (a unit: no HTTP involved). */
class ResponseClassifierTest {
  /** A response of some client's type: a status and headers. */
  static final class Answer {
    final int status;
    final Map<String, String> headers;

    Answer(int status, Map<String, String> headers) {
      this.status = status;
      this.headers = headers;
    }
  }

  static final ResponseClassifier.Access ACCESS = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      return result instanceof Answer ? ((Answer) result).status : -1;
    }

    @Override
    public String header(Object result, String name) {
      return ((Answer) result).headers.get(name);
    }
  };

  private static final Clock CLOCK = Clock.fixed(Instant.parse("1994-11-06T08:49:37Z"), ZoneOffset.UTC);

  @ParameterizedTest
  @CsvSource({"200, OK", "304, OK", "400, PERMANENT", "404, PERMANENT", "408, TRANSIENT", "429, THROTTLED",
      "500, TRANSIENT", "502, TRANSIENT", "503, TRANSIENT", "504, TRANSIENT"})
  void classifierHttpMeansTheStatusRules(int status, Verdict.Kind kind) {
    Classifier c = ResponseClassifier.wrap(Classifier.HTTP, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(status, Map.of()), null).kind()).isEqualTo(kind);
  }

  @Test
  void a503WithAReadableRetryAfterIsThrottledForThatLong() {
    Classifier c = ResponseClassifier.wrap(Classifier.HTTP, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(503, Map.of("Retry-After", "Sunday, 06-Nov-94 08:49:47 GMT")), null))
        .isEqualTo(Verdict.throttled(Duration.ofSeconds(10)));
    assertThat(c.classify(new Answer(503, Map.of("Retry-After", "whenever")), null)).isEqualTo(Verdict.TRANSIENT);
  }

  @Test
  void aRetryAfterOnAnAnswerThatIsNotAskingToSlowDownIsIgnored() {
    Classifier c = ResponseClassifier.wrap(Classifier.HTTP, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(500, Map.of("Retry-After", "5")), null)).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(new Answer(404, Map.of("Retry-After", "5")), null)).isEqualTo(Verdict.PERMANENT);
  }

  @Test
  void anotherClassifierDecidesAndTheRetryAfterOfWhatItRetriesStillSetsTheWait() {
    Classifier mine = Classifier.rules()
        .onResult(r -> r instanceof Answer && ((Answer) r).status == 409, Verdict.TRANSIENT)
        .onResult(r -> r instanceof Answer && ((Answer) r).status == 503, Verdict.PERMANENT)
        .onResult(r -> r instanceof Answer && ((Answer) r).status == 429, Verdict.TRANSIENT);
    Classifier c = ResponseClassifier.wrap(mine, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(409, Map.of()), null)).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(new Answer(503, Map.of("Retry-After", "3")), null))
        .as("your classifier said permanent: no Retry-After makes it retried").isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify(new Answer(429, Map.of("Retry-After", "3")), null)).isEqualTo(Verdict.throttled(Duration.ofSeconds(3)));
  }

  @Test
  void classifierDefaultTakesEveryResponseAsASuccess() {
    Classifier c = ResponseClassifier.wrap(Classifier.DEFAULT, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(503, Map.of("Retry-After", "3")), null)).isEqualTo(Verdict.OK);
  }

  @Test
  void failuresAndOtherResultsGoToTheWrappedClassifier() {
    Classifier c = ResponseClassifier.wrap(Classifier.HTTP, ACCESS, CLOCK);

    assertThat(c.classify(null, new IOException("reset"))).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(null, new IllegalArgumentException())).isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify("not a response", null)).isEqualTo(Verdict.OK);
  }

  @Test
  void aClassifierThatReturnsNullIsReadAsPermanentAsTheCoreReadsIt() {
    Classifier c = ResponseClassifier.wrap((result, failure) -> null, ACCESS, CLOCK);

    assertThat(c.classify(new Answer(200, Map.of()), null)).isEqualTo(Verdict.PERMANENT);
  }

  @Test
  void wrappingTwiceForTheSameClientWrapsOnce() {
    Classifier once = ResponseClassifier.wrap(Classifier.HTTP, ACCESS);

    assertThat(ResponseClassifier.wrap(once, ACCESS)).isSameAs(once);
  }
}
