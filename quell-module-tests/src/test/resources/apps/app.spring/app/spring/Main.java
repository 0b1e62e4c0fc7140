package app.spring;

import app.support.Friends;
import dev.quell.Resilience;
import dev.quell.spring.QuellAutoConfiguration;
import dev.quell.spring.QuellPolicies;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * A context with Quell's auto-configuration, a policy from properties and a Micrometer registry: the
 * starter builds the policy and binds its meters through quell-micrometer, which reads
 * dev.quell.internal. A plain context, not SpringApplication: enough to load and run the
 * auto-configuration class without Boot's whole auto-configuration scan.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    Friends.check("dev.quell.spring", QuellAutoConfiguration.class);
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("app",
          Map.of("quell.policies.inventory.attempts", "2")));
      context.registerBean(MeterRegistry.class, SimpleMeterRegistry::new);
      context.register(QuellAutoConfiguration.class);
      context.refresh();
      Resilience inventory = context.getBean(QuellPolicies.class).policy("inventory");
      String answer = inventory.execute(() -> "ok");
      double calls = context.getBean(MeterRegistry.class).get("quell.calls").counter().count();
      System.out.println("quell-spring-boot-starter on the module path: " + answer + " from "
          + inventory.attempts() + "-attempt policy " + inventory.name() + ", quell.calls " + calls);
    }
  }
}
