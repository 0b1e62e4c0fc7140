/**
 * Quell for Spring Boot. Policies come from {@code quell.*} properties ({@link dev.quell.spring.QuellProperties});
 * {@link dev.quell.spring.QuellPolicies} holds them by name, rebuilds them when the configuration is refreshed
 * and keeps each one's retry budget, circuit breaker and limiters across the rebuild. Each configured policy is
 * also a {@code Resilience} bean, qualified by its name. {@link dev.quell.spring.Resilient} runs a method
 * through a policy; {@link dev.quell.spring.QuellRestClientInterceptor} and
 * {@link dev.quell.spring.QuellWebClientFilter} run HTTP calls through one, per host. See
 * {@code docs/spring-boot.md}.
 */
@NullMarked
package dev.quell.spring;

import org.jspecify.annotations.NullMarked;
