package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CallRejectedException;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.StopReason;
import dev.quell.TimeSource;
import dev.quell.spring.internal.QuellEndpoint;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;

/**
 * {@code quell.policies.NAME.throttle.*}: client-side adaptive throttling from properties. Against a real
 * loopback server that pushes back with 503s, the throttle refuses first attempts locally — the server
 * counts fewer requests than the application made — per host, inherited like every group of settings,
 * shown by the endpoint and the meters, and kept across a reload while it is refusing.
 */
class ThrottleFromPropertiesTest {
  private static final int CALLS = 100;

  private final Downstream busy = Downstream.start().script("/stock", Downstream.Answer.status(503));
  private final Downstream healthy = Downstream.start();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class, QuellHttpAutoConfiguration.class,
          QuellActuatorAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

  @AfterEach
  void stop() {
    busy.close();
    healthy.close();
  }

  /** GETs {@code url} under {@code policy}: "ok", "503", or the stop reason of a local refusal. */
  private static String get(RestClient rest, String url, String policy) {
    try {
      return rest.get().uri(url).attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, policy).retrieve()
          .body(String.class);
    } catch (HttpServerErrorException e) {
      return String.valueOf(e.getStatusCode().value());
    } catch (CallRejectedException e) {
      return e.reason().name();
    }
  }

  /** The YAML example of docs/spring-boot.md's "Adaptive throttling", as a property source. */
  private static PropertySource<?> docsExample() throws IOException {
    String page = Files.readString(ConfigurationMetadataTest.docs());
    int section = page.indexOf("### Adaptive throttling");
    int start = page.indexOf("```yaml\n", section) + "```yaml\n".length();
    String yaml = page.substring(start, page.indexOf("```", start));
    assertThat(yaml).contains("recommendations:", "throttle:");
    return new YamlPropertySourceLoader().load("docs/spring-boot.md", new ByteArrayResource(yaml.getBytes(
        StandardCharsets.UTF_8))).get(0);
  }

  @Test
  void againstADependencyThatPushesBackTheThrottleRefusesFirstAttemptsLocallyAndTheServerSeesFewer() throws IOException {
    PropertySource<?> example = docsExample();
    runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(example))
        .withPropertyValues("quell.policies.plain.attempts=1").run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          RestClient rest = RestClient.builder().requestInterceptor(context.getBean(QuellRestClientInterceptor.class))
              .build();
          int answered = 0;
          int limited = 0;
          for (int i = 0; i < CALLS; i++) {
            String got = get(rest, busy.url() + "/stock", "recommendations");
            if (got.equals("503")) {
              answered++;
            } else {
              assertThat(got).isEqualTo(StopReason.LIMITED.name());
              limited++;
            }
          }
          // every call the throttle let go was sent, and retried once (attempts: 2) while the budget allowed;
          // every other call ended here, LIMITED, and never left the application
          assertThat(answered + limited).isEqualTo(CALLS);
          assertThat(busy.seen("/stock").size()).isBetween(answered, 2 * answered);
          // with no accepts, each first attempt asked for raises the probability to r / (r + 1): a handful go
          assertThat(answered).isPositive().isLessThan(CALLS / 4);
          int sent = busy.seen("/stock").size();

          // the docs' reading, the endpoint and the meters show the probability of the busy host's copy
          String host = busy.host();
          Resilience copy = policies.hostPolicies("recommendations").get(host); // host: "127.0.0.1:8081"
          double refused = copy.limiters().get(0).rejectionProbability(); // the share of CRITICAL first attempts refused now
          assertThat(refused).isGreaterThan(0.9);
          String name = "recommendations:" + host + ".throttle";
          Map<String, Object> shown = new QuellEndpoint(policies.registry()).policy("recommendations");
          @SuppressWarnings("unchecked")
          Map<String, Object> hosts = (Map<String, Object>) shown.get("hosts");
          assertThat(throttleOf(hosts.get(busy.host()))).containsEntry("name", name).containsEntry("kind", "throttle")
              .hasEntrySatisfying("rejectionProbability", p -> assertThat((double) p).isGreaterThan(0.9));
          Gauge gauge = context.getBean(MeterRegistry.class).find("quell.limiter.rejection_probability")
              .tag("quell.limiter", name).tag("quell.policy", "recommendations:" + host).tag("kind", "throttle").gauge();
          assertThat(gauge).isNotNull();
          assertThat(gauge.value()).isGreaterThan(0.9);

          // without a throttle, the same dependency is sent every call
          for (int i = 0; i < CALLS; i++) {
            assertThat(get(rest, busy.url() + "/stock", "plain")).isEqualTo("503");
          }
          assertThat(busy.seen("/stock")).hasSize(sent + CALLS);

          // per host: another dependency under the same policy has a throttle of its own, which refuses nothing
          for (int i = 0; i < 20; i++) {
            assertThat(get(rest, healthy.url() + "/stock", "recommendations")).isEqualTo("ok");
          }
          assertThat(healthy.seen("/stock")).hasSize(20);
          @SuppressWarnings("unchecked")
          Map<String, Object> hostsNow = (Map<String, Object>) new QuellEndpoint(policies.registry())
              .policy("recommendations").get("hosts");
          assertThat(hostsNow).containsKeys(busy.host(), healthy.host());
          assertThat(throttleOf(hostsNow.get(healthy.host()))).containsEntry("rejectionProbability", 0.0);

          // the configured policy itself saw none of it: the HTTP clients run each host's copy
          assertThat(throttle(policies.policy("recommendations")).rejectionProbability()).isZero();
          assertThat(throttle(policies.policy("recommendations")).toString()).contains("K=2.0, window 10000 ms");
        });
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> throttleOf(Object guards) {
    List<Map<String, Object>> limiters = (List<Map<String, Object>>) ((Map<String, Object>) guards).get("limiters");
    return limiters.stream().filter(l -> "throttle".equals(l.get("kind"))).findFirst().orElseThrow();
  }

  private static Limiter throttle(Resilience policy) {
    return policy.limiters().stream().filter(l -> l.toString().startsWith("Limiter.throttle[")).findFirst().orElseThrow();
  }

  private static boolean hasThrottle(Resilience policy) {
    return policy.limiters().stream().anyMatch(l -> l.toString().startsWith("Limiter.throttle["));
  }

  @Test
  void itsSettingsAreInheritedFromTemplatesAndDefaultsSettingBySetting() {
    runner.withPropertyValues("quell.defaults.throttle.window=10s", "quell.configs.shedding.throttle.k=1.5",
        "quell.policies.own.throttle.k=3", "quell.policies.templated.base-config=shedding",
        "quell.policies.untouched.attempts=2").run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          assertThat(throttle(policies.policy("own")).toString()).contains("[own.throttle, K=3.0, window 10000 ms");
          assertThat(throttle(policies.policy("templated")).toString()).contains("[templated.throttle, K=1.5, window 10000 ms");
          // a window in the defaults is a setting of the group, so every policy has a throttle
          assertThat(throttle(policies.policy("untouched")).toString()).contains("[untouched.throttle, K=2.0, window 10000 ms");
        });
  }

  @Test
  void offUnlessItsSettingsOrEnabledAreGivenAndAPolicysOwnSettingsOutweighADefaultOff() {
    runner.withPropertyValues("quell.policies.none.attempts=2", "quell.policies.on.throttle.enabled=true").run(context -> {
      QuellPolicies policies = context.getBean(QuellPolicies.class);
      assertThat(hasThrottle(policies.policy("none"))).isFalse();
      // enabled alone: the core's defaults, K = 2 over two minutes
      assertThat(throttle(policies.policy("on")).toString())
          .isEqualTo(Limiter.throttle().withName("on.throttle").toString());
    });
    runner.withPropertyValues("quell.defaults.throttle.enabled=false", "quell.policies.mine.throttle.window=5s",
        "quell.policies.off.throttle.enabled=false", "quell.policies.off.throttle.k=2").run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          assertThat(throttle(policies.policy("mine")).toString()).contains("K=2.0, window 5000 ms");
          assertThat(hasThrottle(policies.policy("off"))).isFalse();
        });
  }

  @Test
  void aThrottleThatIsRefusingIsKeptAcrossAReloadUntilItRefusesNothingThenTakesTheNewSettings() {
    VirtualTime time = VirtualTime.create();
    runner.withBean(TimeSource.class, () -> time)
        .withPropertyValues("quell.policies.shed.attempts=1", "quell.policies.shed.throttle.k=1",
            "quell.policies.shed.throttle.window=10s", "quell.policies.calm.throttle.window=10s").run(context -> {
              QuellPolicies policies = context.getBean(QuellPolicies.class);
              Limiter before = throttle(policies.policy("shed"));
              Limiter calm = throttle(policies.policy("calm"));
              for (int i = 0; i < 20; i++) {
                policies.policy("shed").run(() -> {
                  throw new IOException("pushed back");
                });
              }
              assertThat(before.rejectionProbability()).isGreaterThan(0.5);

              // a change elsewhere keeps the same throttle, with its history
              TestPropertyValues.of("quell.policies.shed.attempts=2").applyTo(context);
              policies.reload();
              assertThat(throttle(policies.policy("shed"))).isSameAs(before);

              // a change of its own settings while it refuses: kept as it is, refusing as before
              TestPropertyValues.of("quell.policies.shed.throttle.k=1.5", "quell.policies.calm.throttle.k=1.5")
                  .applyTo(context);
              policies.reload();
              assertThat(throttle(policies.policy("shed"))).isSameAs(before);
              assertThat(before.toString()).contains("K=1.0");
              assertThat(before.rejectionProbability()).isGreaterThan(0.5);
              // one that refused nothing takes its new settings at once
              Limiter calmAfter = throttle(policies.policy("calm"));
              assertThat(calmAfter).isNotSameAs(calm);
              assertThat(calmAfter.toString()).contains("[calm.throttle, K=1.5");

              // the window over, it refuses nothing: the next lookup builds the one with the new settings
              time.advance(Duration.ofSeconds(11));
              Limiter after = throttle(policies.policy("shed"));
              assertThat(after).isNotSameAs(before);
              assertThat(after.toString()).contains("[shed.throttle, K=1.5, window 10000 ms");
              assertThat(policies.policy("shed").run(() -> "sent").value()).isEqualTo("sent");
            });
  }
}
