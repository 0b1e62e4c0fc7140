package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.AttemptTimeoutException;
import dev.quell.ResilienceConfigurationException;
import dev.quell.Verdict;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import org.jspecify.annotations.Nullable;

/** The plain rules behind the interceptors, over their whole input range. */
class GrpcRulesProperties {

  static final class Ticker extends Deadline.Ticker {
    final AtomicLong now = new AtomicLong();

    @Override
    public long nanoTime() {
      return now.get();
    }
  }

  // ---------------------------------------------------------------- the wire deadline

  @Property
  void theWireDeadlineIsNeverLaterThanTheCallersNorThanTheBound(
      @ForAll @LongRange(min = -1_000_000_000L, max = Long.MAX_VALUE) long callerNanos,
      @ForAll boolean callerHasDeadline,
      @ForAll("bounds") long boundNanos) {
    Ticker ticker = new Ticker();
    Deadline caller = callerHasDeadline ? Deadline.after(callerNanos, TimeUnit.NANOSECONDS, ticker) : null;

    Deadline wire = Deadlines.wire(caller, boundNanos, ticker);

    if (caller == null && boundNanos == Long.MAX_VALUE) {
      assertThat(wire).isNull();
      return;
    }
    assertThat(wire).isNotNull();
    long remaining = wire.timeRemaining(TimeUnit.NANOSECONDS);
    if (caller != null) {
      assertThat(remaining).isLessThanOrEqualTo(caller.timeRemaining(TimeUnit.NANOSECONDS));
      if (caller.timeRemaining(TimeUnit.NANOSECONDS) <= boundNanos) {
        assertThat(wire).as("a caller's shorter deadline is kept as is").isSameAs(caller);
      }
    }
    if (boundNanos != Long.MAX_VALUE) {
      assertThat(remaining).isLessThanOrEqualTo(Math.max(0, boundNanos));
    }
  }

