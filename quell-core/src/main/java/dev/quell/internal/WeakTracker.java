package dev.quell.internal;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Live objects one telemetry binding reports — circuit breakers, limiters, policy instances — held
 * only through weak references, as {@link BudgetTracker} holds budgets: watching one never keeps it,
 * or the policy that owns it, alive. Objects are grouped by (name, policy tag); when the GC collects
 * one, the next drain (a single field read when the GC reported nothing) forgets it, and tells the
 * binding when a group lost its last member so that its series can go.
 *
 * <p>A group's gauges read its {@link Group#newest() newest} live member: the one a reload put in
 * service. Its cumulative counters ({@link Group#total}) add up every member, a collected one at the
 * last value read from it, so a counter never goes backwards while its group lives.
 *
 * <p>Like {@link BudgetTracker}, it never holds what the binding reports into: each method that can
 * change the groups takes the binding's {@link Events}. {@link #isWatched} is lock-free and
 * allocation-free (it runs on every call); changes take this object's lock.
 *
 * @param <M> what is watched
 * @param <T> what the binding keeps with each group: its meters' ids, its attributes
 */
@Internal
public final class WeakTracker<M, T> {
  /** What a binding does when the groups change. Called under the tracker's lock, on the caller's thread. */
  public interface Events<M, T> {
    /**
     * A (name, policy tag) pair is watched for the first time: set up its series and return what to
     * keep with the group, whose {@link Group#newest()} is the object being watched. If this throws,
     * the object is not watched.
     */
    T groupAdded(Group<M, T> group);

    /** Every member of {@code group} was collected: take its series down. */
    void groupGone(Group<M, T> group);
  }

  private static final Ref<?>[] EMPTY_TABLE = new Ref<?>[2];

  private final int counters;
  private final ReferenceQueue<M> queue = new ReferenceQueue<>();
  /** Identity hash table of the watched objects; copy-on-write, so readers take no lock. */
  private volatile Ref<?>[] table = EMPTY_TABLE;
  /** Guarded by this. */
  private final Map<List<String>, Group<M, T>> groups = new LinkedHashMap<>();
  /** The groups, for gauge callbacks; copy-on-write. */
  private volatile List<Group<M, T>> snapshot = List.of();
  private int watchedCount;

  /** A tracker whose groups keep {@code counters} cumulative readings of their members (0 for none). */
  public WeakTracker(int counters) {
    if (counters < 0) {
      throw new IllegalArgumentException("counters must not be negative: " + counters);
    }
    this.counters = counters;
  }

  /** True when {@code object} is watched already. Lock-free and allocation-free. */
  public boolean isWatched(Object object) {
    Ref<?>[] t = table;
    int mask = t.length - 1;
    int i = spread(System.identityHashCode(object)) & mask;
    while (true) {
      Ref<?> ref = t[i];
      if (ref == null) {
        return false;
      }
      if (ref.get() == object) {
        return true;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * Starts watching {@code object} in the group ({@code name}, {@code policyTag}) unless it is watched
   * already; drains what the GC reported first. Returns true when it was not watched before.
   */
  public synchronized boolean watch(M object, String name, String policyTag, Events<M, T> events) {
    drainQueued(events);
    if (isWatched(object)) {
      return false;
    }
    List<String> key = List.of(name, policyTag);
    Group<M, T> group = groups.get(key);
    Ref<M> ref;
    if (group == null) {
      // the new group's first member is in it when its series are set up, so they can read it
      group = new Group<>(name, policyTag, counters);
      ref = new Ref<>(object, queue, group, counters);
      group.add(ref);
      try {
        group.data = events.groupAdded(group);
      } catch (RuntimeException | Error e) {
        ref.clear(); // never queued: the failed group is forgotten whole
        throw e;
      }
      groups.put(key, group);
      snapshot = List.copyOf(groups.values());
    } else {
      ref = new Ref<>(object, queue, group, counters);
      group.add(ref);
    }
    watchedCount++;
    rebuild();
    return true;
  }

  /** Forgets collected objects if the GC has reported any; returns how many. A single field read when it has not. */
  public int drainIfNeeded(Events<M, T> events) {
    Reference<? extends M> ref = queue.poll();
    if (ref == null) {
      return 0;
    }
    synchronized (this) {
      drop((Ref<?>) ref, events);
      return 1 + drainQueued(events);
    }
  }

  /** Forgets every object the GC has collected and reported so far; returns how many. */
  public synchronized int drain(Events<M, T> events) {
    return drainQueued(events);
  }

  /** Objects watched, collected ones not yet drained included. */
  public synchronized int watched() {
    return watchedCount;
  }

  /** The groups reported now, in the order they were first watched. Lock-free: for gauge callbacks. */
  public List<Group<M, T>> groups() {
    return snapshot;
  }

  /** For tests: clears and queues the references to {@code object}, as the GC does once it is unreachable. */
  public synchronized void simulateCollected(Object object) {
    for (Ref<?> ref : table) {
      if (ref != null && ref.get() == object) {
        ref.enqueue();
      }
    }
  }

  private int drainQueued(Events<M, T> events) {
    int dropped = 0;
    Reference<? extends M> ref;
    while ((ref = queue.poll()) != null) {
      drop((Ref<?>) ref, events);
      dropped++;
    }
    return dropped;
  }

  @SuppressWarnings("unchecked")
  private void drop(Ref<?> ref, Events<M, T> events) {
    Group<M, T> group = (Group<M, T>) ref.group;
    if (!group.remove(ref)) {
      return;
    }
    watchedCount--;
    if (group.isEmpty()) {
      groups.remove(List.of(group.name, group.policyTag));
      snapshot = List.copyOf(groups.values());
      events.groupGone(group);
    }
    rebuild();
  }

  /** Rebuilds the identity table from the groups' live references. */
  private void rebuild() {
    List<Ref<?>> live = new ArrayList<>();
    for (Group<M, T> group : groups.values()) {
      for (Ref<?> ref : group.members()) {
        if (ref.get() != null) {
          live.add(ref);
        }
      }
    }
    int size = 2;
    while (size < live.size() * 2 + 2) {
      size <<= 1;
    }
    Ref<?>[] t = new Ref<?>[size];
    for (Ref<?> ref : live) {
      Object object = ref.get();
      if (object == null) {
        continue;
      }
      int i = spread(System.identityHashCode(object)) & (size - 1);
      while (t[i] != null) {
        i = (i + 1) & (size - 1);
      }
      t[i] = ref;
    }
    table = t;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B9;
  }

  /** A weak reference to a watched object that knows its group and the last counter values read from it. */
  private static final class Ref<M> extends WeakReference<M> {
    final Group<?, ?> group;
    /** Guarded by the group. */
    final long[] lastRead;

    Ref(M object, ReferenceQueue<M> queue, Group<?, ?> group, int counters) {
      super(object, queue);
      this.group = group;
      this.lastRead = new long[counters];
    }
  }

  /**
   * The objects watched under one (name, policy tag): usually one; more when objects share a name (a
   * policy rebuilt under the same name, say). Holds its members weakly and nothing of the tracker, so
   * a gauge may hold the group strongly.
   *
   * @param <M> what is watched
   * @param <T> what the binding keeps with the group
   */
  public static final class Group<M, T> {
    private final String name;
    private final String policyTag;
    /** Guarded by this: what collected members had counted when last read. */
    private final long[] carried;
    /** Set once under the tracker's lock, before the group is published in a snapshot. */
    private @Nullable T data;
    /** Copy-on-write under the tracker's lock, oldest first; read lock-free by gauge callbacks. */
    private volatile Ref<?>[] members = new Ref<?>[0];

    Group(String name, String policyTag, int counters) {
      this.name = name;
      this.policyTag = policyTag;
      this.carried = new long[counters];
    }

    /** The members' name: the breaker's, the limiter's, the policy's. */
    public String name() {
      return name;
    }

    /** The {@code quell.policy} tag: the owning policy's name, or empty for an object shared by policies. */
    public String policyTag() {
      return policyTag;
    }

    /** What {@link Events#groupAdded} returned for this group. */
    public T data() {
      T d = data;
      if (d == null) {
        throw new IllegalStateException("group " + name + "/" + policyTag + " has no data yet");
      }
      return d;
    }

    /** The most recently watched member still alive, or null when all were collected. */
    @SuppressWarnings("unchecked")
    public @Nullable M newest() {
      Ref<?>[] m = members;
      for (int i = m.length - 1; i >= 0; i--) {
        Object object = m[i].get();
        if (object != null) {
          return (M) object;
        }
      }
      return null;
    }

    /**
     * The live member with the highest {@code measure} (the oldest of equals; a NaN never wins), or
     * null when all were collected. Lock-free: for gauge callbacks.
     */
    @SuppressWarnings("unchecked")
    public @Nullable M highest(ToDoubleFunction<? super M> measure) {
      M chosen = null;
      double highest = Double.NEGATIVE_INFINITY;
      for (Ref<?> ref : members) {
        Object object = ref.get();
        if (object != null) {
          double m = measure.applyAsDouble((M) object);
          if (chosen == null ? !Double.isNaN(m) : m > highest) {
            highest = m;
            chosen = (M) object;
          }
        }
      }
      return chosen;
    }

    /**
     * Cumulative counter {@code slot}: the sum of {@code read} over the live members, plus what each
     * collected member had counted when it was last read. Never decreases while {@code read} never
     * decreases for any member. For counter callbacks; takes this group's lock.
     */
    @SuppressWarnings("unchecked")
    public synchronized long total(int slot, ToLongFunction<? super M> read) {
      long sum = carried[slot];
      for (Ref<?> ref : members) {
        Object object = ref.get();
        if (object != null) {
          ref.lastRead[slot] = read.applyAsLong((M) object);
        }
        sum += ref.lastRead[slot];
      }
      return sum;
    }

    /** Members watched now, collected ones not yet drained included. */
    public int size() {
      return members.length;
    }

    Ref<?>[] members() {
      return members;
    }

    void add(Ref<?> ref) {
      Ref<?>[] old = members;
      Ref<?>[] next = Arrays.copyOf(old, old.length + 1);
      next[old.length] = ref;
      members = next;
    }

    /** Removes {@code ref}, carrying its last counter readings into the group's. */
    synchronized boolean remove(Ref<?> ref) {
      Ref<?>[] old = members;
      for (int i = 0; i < old.length; i++) {
        if (old[i] == ref) {
          for (int s = 0; s < carried.length; s++) {
            carried[s] += ref.lastRead[s];
          }
          Ref<?>[] next = new Ref<?>[old.length - 1];
          System.arraycopy(old, 0, next, 0, i);
          System.arraycopy(old, i + 1, next, i, old.length - i - 1);
          members = next;
          return true;
        }
      }
      return false;
    }

    boolean isEmpty() {
      return members.length == 0;
    }

    @Override
    public String toString() {
      return "WeakTracker.Group[" + name + ", " + policyTag + ", " + members.length + " members]";
    }
  }
}
