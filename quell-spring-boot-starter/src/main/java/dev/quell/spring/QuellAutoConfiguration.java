package dev.quell.spring;

import dev.quell.Resilience;
import dev.quell.TimeSource;
import dev.quell.spring.internal.DrainingLifecycle;
import dev.quell.spring.internal.EventLog;
import dev.quell.spring.internal.MicrometerTelemetry;
import dev.quell.spring.internal.PolicyRegistry;
import dev.quell.spring.internal.RefreshListener;
import dev.quell.spring.internal.ResilientMethods;
import dev.quell.spring.internal.Telemetry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Quell's policies from {@code quell.*} properties: {@link QuellPolicies}, a {@link Resilience} bean per
 * configured policy (qualified by its name), {@link Resilient @Resilient} methods, Micrometer meters when
 * a {@code MeterRegistry} is there, rebuilding on Spring Cloud's refresh, and draining on shutdown.
 * Exclude it ({@code spring.autoconfigure.exclude}) to wire Quell yourself.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@EnableConfigurationProperties(QuellProperties.class)
@Import(QuellAutoConfiguration.PolicyBeans.class)
public class QuellAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public QuellPolicies quellPolicies(Environment environment, ObjectProvider<Telemetry> telemetry, EventLog events,
      ObjectProvider<TimeSource> time) {
    // a TimeSource bean (a test's virtual clock, say) is the clock of every policy built from properties
    return new QuellPolicies(new PolicyRegistry(environment,
        Telemetry.of(List.of(telemetry.getIfUnique(() -> Telemetry.NONE), Telemetry.events(events))), time.getIfUnique()));
  }

  /** The recent events of every policy ({@code quell.events.size} a policy), for the quellevents endpoint. */
  @Bean
  @ConditionalOnMissingBean
  public EventLog quellEventLog(Environment environment) {
    int size = Binder.get(environment).bind("quell.events.size", Integer.class).orElse(new QuellProperties.Events().getSize());
    return new EventLog(Math.max(0, size)); // a negative size is reported with the other quell.* problems
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  public static ResilientMethods quellResilientMethods(ObjectProvider<QuellPolicies> policies, Environment environment) {
    int order = Binder.get(environment).bind("quell.methods.order", Integer.class)
        .orElse(new QuellProperties.Methods().getOrder());
    return new ResilientMethods(() -> policies.getObject().registry(), order);
  }

  @Bean
  @ConditionalOnMissingBean
  public DrainingLifecycle quellDraining(QuellPolicies policies) {
    PolicyRegistry registry = policies.registry();
    return new DrainingLifecycle(() -> registry.properties().getDraining(), registry.inFlight());
  }

  /** Meters in the application's Micrometer registry, when it has one. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
  static class Micrometer {
    @Bean
    Telemetry quellTelemetry(ObjectProvider<MeterRegistry> registry) {
      MeterRegistry r = registry.getIfUnique();
      return r == null ? Telemetry.NONE : new MicrometerTelemetry(r);
    }
  }

  /** Rebuilds the policies when Spring Cloud refreshes the configuration. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
  static class Refresh {
    @Bean
    RefreshListener quellRefreshListener(QuellPolicies policies) {
      return new RefreshListener(policies::reload);
    }
  }

  /**
   * A {@link Resilience} bean for each name under {@code quell.policies} when the context starts, named
   * {@code quell.policy.NAME}, qualified by {@code NAME} and, unless another bean has that name, aliased
   * {@code NAME}; and an auto-proxy creator for
   * {@code @Resilient} (Spring Boot's AOP configuration usually has one already).
   */
  static class PolicyBeans implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {
    private @Nullable Environment environment;
    private @Nullable BeanFactory beanFactory;

    @Override
    public void setEnvironment(Environment environment) {
      this.environment = environment;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
      this.beanFactory = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
      Environment env = environment;
      BeanFactory factory = beanFactory;
      if (env == null || factory == null) {
        return;
      }
      Map<String, QuellProperties.Policy> policies = Binder.get(env)
          .bind("quell.policies", Bindable.mapOf(String.class, QuellProperties.Policy.class))
          .orElse(Map.of());
      for (String name : policies.keySet()) {
        String beanName = "quell.policy." + name;
        if (registry.containsBeanDefinition(beanName)) {
          continue;
        }
        RootBeanDefinition definition = new RootBeanDefinition(Resilience.class,
            () -> factory.getBean(QuellPolicies.class).policy(name));
        definition.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
        definition.setDescription("Quell policy '" + name + "' (quell.policies." + name + ")");
        registry.registerBeanDefinition(beanName, definition);
        if (!registry.containsBeanDefinition(name) && !registry.isAlias(name)) {
          registry.registerAlias(beanName, name); // so that `Resilience inventory` is injected by its name alone
        }
      }
    }
  }
}
