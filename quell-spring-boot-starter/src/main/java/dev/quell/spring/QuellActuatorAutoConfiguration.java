package dev.quell.spring;

import dev.quell.spring.internal.EventLog;
import dev.quell.spring.internal.QuellEndpoint;
import dev.quell.spring.internal.QuellEventsEndpoint;
import dev.quell.spring.internal.QuellHealthIndicator;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The actuator endpoint {@code quell} (expose it with {@code management.endpoints.web.exposure.include}),
 * and the {@code quell} health indicator — off unless {@code management.health.quell.enabled=true}, and
 * never part of liveness.
 */
@AutoConfiguration(after = QuellAutoConfiguration.class)
public class QuellActuatorAutoConfiguration {

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
      "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
  @ConditionalOnAvailableEndpoint(QuellEndpoint.class)
  static class Endpoint {
    @Bean
    @ConditionalOnMissingBean
    QuellEndpoint quellEndpoint(QuellPolicies policies) {
      return new QuellEndpoint(policies.registry());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
      "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
  @ConditionalOnAvailableEndpoint(QuellEventsEndpoint.class)
  static class Events {
    @Bean
    @ConditionalOnMissingBean
    QuellEventsEndpoint quellEventsEndpoint(EventLog events) {
      return new QuellEventsEndpoint(events);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  @ConditionalOnBooleanProperty(name = "management.health.quell.enabled")
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "quellHealthIndicator")
    QuellHealthIndicator quellHealthIndicator(QuellPolicies policies) {
      return new QuellHealthIndicator(policies.registry());
    }
  }
}
