package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Draining;
import dev.quell.spring.internal.DrainingLifecycle;
import dev.quell.spring.internal.QuellEndpoint;
import dev.quell.spring.internal.QuellHealthIndicator;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerApplicationContext;

/** What the starter puts into a context, and what it leaves out unless asked. */
class LifecycleAndActuatorWiringTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class, QuellActuatorAutoConfiguration.class,
          QuellHttpAutoConfiguration.class, EndpointAutoConfiguration.class));

  @Test
  void drainingBeginsBelowTheWebServersGracefulShutdownAndAboveItsStop() {
    assertThat(DrainingLifecycle.PHASE)
        .isLessThan(WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE)
        .isGreaterThan(WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE);
    runner.run(context -> assertThat(context.getBean(DrainingLifecycle.class).getPhase()).isEqualTo(DrainingLifecycle.PHASE));
  }

  @Test
  void aContextClosingInAJvmThatGoesOnDoesNotDrainIt() {
    runner.run(context -> assertThat(context.getBean(DrainingLifecycle.class).isRunning()).isTrue());
    // the runner closed its context, stopping every lifecycle: this JVM is not shutting down, so nothing drained
    assertThat(Draining.isDraining()).isFalse();
  }

  @Test
  void theHealthIndicatorIsOffUnlessTurnedOn() {
    runner.run(context -> assertThat(context).doesNotHaveBean(QuellHealthIndicator.class));
    runner.withPropertyValues("management.health.quell.enabled=true")
        .run(context -> assertThat(context).hasSingleBean(QuellHealthIndicator.class));
  }

  @Test
  void theEndpointIsThereWhenExposed() {
    runner.run(context -> assertThat(context).doesNotHaveBean(QuellEndpoint.class));
    runner.withPropertyValues("management.endpoints.web.exposure.include=quell")
        .run(context -> assertThat(context).hasSingleBean(QuellEndpoint.class));
  }

  @Test
  void theHttpClientsCanBeLeftAlone() {
    runner.run(context -> {
      assertThat(context).hasSingleBean(QuellRestClientInterceptor.class);
      assertThat(context).hasSingleBean(QuellWebClientFilter.class);
    });
    runner.withPropertyValues("quell.http.client.enabled=false").run(context -> {
      assertThat(context).doesNotHaveBean(QuellRestClientInterceptor.class);
      assertThat(context).doesNotHaveBean(QuellWebClientFilter.class);
    });
  }
}
