package dev.quell.spring;

import dev.quell.ResilienceContext;
import dev.quell.http.QuellServletFilter;
import dev.quell.spring.internal.TrackingServletFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Quell on HTTP: its interceptor on every {@code RestClient.Builder} (and {@code RestTemplateBuilder}),
 * its filter on every {@code WebClient.Builder} Spring Boot provides ({@code quell.http.client.enabled}),
 * and quell-http's servlet filter in servlet applications ({@code quell.http.server.enabled}).
 */
@AutoConfiguration(after = QuellAutoConfiguration.class)
public class QuellHttpAutoConfiguration {

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.web.client.RestClient", "org.springframework.boot.restclient.RestClientCustomizer"})
  @ConditionalOnBooleanProperty(name = "quell.http.client.enabled", matchIfMissing = true)
  static class RestClients {
    @Bean
    @ConditionalOnMissingBean
    QuellRestClientInterceptor quellRestClientInterceptor(QuellPolicies policies) {
      return new QuellRestClientInterceptor(policies);
    }

    @Bean
    RestClientCustomizer quellRestClientCustomizer(QuellRestClientInterceptor interceptor) {
      return builder -> builder.requestInterceptor(interceptor);
    }

    @Bean
    @ConditionalOnClass(name = "org.springframework.boot.restclient.RestTemplateCustomizer")
    RestTemplateCustomizer quellRestTemplateCustomizer(QuellRestClientInterceptor interceptor) {
      return template -> template.getInterceptors().add(interceptor);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.web.reactive.function.client.WebClient",
      "org.springframework.boot.webclient.WebClientCustomizer"})
  @ConditionalOnBooleanProperty(name = "quell.http.client.enabled", matchIfMissing = true)
  static class WebClients {
    @Bean
    @ConditionalOnMissingBean
    QuellWebClientFilter quellWebClientFilter(QuellPolicies policies) {
      return new QuellWebClientFilter(policies);
    }

    @Bean
    WebClientCustomizer quellWebClientCustomizer(QuellWebClientFilter filter) {
      return builder -> builder.filter(filter);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = {"jakarta.servlet.Filter", "org.springframework.boot.web.servlet.FilterRegistrationBean"})
  @ConditionalOnBooleanProperty(name = "quell.http.server.enabled", matchIfMissing = true)
  static class Servlet {
    @Bean
    @ConditionalOnMissingBean(name = "quellServletFilter")
    FilterRegistrationBean<TrackingServletFilter> quellServletFilter(QuellPolicies policies) {
      QuellProperties.Server server = policies.registry().properties().getHttp().getServer();
      ResilienceContext.Inbound inbound = ResilienceContext.Inbound.DEFAULT.withMaxDeadline(server.getMaxDeadline());
      if (server.isTrustCriticalPlus()) {
        inbound = inbound.trustingCriticalPlus();
      }
      FilterRegistrationBean<TrackingServletFilter> registration = new FilterRegistrationBean<>(
          new TrackingServletFilter(new QuellServletFilter(inbound), policies.registry().inFlight()));
      registration.setName("quell");
      registration.setOrder(server.getOrder());
      registration.addUrlPatterns("/*");
      return registration;
    }
  }
}
