package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.spring.Downstream.Answer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;

/**
 * A policy's deadline against a dependency that answers late, through the {@code RestClient.Builder}
 * Spring Boot gives, with each request factory Boot may pick that is on the test class path ({@code jdk},
 * {@code reactor}, {@code simple}): which of them end the call when the deadline passes, and what the
 * others do. docs/spring-boot.md says the same.
 */
class RequestFactoriesTest {
  private final Downstream dependency = Downstream.start();
  private final CountDownLatch answer = new CountDownLatch(1);

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(HttpClientAutoConfiguration.class, ImperativeHttpClientAutoConfiguration.class,
          RestClientAutoConfiguration.class, QuellAutoConfiguration.class, QuellHttpAutoConfiguration.class))
      .withPropertyValues("quell.policies.late.deadline=800ms", "quell.policies.late.attempts=1");

  @AfterEach
  void stop() {
    answer.countDown();
    dependency.close();
  }

  CompletableFuture<String> call(RestClient rest) {
    return CompletableFuture.supplyAsync(() -> rest.get().uri(dependency.url() + "/late")
        .attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "late").retrieve().body(String.class));
  }

  /** How the call ended within {@code seconds}: its exception's class, or "answered" and the body; else "still waiting". */
  static String outcome(CompletableFuture<String> call, int seconds) throws InterruptedException {
    try {
      return "answered " + call.get(seconds, TimeUnit.SECONDS);
    } catch (TimeoutException stillWaiting) {
      return "still waiting";
    } catch (ExecutionException e) {
      return e.getCause().getClass().getSimpleName();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"jdk", "reactor"})
  void theseFactoriesEndTheCallWhenTheDeadlinePassesWhileTheDependencyHasNotAnswered(String factory) {
    dependency.script("/late", Answer.ok("late").heldUntil(answer));
    runner.withPropertyValues("spring.http.clients.imperative.factory=" + factory).run(context -> {
      RestClient rest = context.getBean(RestClient.Builder.class).build();
      assertThat(outcome(call(rest), 5)).isEqualTo("DeadlineExceededException");
      assertThat(answer.getCount()).as("the dependency has not answered yet").isEqualTo(1);
    });
  }

  /**
   * Pinned as docs/spring-boot.md states it: {@code simple} (HttpURLConnection) blocks in a socket read that
   * no interrupt ends, so the call goes on past its deadline and returns the late answer.
   */
  @ParameterizedTest
  @ValueSource(strings = {"simple"})
  void theSimpleFactoryDoesNotEndTheCallAtTheDeadlineAndReturnsTheLateAnswer(String factory) {
    dependency.script("/late", Answer.ok("late").heldUntil(answer));
    runner.withPropertyValues("spring.http.clients.imperative.factory=" + factory).run(context -> {
      RestClient rest = context.getBean(RestClient.Builder.class).build();
      CompletableFuture<String> call = call(rest);
      // HttpURLConnection does not honour the interrupt that ends an attempt: the call waits for the answer
      assertThat(outcome(call, 5)).isEqualTo("still waiting");
      answer.countDown();
      assertThat(outcome(call, 30)).isEqualTo("answered late");
    });
  }
}
