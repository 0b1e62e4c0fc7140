package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Deadlines and criticality that travel: in-process, into executors, and across the wire. */
class ContextTest {
  private final VirtualTime time = VirtualTime.create();

  private static Resilience policy() {
    return Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofMillis(100))).withBudget(RetryBudget.NONE);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theEffectiveDeadlineIsTheEarlierOfThePolicysAndTheAmbientOne(Driver driver) throws Exception {
    ResilienceContext inbound = ResilienceContext.current().withDeadline(Duration.ofMillis(150), time);
    Result r = inbound.call(() -> driver.run(policy(), time, fail(new IOException()), fail(new IOException()), ok("v")));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).as("the second retry's delay would cross the 150 ms deadline").isEqualTo(2);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aPolicyCanIgnoreTheAmbientDeadline(Driver driver) throws Exception {
    ResilienceContext inbound = ResilienceContext.current().withDeadline(Duration.ofMillis(150), time);
    Result r = inbound.call(() -> driver.run(policy().withAmbientDeadline(false), time,
        fail(new IOException()), fail(new IOException()), ok("v")));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aCallWhoseDeadlineHasPassedStartsNoAttempt(Driver driver) throws Exception {
    ResilienceContext expired = ResilienceContext.current().withDeadline(Duration.ZERO, time);
    Result r = expired.call(() -> driver.run(policy(), time));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).isZero();
  }

  @Test
  void aNestedCallSeesItsOuterAttemptsEnd() throws Exception {
    Resilience outer = policy().withTimeSource(time).withAttemptTimeout(Duration.ofMillis(800));
    Duration seen = outer.execute(() -> {
      time.advance(Duration.ofMillis(300));
      return ResilienceContext.current().remaining().orElseThrow();
    });
    assertThat(seen).isEqualTo(Duration.ofMillis(500));
    assertThat(ResilienceContext.current()).isSameAs(ResilienceContext.EMPTY);
  }

  @Test
  void scopesNestAndRestore() {
    ResilienceContext a = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    try (ResilienceContext.Scope outer = a.open()) {
      ResilienceContext b = ResilienceContext.current().withDeadline(Duration.ofSeconds(1), time);
      assertThat(b.criticality()).isEqualTo(Criticality.SHEDDABLE);
      try (ResilienceContext.Scope inner = b.open()) {
        assertThat(ResilienceContext.current()).isSameAs(b);
      }
      assertThat(ResilienceContext.current()).isSameAs(a);
    }
    assertThat(ResilienceContext.current()).isSameAs(ResilienceContext.EMPTY);
  }

  @Test
  void aDeadlineCanOnlyGetEarlier() {
    ResilienceContext short1 = ResilienceContext.current().withDeadline(Duration.ofSeconds(1), time);
    assertThat(short1.withDeadline(Duration.ofSeconds(10), time).remaining()).contains(Duration.ofSeconds(1));
    assertThat(short1.withDeadline(Duration.ofMillis(10), time).remaining()).contains(Duration.ofMillis(10));
    assertThat(short1.withoutDeadline().hasDeadline()).isFalse();
  }

  @Test
  void wrappedExecutorsCarryTheContextIntoTheirThreads() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      ResilienceContext mine = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE_PLUS);
      Future<Criticality> seen;
      try (ResilienceContext.Scope s = mine.open()) {
        java.util.concurrent.CompletableFuture<Criticality> f = new java.util.concurrent.CompletableFuture<>();
        ResilienceContext.wrap(pool).execute(() -> f.complete(ResilienceContext.current().criticality()));
        seen = f;
      }
      assertThat(seen.get()).isEqualTo(Criticality.SHEDDABLE_PLUS);
      assertThat(pool.submit(() -> ResilienceContext.current().hasCriticality()).get())
          .as("the pool thread is left clean").isFalse();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void virtualThreadsCarryTheContextToo() throws Exception {
    ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    try (ResilienceContext.Scope s = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open()) {
      java.util.concurrent.CompletableFuture<Criticality> f = new java.util.concurrent.CompletableFuture<>();
      ResilienceContext.wrap(virtual).execute(() -> f.complete(ResilienceContext.current().criticality()));
      assertThat(f.get()).isEqualTo(Criticality.SHEDDABLE);
    } finally {
      virtual.shutdownNow();
    }
  }

  @Test
  void headersRoundTrip() {
    ResilienceContext out = ResilienceContext.current().withDeadline(Duration.ofMillis(1500), time)
        .withCriticality(Criticality.SHEDDABLE);
    Map<String, String> headers = new HashMap<>();
    out.writeHeaders(headers::put);
    assertThat(headers).containsEntry("X-Deadline-Ms", "1500").containsEntry("X-Criticality", "SHEDDABLE");
    ResilienceContext in = ResilienceContext.fromHeaders(headers::get, ResilienceContext.Inbound.DEFAULT, time);
    assertThat(in.remaining()).contains(Duration.ofMillis(1500));
    assertThat(in.criticality()).isEqualTo(Criticality.SHEDDABLE);
  }

  @Test
  void formattingFloorsAndNeverWritesLessThanOne() {
    assertThat(ResilienceContext.formatDeadline(1_999_999)).isEqualTo("1");
    assertThat(ResilienceContext.formatDeadline(2_000_000)).isEqualTo("2");
    assertThat(ResilienceContext.formatDeadline(10)).isEqualTo("1");
    assertThat(ResilienceContext.formatDeadline(0)).isEqualTo("1");
    Map<String, String> none = new HashMap<>();
    ResilienceContext.EMPTY.writeHeaders(none::put);
    assertThat(none).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "abc", "-5", "0", "1.5", "1e3", "99999999999999999999", "31536000001", "+7"})
  void malformedNegativeOrAbsurdDeadlinesAreIgnored(String value) {
    ResilienceContext in = ResilienceContext.fromHeaders(Map.of("X-Deadline-Ms", value)::get,
        ResilienceContext.Inbound.DEFAULT, time);
    assertThat(in.hasDeadline()).isFalse();
  }

  @Test
  void inboundDeadlinesAreCapped() {
    ResilienceContext in = ResilienceContext.fromHeaders(Map.of("X-Deadline-Ms", "3600000")::get,
        ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(10)), time);
    assertThat(in.remaining()).contains(Duration.ofSeconds(10));
    assertThat(ResilienceContext.Inbound.DEFAULT.maxDeadline()).isEqualTo(Duration.ofMinutes(5));
  }

  @ParameterizedTest
  @CsvSource({"CRITICAL_PLUS, false, CRITICAL", "CRITICAL_PLUS, true, CRITICAL_PLUS", "sheddable-plus, false, SHEDDABLE_PLUS",
      " Critical , false, CRITICAL"})
  void inboundCriticality(String header, boolean trusted, Criticality expected) {
    ResilienceContext.Inbound inbound = trusted ? ResilienceContext.Inbound.DEFAULT.trustingCriticalPlus()
        : ResilienceContext.Inbound.DEFAULT;
    assertThat(ResilienceContext.fromHeaders(Map.of("X-Criticality", header)::get, inbound, time).criticality())
        .isEqualTo(expected);
  }

  @Test
  void unknownCriticalityIsIgnored() {
    ResilienceContext in = ResilienceContext.fromHeaders(Map.of("X-Criticality", "URGENT!!")::get,
        ResilienceContext.Inbound.DEFAULT, time);
    assertThat(in.hasCriticality()).isFalse();
    assertThat(in.criticality()).isEqualTo(Criticality.CRITICAL);
  }
}
