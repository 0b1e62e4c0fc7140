package dev.quell.spring.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The live objects behind the policies — retry budgets, circuit breakers, limiters — by owner (a policy
 * name, {@code policy:host}, {@code shared:budget}) and kind, each kept together with the settings it
 * was made from. A policy rebuilt with the same settings gets the same live object, so a refresh keeps
 * its traffic history. Changed settings make a new one, which may take over the old one's state (see
 * {@link Carry}); an old one that must not be replaced yet (a breaker in the middle of an outage) is kept,
 * with its old settings, and listed as {@linkplain #deferred() deferred} until a rebuild finds it may go.
 * Changes are staged in a {@link Session} and take effect together on {@link Session#commit()}, so a
 * rebuild that fails leaves the pins as they were.
 *
 * <p>Thread-safe: every method takes this object's lock (the paths are cold: startup, refresh, the first
 * call to a new host), except {@link #hasDeferred()}, one volatile read.
 */
final class Pins {
  private record Key(String owner, String kind) {}

  private record Entry(Object spec, Object live) {}

  private final Map<Key, Entry> committed = new HashMap<>();
  private final Map<Key, Object> deferred = new HashMap<>();
  private volatile boolean anyDeferred;
  private volatile Object[] deferredSnapshot = new Object[0];

  Session session() {
    return new Session();
  }

  /** Forgets everything {@code owner} held (a host evicted from a scope). */
  synchronized void forget(String owner) {
    committed.keySet().removeIf(k -> k.owner().equals(owner));
    deferred.keySet().removeIf(k -> k.owner().equals(owner));
    publishDeferred();
  }

  private void publishDeferred() {
    deferredSnapshot = deferred.values().toArray();
    anyDeferred = !deferred.isEmpty();
  }

  synchronized int size() {
    return committed.size();
  }

  /** Whether some live object was kept past a change of its settings. One volatile read. */
  boolean hasDeferred() {
    return anyDeferred;
  }

  /**
   * Stops listing {@code live} as deferred: it may be replaced now. (It is replaced when its owner is next
   * built: its settings still differ from those in force.)
   */
  synchronized void release(Object live) {
    deferred.values().removeIf(d -> d == live);
    publishDeferred();
  }

  /** The live objects kept past a change of their settings. No lock: a snapshot taken at the last commit. */
  List<Object> deferred() {
    return List.of(deferredSnapshot);
  }

  /** One rebuild's view: reads what is committed, stages what changes. */
  final class Session {
    private final Map<Key, Entry> staged = new HashMap<>();
    private final Map<Key, @Nullable Object> stagedDeferred = new HashMap<>();

    /** The live object {@code owner} keeps for {@code kind}, made by {@code make} unless one with an equal {@code spec} exists. */
    <T> T get(String owner, String kind, Object spec, java.util.function.Supplier<T> make) {
      return get(owner, kind, spec, previous -> make.get(), previous -> false);
    }

    /**
     * As {@link #get(String, String, Object, java.util.function.Supplier)}; when the settings changed,
     * {@code make} receives the live object they replace (null when there is none) to take its state over,
     * unless {@code keep} says the old one must stay for now: then it stays, with its old settings, deferred.
     */
    <T> T get(String owner, String kind, Object spec, Function<@Nullable T, T> make, Predicate<? super T> keep) {
      Key key = new Key(owner, kind);
      Entry e = staged.get(key);
      if (e == null) {
        synchronized (Pins.this) {
          e = committed.get(key);
        }
      }
      if (e != null && Objects.equals(e.spec(), spec)) {
        stagedDeferred.put(key, null);
      } else {
        @SuppressWarnings("unchecked")
        T previous = e == null ? null : (T) e.live();
        if (previous != null && keep.test(previous)) {
          stagedDeferred.put(key, previous);
        } else {
          e = new Entry(spec, make.apply(previous));
          staged.put(key, e);
          stagedDeferred.put(key, null);
        }
      }
      @SuppressWarnings("unchecked")
      T live = (T) Objects.requireNonNull(e).live();
      return live;
    }

    void commit() {
      synchronized (Pins.this) {
        committed.putAll(staged);
        stagedDeferred.forEach((key, live) -> {
          if (live == null) {
            deferred.remove(key);
          } else {
            deferred.put(key, live);
          }
        });
        publishDeferred();
      }
      staged.clear();
      stagedDeferred.clear();
    }
  }
}
