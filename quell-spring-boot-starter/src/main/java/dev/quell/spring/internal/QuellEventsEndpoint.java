package dev.quell.spring.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The actuator endpoint {@code quellevents}: the recent events of every policy, oldest first
 * ({@code quell.events.size} a policy); {@code /actuator/quellevents/{name}} those of one policy and its
 * per-host copies. Resilience4j's {@code circuitbreakerevents} and {@code retryevents} in one.
 */
@Endpoint(id = "quellevents")
public final class QuellEventsEndpoint {
  private final EventLog log;

  public QuellEventsEndpoint(EventLog log) {
    this.log = log;
  }

  /** Every event kept. */
  @ReadOperation
  public Map<String, Object> events() {
    return wrap(log.events());
  }

  /** The events of policy {@code name} and its per-host copies. */
  @ReadOperation
  public Map<String, Object> events(@Selector String name) {
    return wrap(log.events(name));
  }

  private static Map<String, Object> wrap(List<EventLog.Entry> entries) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("events", entries.stream().map(EventLog.Entry::toMap).toList());
    return out;
  }
}
