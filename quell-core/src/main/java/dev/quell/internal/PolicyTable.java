package dev.quell.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What a telemetry binding keeps per policy name (its meters, its attribute sets), made on first use
 * and looked up without allocating: the last name's entry is remembered by identity (the core passes
 * each policy's own name string), then the map is asked.
 *
 * <p>Policy names are configuration, but scope keys make names that come and go: bindings
 * {@link #remove} a name when its budgets are collected. As a safety net, at most
 * {@value #MAX_NAMES} names get entries of their own; later names share the entry of
 * {@value #OVERFLOW_NAME}. Thread-safe.
 *
 * @param <V> what is kept per name
 */
@Internal
public final class PolicyTable<V> {
  /** The most policy names given entries of their own (the OpenTelemetry SDK's default cardinality limit). */
  public static final int MAX_NAMES = 2000;
  /** The name shared by policy names past {@link #MAX_NAMES}. */
  public static final String OVERFLOW_NAME = "_other";

  private final ConcurrentHashMap<String, Entry<V>> byName = new ConcurrentHashMap<>();
  private final Function<String, Entry<V>> newEntry;
  /** The last name's entry: a racy cache, safe because Entry has only final fields. */
  private @Nullable Entry<V> last;

  /** A table whose entries {@code factory} makes from the policy name ({@value #OVERFLOW_NAME} for the overflow). */
  public PolicyTable(Function<String, V> factory) {
    this.newEntry = name -> new Entry<>(name, factory.apply(name));
  }

  /** The entry of {@code policy}, made on first use; the overflow entry once the table is full. */
  public V get(String policy) {
    Entry<V> e = last;
    if (e != null && e.name == policy) {
      return e.value;
    }
    e = byName.get(policy);
    if (e == null) {
      if (byName.size() >= MAX_NAMES) {
        return byName.computeIfAbsent(OVERFLOW_NAME, newEntry).value;
      }
      e = byName.computeIfAbsent(policy, newEntry);
    }
    last = e;
    return e.value;
  }

  /** Forgets {@code policy}'s entry and returns it, or null if it had none. A later use starts a new one. */
  public @Nullable V remove(String policy) {
    Entry<V> e = byName.remove(policy);
    if (e == null) {
      return null;
    }
    last = null;
    return e.value;
  }

  /** Number of policy names with entries now, the overflow name included. */
  public int size() {
    return byName.size();
  }

  private static final class Entry<V> {
    final String name;
    final V value;

    Entry(String name, V value) {
      this.name = name;
      this.value = value;
    }
  }
}
