package dev.quell.spring.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The live objects behind the policies — retry budgets, circuit breakers, limiters — by owner (a policy
 * name, {@code policy:host}, {@code shared:budget}) and kind, each kept together with the settings it
 * was made from. A policy rebuilt with the same settings gets the same live object, so a refresh keeps
 * its traffic history; changed settings make a new one. Changes are staged in a {@link Session} and take
 * effect together on {@link Session#commit()}, so a rebuild that fails leaves the pins as they were.
 *
 * <p>Thread-safe: every method takes this object's lock (the paths are cold: startup, refresh, the first
 * call to a new host).
 */
final class Pins {
  private record Key(String owner, String kind) {}

  private record Entry(Object spec, Object live) {}

  private final Map<Key, Entry> committed = new HashMap<>();

  Session session() {
    return new Session();
  }

  /** Forgets everything {@code owner} held (a host evicted from a scope). */
  synchronized void forget(String owner) {
    committed.keySet().removeIf(k -> k.owner().equals(owner));
  }

  synchronized int size() {
    return committed.size();
  }

  /** One rebuild's view: reads what is committed, stages what changes. */
  final class Session {
    private final Map<Key, Entry> staged = new HashMap<>();

    /** The live object {@code owner} keeps for {@code kind}, made by {@code make} unless one with an equal {@code spec} exists. */
    <T> T get(String owner, String kind, Object spec, Supplier<T> make) {
      Key key = new Key(owner, kind);
      Entry e = staged.get(key);
      if (e == null) {
        synchronized (Pins.this) {
          e = committed.get(key);
        }
      }
      if (e == null || !Objects.equals(e.spec(), spec)) {
        e = new Entry(spec, make.get());
        staged.put(key, e);
      }
      @SuppressWarnings("unchecked")
      T live = (T) e.live();
      return live;
    }

    void commit() {
      synchronized (Pins.this) {
        committed.putAll(staged);
      }
      staged.clear();
    }
  }
}
