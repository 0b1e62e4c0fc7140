package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.ResilienceConfigurationException;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The init parameters a servlet container passes from {@code web.xml}. */
class QuellServletFilterConfigTest {

  private static FilterConfig config(Map<String, String> params) {
    return new FilterConfig() {
      @Override
      public String getFilterName() {
        return "quell";
      }

      @Override
      public ServletContext getServletContext() {
        throw new UnsupportedOperationException();
      }

      @Override
      public String getInitParameter(String name) {
        return params.get(name);
      }

      @Override
      public Enumeration<String> getInitParameterNames() {
        return Collections.enumeration(params.keySet());
      }
    };
  }

  @Test
  void theMaxDeadlineParameterCapsInboundDeadlines() throws Exception {
    QuellServletFilter filter = new QuellServletFilter();
    filter.init(config(Map.of(QuellServletFilter.MAX_DEADLINE_PARAM, "PT1.5S")));

    assertThat(filter.toString()).contains("maxDeadline=PT1.5S");
  }

  @Test
  void aMaxDeadlineThatIsNotADurationIsAClearError() {
    Throwable thrown = catchThrowable(() -> new QuellServletFilter().init(config(Map.of("maxDeadline", "10 seconds"))));

    assertThat(thrown).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("maxDeadline was \"10 seconds\"").hasMessageContaining("ISO-8601");
  }

  @Test
  void aNegativeMaxDeadlineIsAClearError() {
    Throwable thrown = catchThrowable(() -> new QuellServletFilter().init(config(Map.of("maxDeadline", "-PT1S"))));

    assertThat(thrown).isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("maxDeadline");
  }

  @Test
  void trustCriticalPlusMustBeTrueOrFalse() {
    Throwable thrown = catchThrowable(() -> new QuellServletFilter().init(config(Map.of("trustCriticalPlus", "yes"))));

    assertThat(thrown).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("trustCriticalPlus was \"yes\": must be true or false");
  }
}
