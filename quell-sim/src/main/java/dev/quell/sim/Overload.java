package dev.quell.sim;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Dependency} does with attempts it has no room for: the choice that decides what a
 * retry storm does to it. Three models, each a kind of server you may be calling:
 *
 * <ul>
 *   <li>{@link #unboundedQueue()} (the default): every attempt waits its turn, first in first out,
 *       however long the line. A server whose accept queue or thread-pool queue has no useful bound.
 *       Past capacity the line grows, every attempt waits longer than its caller will, the callers
 *       time out and retry into the same line: <b>congestion collapse</b>. Work whose caller gave up
 *       is still done, so the collapse outlasts its cause.
 *   <li>{@link #boundedQueue(int)}: at most {@code waiting} attempts wait; an attempt that finds the
 *       line full is refused at once (a fast 503), without using capacity. The line stays short, so
 *       the attempts it admits are answered in time; the rest fail fast and may be retried.
 *   <li>{@link #concurrencyLimit(int)}: the server admits at most {@code limit} attempts at once,
 *       in service and waiting together, and refuses the rest at once: what a servlet container's
 *       thread and accept limits, a proxy's maximum of pending requests or a concurrency-limits
 *       filter count. With a limit at or below the capacity nothing ever waits.
 * </ul>
 *
 * <p>All counts are across the fleet: with {@link Load#peers(int) peers} this pod gets its
 * {@code (peers + 1)}-th share of them, as it does of the capacity. Immutable.
 */
public final class Overload {

  /** Which model. */
  public enum Kind {
    /** Every attempt waits its turn, however long the line. */
    UNBOUNDED_QUEUE,
    /** At most {@link #limit()} attempts wait; more are refused at once. */
    BOUNDED_QUEUE,
    /** At most {@link #limit()} attempts are admitted at once, served or waiting; more are refused at once. */
    CONCURRENCY_LIMIT
  }

  private static final Overload UNBOUNDED = new Overload(Kind.UNBOUNDED_QUEUE, -1);

  private final Kind kind;
  private final int limit;

  private Overload(Kind kind, int limit) {
    this.kind = kind;
    this.limit = limit;
  }

  /** Every attempt waits its turn, first in first out, however long the line (the default). */
  public static Overload unboundedQueue() {
    return UNBOUNDED;
  }

  /**
   * At most {@code waiting} attempts wait, across the fleet; an attempt that finds the line full is
   * refused at once.
   *
   * @param waiting at least 0 (0: an attempt that finds every slot busy is refused)
   */
  public static Overload boundedQueue(int waiting) {
    if (waiting < 0) {
      throw new IllegalArgumentException("overload boundedQueue must be at least 0 waiting attempts, was " + waiting);
    }
    return new Overload(Kind.BOUNDED_QUEUE, waiting);
  }

  /**
   * At most {@code limit} attempts admitted at once, across the fleet, in service and waiting
   * together; the rest are refused at once.
   *
   * @param limit at least 1
   */
  public static Overload concurrencyLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("overload concurrencyLimit must be at least 1 attempt, was " + limit);
    }
    return new Overload(Kind.CONCURRENCY_LIMIT, limit);
  }

  /** Which model. */
  public Kind kind() {
    return kind;
  }

  /** The queue's bound or the concurrency limit; -1 for the unbounded queue. */
  public int limit() {
    return limit;
  }

  /** How many attempts may wait beside {@code capacity} in service; -1 for no bound. */
  int waiting(int capacity) {
    switch (kind) {
      case BOUNDED_QUEUE:
        return limit;
      case CONCURRENCY_LIMIT:
        return capacity == Integer.MAX_VALUE ? 0 : Math.max(0, limit - capacity);
      default:
        return -1;
    }
  }

  /** How many attempts may be served at once, given the dependency's {@code capacity}. */
  int serving(int capacity) {
    return kind == Kind.CONCURRENCY_LIMIT ? Math.min(capacity, limit) : capacity;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Overload && ((Overload) o).kind == kind && ((Overload) o).limit == limit;
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, limit);
  }

  /** "unbounded queue", "bounded queue of 400", "concurrency limit of 400". */
  @Override
  public String toString() {
    switch (kind) {
      case BOUNDED_QUEUE:
        return "bounded queue of " + limit;
      case CONCURRENCY_LIMIT:
        return "concurrency limit of " + limit;
      default:
        return "unbounded queue";
    }
  }
}
