/**
 * A runnable shop that calls an inventory service through Quell's Spring Boot starter: a policy from
 * {@code application.yml}, the {@code RestClient} integration, {@code @Resilient}, the actuator endpoint,
 * Prometheus meters and draining on shutdown. See {@code docs/spring-boot.md}.
 */
@NullMarked
package dev.quell.example.spring;

import org.jspecify.annotations.NullMarked;
