package dev.quell.spring.internal;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;

/** Where a property's value came from (a file and line, an environment variable), for error messages. */
public final class PropertyOrigins {
  /** Knows no origins: for policies built outside an application context. */
  public static final PropertyOrigins NONE = new PropertyOrigins(null);

  private final @Nullable Iterable<ConfigurationPropertySource> sources;

  private PropertyOrigins(@Nullable Iterable<ConfigurationPropertySource> sources) {
    this.sources = sources;
  }

  /** The origins of {@code environment}'s properties. */
  public static PropertyOrigins of(Environment environment) {
    return new PropertyOrigins(ConfigurationPropertySources.get(environment));
  }

  /** The property at {@code path} as its source holds it, or null. */
  @Nullable ConfigurationProperty find(String path) {
    Iterable<ConfigurationPropertySource> s = sources;
    ConfigurationPropertyName name = ConfigurationPropertyName.ofIfValid(path);
    if (s == null || name == null) {
      return null;
    }
    for (ConfigurationPropertySource source : s) {
      ConfigurationProperty property = source.getConfigurationProperty(name);
      if (property != null) {
        return property;
      }
    }
    return null;
  }
}
