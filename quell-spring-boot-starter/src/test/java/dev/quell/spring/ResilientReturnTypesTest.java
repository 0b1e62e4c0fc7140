package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.spring.internal.ResilientMethods;
import dev.quell.spring.internal.ResilientMethods.Kind;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import kotlin.coroutines.Continuation;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Which return types {@code @Resilient} runs, decided when the proxy is made: Mono and Flux with quell-reactor
 * on the class path, Kotlin suspend functions with quell-kotlin (and kotlinx-coroutines-reactor, through which
 * Spring calls them), and clear start-up errors for the rest and for a missing module.
 */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class ResilientReturnTypesTest {
  private static final ClassLoader ALL = ResilientReturnTypesTest.class.getClassLoader();

  /** Methods of every shape; {@code price} is what Kotlin's compiler makes of {@code suspend fun price(sku: String): Int}. */
  public static class Shapes {
    @Resilient("inventory")
    public String plain() {
      return "42";
    }

    @Resilient("inventory")
    public CompletionStage<String> stage() {
      return CompletableFuture.completedFuture("42");
    }

    @Resilient("inventory")
    public Mono<String> mono() {
      return Mono.just("42");
    }

    @Resilient("inventory")
    public Flux<String> flux() {
      return Flux.just("42");
    }

    @Resilient("inventory")
    public Object price(String sku, Continuation<? super Integer> continuation) {
      return 42;
    }

    @Resilient("inventory")
    public Flow.Publisher<String> jdkPublisher() {
      return subscriber -> {};
    }

    @Resilient("inventory")
    public kotlinx.coroutines.flow.Flow<String> flow() {
      return null;
    }
  }

  private static Kind kind(String name, ClassLoader loader) {
    Method method = java.util.Arrays.stream(Shapes.class.getMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    return ResilientMethods.check(method, method.getAnnotation(Resilient.class), loader);
  }

  /** The class path without the classes under {@code hidden}, as an application without that module has it. */
  private static ClassLoader without(String hidden) {
    return new FilteredClassLoader(hidden);
  }

  @Test
  void eachShapeRunsItsOwnWayWhenItsModuleIsThere() {
    assertThat(kind("plain", ALL)).isEqualTo(Kind.PLAIN);
    assertThat(kind("stage", ALL)).isEqualTo(Kind.STAGE);
    assertThat(kind("mono", ALL)).isEqualTo(Kind.MONO);
    assertThat(kind("flux", ALL)).isEqualTo(Kind.FLUX);
    assertThat(kind("price", ALL)).isEqualTo(Kind.SUSPEND);
  }

  @Test
  void aMonoOrFluxWithoutQuellReactorIsAStartUpErrorThatSaysToAddIt() {
    for (String name : new String[] {"mono", "flux"}) {
      assertThatThrownBy(() -> kind(name, without("dev.quell.reactor.")))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("@Resilient on " + Shapes.class.getName() + "." + name + "() returns reactor.core.publisher.")
          .hasMessageContaining("add the dependency dev.quell:quell-reactor");
    }
    assertThat(kind("plain", without("dev.quell.reactor."))).isEqualTo(Kind.PLAIN);
  }

  @Test
  void aSuspendFunctionWithoutQuellKotlinOrKotlinxCoroutinesReactorIsAStartUpErrorThatSaysWhatToAdd() {
    assertThatThrownBy(() -> kind("price", without("dev.quell.kotlin.")))
        .hasMessageContaining("@Resilient on " + Shapes.class.getName() + ".price() is a Kotlin suspend function")
        .hasMessageContaining("add the dependency dev.quell:quell-kotlin");
    assertThatThrownBy(() -> kind("price", without("kotlinx.coroutines.reactor.")))
        .hasMessageContaining("add the dependency org.jetbrains.kotlinx:kotlinx-coroutines-reactor");
  }

  @Test
  void otherPublishersAndFlowsAreRefusedSayingWhatRuns() {
    assertThatThrownBy(() -> kind("jdkPublisher", ALL))
        .hasMessageContaining("returns java.util.concurrent.Flow$Publisher, a reactive type @Resilient does not run")
        .hasMessageContaining("it runs Mono and Flux (with quell-reactor), Kotlin suspend functions (with quell-kotlin)");
    assertThatThrownBy(() -> kind("flow", ALL))
        .hasMessageContaining("returns kotlinx.coroutines.flow.Flow")
        .hasMessageContaining("flow.resilient(policy)");
  }

  /** A real application whose class path lacks quell-reactor does not start. */
  public static class Stock {
    @Resilient("inventory")
    public Mono<String> stock() {
      return Mono.just("42");
    }
  }

  /** A method a class proxy cannot override, as a Kotlin function not declared open. */
  public static class Sealed {
    @Resilient("inventory")
    public final String stock() {
      return "42";
    }
  }

  @Test
  void aFinalMethodThatWouldBypassTheProxyUnnoticedStopsTheStartUp() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
        .withBean(Sealed.class)
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasStackTraceContaining("@Resilient on " + Sealed.class.getName()
              + ".stock() cannot run: the method is final").hasStackTraceContaining("declare it open");
        });
  }

  @Test
  void anApplicationWithAMonoMethodAndNoQuellReactorDoesNotStart() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("dev.quell.reactor."))
        .withBean(Stock.class)
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasStackTraceContaining("@Resilient on " + Stock.class.getName()
              + ".stock() returns reactor.core.publisher.Mono, which @Resilient runs through quell-reactor's operator:"
              + " add the dependency dev.quell:quell-reactor");
        });
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
        .withBean(Stock.class)
        .run(context -> assertThat(context.getBean(Stock.class).stock().block()).isEqualTo("42"));
  }
}
