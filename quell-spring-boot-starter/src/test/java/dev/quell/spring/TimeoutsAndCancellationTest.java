package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.spring.Downstream.Answer;
import dev.quell.spring.Downstream.Seen;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * A hung attempt and a caller who gives up, against a real server on loopback: the RestClient abandons
 * an attempt at its timeout and retries with a fresh request; a WebClient call cancelled by its
 * subscriber ends as CANCELLED, starts no retry, and leaves nothing in flight.
 */
class TimeoutsAndCancellationTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  static final Downstream DEPENDENCY = Downstream.start();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withPropertyValues(
          "quell.defaults.backoff.kind=none",
          "quell.policies.slow.attempts=2",
          "quell.policies.slow.attempt-timeout=3s", // the first attempt never answers: the timeout is what ends it
          "quell.policies.patient.attempts=3",
          "quell.policies.patient.attempt-timeout=60s");

  @AfterAll
  static void stop() {
    DEPENDENCY.close();
  }

  @Test
  void aHungAttemptIsAbandonedAtItsTimeoutAndARetryAnswers() {
    CountDownLatch never = new CountDownLatch(1);
    DEPENDENCY.script("/hang-then-answer", Answer.ok("late").heldUntil(never), Answer.ok("fresh"));
    try {
      runner.run(context -> {
        QuellPolicies policies = context.getBean(QuellPolicies.class);
        RestClient rest = RestClient.builder()
            .requestFactory(new JdkClientHttpRequestFactory())
            .requestInterceptor(new QuellRestClientInterceptor(policies, "slow"))
            .build();

        assertThat(rest.get().uri(DEPENDENCY.url() + "/hang-then-answer").retrieve().body(String.class)).isEqualTo("fresh");

        List<Seen> seen = DEPENDENCY.seen("/hang-then-answer");
        assertThat(seen).hasSize(2);
        assertThat(seen.get(0).header("X-Quell-Attempt")).isEqualTo("1/2");
        assertThat(seen.get(1).header("X-Quell-Attempt")).isEqualTo("2/2");
        assertThat(policies.registry().inFlight().count()).isZero();
      });
    } finally {
      never.countDown();
    }
  }

  @Test
  void aWebClientCallCancelledByItsSubscriberEndsAndRetriesNothing() {
    CountDownLatch release = new CountDownLatch(1);
    DEPENDENCY.script("/cancelled", Answer.status(503).heldUntil(release), Answer.ok("never asked"));
    try {
      runner.run(context -> {
        QuellPolicies policies = context.getBean(QuellPolicies.class);
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        WebClient web = WebClient.builder().filter(new QuellWebClientFilter(policies, "patient")).build();

        Disposable call = web.get().uri(DEPENDENCY.url() + "/cancelled").retrieve().bodyToMono(String.class).subscribe();
        DEPENDENCY.awaitSeen("/cancelled", 1, WAIT);
        call.dispose();

        assertThat(policies.registry().inFlight().awaitIdle(WAIT)).as("the call ended").isTrue();
        String policy = "patient:" + DEPENDENCY.host();
        assertThat(meters.get("quell.calls").tag("quell.policy", policy).tag("quell.outcome", "CANCELLED").counter().count())
            .isEqualTo(1.0);
        assertThat(meters.find("quell.attempts").tag("quell.policy", policy).tag("kind", "retry").counter()).isNull();
        assertThat(DEPENDENCY.seen("/cancelled")).hasSize(1);
      });
    } finally {
      release.countDown();
    }
  }
}