  @Provide
  Arbitrary<Long> bounds() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(0, 3_600_000_000_000L),
        Arbitraries.longs().between(0, Long.MAX_VALUE),
        Arbitraries.just(Long.MAX_VALUE));
  }

  @Property
  void durationsBecomeNanosWithoutOverflow(@ForAll long seconds, @ForAll @LongRange(min = 0, max = 999_999_999) long nanos) {
    Duration d = Duration.ofSeconds(seconds, nanos);
    long n = Deadlines.nanos(d);
    if (d.isNegative()) {
      assertThat(n).isZero();
    } else if (d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) > 0) {
      assertThat(n).isEqualTo(Long.MAX_VALUE);
    } else {
      assertThat(n).isEqualTo(d.toNanos());
    }
  }

  // ---------------------------------------------------------------- pushback

  @Property
  void aPushbackIsWholeMillisecondsRoundedUpWithinASigned32BitInteger(@ForAll long seconds,
      @ForAll @LongRange(min = 0, max = 999_999_999) long nanos) {
    Duration retryAfter = Duration.ofSeconds(seconds, nanos);

    String value = QuellMetadata.pushback(retryAfter);

    long millis = Integer.parseInt(value); // always a valid int32: gRPC clients parse it so
    assertThat(millis).isBetween(0L, (long) Integer.MAX_VALUE);
    if (!retryAfter.isNegative() && millis < Integer.MAX_VALUE) {
      assertThat(Duration.ofMillis(millis)).as("never earlier than asked").isGreaterThanOrEqualTo(retryAfter);
      assertThat(Duration.ofMillis(millis).minus(retryAfter)).isLessThan(Duration.ofMillis(1));
    }
    Metadata trailers = new Metadata();
    trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, value);
    assertThat(QuellMetadata.saysDoNotRetry(trailers)).as("what a server sends never means stop").isFalse();
  }

  @Property
  void anyPushbackStringParsesAsGrpcJavaDoes(@ForAll String value) {
    Metadata trailers = new Metadata();
    String ascii = value.replaceAll("[^\\x20-\\x7e]", "x"); // ASCII metadata carries printable characters only
    trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, ascii);

    Integer grpcJava;
    try {
      grpcJava = Integer.valueOf(ascii);
    } catch (NumberFormatException e) {
      grpcJava = -1;
    }
    assertThat(QuellMetadata.pushbackMillis(trailers)).isEqualTo(grpcJava.longValue());
    assertThat(QuellMetadata.saysDoNotRetry(trailers)).isEqualTo(grpcJava < 0);
  }

  // ---------------------------------------------------------------- classification

  @Property
  void aPushbackDecidesWhenButTheCodeDecidesWhether(@ForAll Status.Code code, @ForAll("pushbacks") @Nullable String pushback) {
    Metadata trailers = new Metadata();
    if (pushback != null) {
      trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, pushback);
    }
    Verdict verdict = GrpcClassifier.DEFAULT.classify(Status.fromCode(code), trailers);
    Verdict.Kind byCode = GrpcClassifier.DEFAULT.kindOf(code);
    long parsed = QuellMetadata.pushbackMillis(trailers);

    if (code == Status.Code.OK) {
      assertThat(verdict).isEqualTo(Verdict.OK);
    } else if (byCode == Verdict.Kind.PERMANENT || (pushback != null && parsed < 0)) {
      assertThat(verdict).isEqualTo(Verdict.PERMANENT);
    } else if (pushback != null) {
      assertThat(verdict).isEqualTo(Verdict.throttled(Duration.ofMillis(parsed)));
    } else {
      assertThat(verdict.kind()).isEqualTo(byCode);
    }
  }

  @Provide
  Arbitrary<String> pushbacks() {
    return Arbitraries.oneOf(
        Arbitraries.integers().map(String::valueOf),
        Arbitraries.of("", " 5", "1e3", "0x10", "later", "99999999999"),
        Arbitraries.just(null));
  }

  @Example
  void theDefaultRules() {
    GrpcClassifier c = GrpcClassifier.DEFAULT;
    assertThat(c.classify(Status.UNAVAILABLE, new Metadata())).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(Status.DEADLINE_EXCEEDED, new Metadata())).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(Status.RESOURCE_EXHAUSTED, new Metadata())).isEqualTo(Verdict.THROTTLED);
    assertThat(c.classify(Status.INTERNAL, new Metadata())).isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify("any value", null)).isEqualTo(Verdict.OK);
    assertThat(c.classify(null, Status.UNAVAILABLE.asRuntimeException())).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(null, new StatusException(Status.NOT_FOUND))).isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify(null, new AttemptTimeoutException(Duration.ofSeconds(1)))).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(null, new IOException("reset"))).isEqualTo(Verdict.TRANSIENT);
    assertThat(c.classify(null, new IllegalStateException())).isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify(null, new AttemptFailure(Status.DEADLINE_EXCEEDED, new Metadata(), true)))
        .as("the caller's own deadline passed").isEqualTo(Verdict.PERMANENT);
    assertThat(c.classify(null, new AttemptFailure(Status.DEADLINE_EXCEEDED, new Metadata(), false)))
        .isEqualTo(Verdict.TRANSIENT);
    assertThat(c).hasToString("GrpcClassifier[DEADLINE_EXCEEDED=TRANSIENT, RESOURCE_EXHAUSTED=THROTTLED, "
        + "UNAVAILABLE=TRANSIENT, others PERMANENT]");
  }

  @Example
  void reclassifyingIsAValueAndBadRulesAreRefused() {
    GrpcClassifier aborted = GrpcClassifier.DEFAULT.with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT);
    assertThat(aborted.kindOf(Status.Code.ABORTED)).isEqualTo(Verdict.Kind.TRANSIENT);
    assertThat(GrpcClassifier.DEFAULT.kindOf(Status.Code.ABORTED)).isEqualTo(Verdict.Kind.PERMANENT);
    assertThat(aborted).isEqualTo(GrpcClassifier.DEFAULT.with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT))
        .isNotEqualTo(GrpcClassifier.DEFAULT);

    assertThatThrownBy(() -> GrpcClassifier.DEFAULT.with(Status.Code.OK, Verdict.Kind.TRANSIENT))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("status code was OK");
    assertThatThrownBy(() -> GrpcClassifier.DEFAULT.with(Status.Code.NOT_FOUND, Verdict.Kind.OK))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("verdict for NOT_FOUND was OK");
  }

  @Example
  void aBadSlackIsRefusedNamingTheValue() {
    ResilienceInterceptor quell = ResilienceInterceptor.of(dev.quell.Resilience.DEFAULT);
    assertThatThrownBy(() -> quell.withDeadlineSlack(Duration.ofMillis(-5)))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("deadlineSlack was PT-0.005S");
    assertThatThrownBy(() -> quell.withDeadlineSlack(Duration.ofHours(1)))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("at most 1 minute");
    assertThat(quell.withDeadlineSlack(Duration.ZERO).deadlineSlack()).isZero();
  }

  // ---------------------------------------------------------------- the server's inbound context

  @Property
  void theInboundContextNeverOutlivesTheCapOrTheGrpcDeadline(
      @ForAll @LongRange(min = -10_000, max = 10_000_000) long grpcMillis,
      @ForAll("headerValues") @Nullable String header,
      @ForAll @LongRange(min = 1, max = 600_000) long capMillis) {
    Metadata headers = new Metadata();
    if (header != null) {
      headers.put(QuellMetadata.DEADLINE_MS, header);
    }
    Deadline grpc = Deadline.after(grpcMillis, TimeUnit.MILLISECONDS);
    dev.quell.ResilienceContext.Inbound inbound = dev.quell.ResilienceContext.Inbound.DEFAULT
        .withMaxDeadline(Duration.ofMillis(capMillis));

    dev.quell.ResilienceContext context = ResilienceServerInterceptor.contextOf(headers, grpc, inbound);

    assertThat(context.hasDeadline()).isTrue();
    Duration remaining = context.remaining().orElseThrow();
    assertThat(remaining).isLessThanOrEqualTo(Duration.ofMillis(capMillis));
    assertThat(remaining).isLessThanOrEqualTo(Duration.ofMillis(Math.max(0, grpcMillis)));
  }

  @Provide
  Arbitrary<String> headerValues() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(-5, 100_000_000).map(String::valueOf),
        Arbitraries.strings().ofMaxLength(14).map(s -> s.replaceAll("[^\\x20-\\x7e]", "x")),
        Arbitraries.just(null));
  }
}
