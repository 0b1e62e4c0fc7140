package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.TimeSource;
import dev.quell.sim.internal.SimClock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The simulation clock's lanes (timers of a repeated delay, streams of events posted in due order)
 * are a shortcut beside its heap: whatever a program schedules, posts, streams and cancels — from
 * outside the loop and from inside events, with delays that repeat, run out of lanes, go backwards on
 * a stream, are negative or are huge — events must run in exactly the order, and at exactly the
 * times, that a plain list ordered by (due time, order of scheduling) gives.
 */
class SimClockProperties {

  /** What both clocks offer a program. */
  interface Clock {
    long now();

    TimeSource.Scheduled schedule(Runnable task, long delay);

    void post(Runnable task, long delay);

    void postOnStream(Runnable task, long delay);

    void run(long limit);
  }

  /** The clock under test. */
  static final class Real implements Clock {
    final SimClock clock = new SimClock(new SplittableRandom(1));
    final int stream = clock.stream();

    @Override
    public long now() {
      return clock.nanoTime();
    }

    @Override
    public TimeSource.Scheduled schedule(Runnable task, long delay) {
      return clock.schedule(task, delay);
    }

    @Override
    public void post(Runnable task, long delay) {
      clock.post(task, delay);
    }

    @Override
    public void postOnStream(Runnable task, long delay) {
      clock.post(stream, task, delay);
    }

    @Override
    public void run(long limit) {
      clock.run(limit, () -> false);
    }
  }

  /** The model: a list, searched for the earliest (due, order) every time. */
  static final class Model implements Clock {
    final List<long[]> pending = new ArrayList<>(); // {due, order, index into tasks}
    final List<Runnable> tasks = new ArrayList<>();
    long now;
    long order;

    @Override
    public long now() {
      return now;
    }

    @Override
    public TimeSource.Scheduled schedule(Runnable task, long delay) {
      long[] e = add(task, delay);
      return () -> pending.remove(e);
    }

    @Override
    public void post(Runnable task, long delay) {
      add(task, delay);
    }

    @Override
    public void postOnStream(Runnable task, long delay) {
      add(task, delay);
    }

    private long[] add(Runnable task, long delay) {
      long d = Math.max(0, delay);
      long at = now + d < now ? Long.MAX_VALUE : now + d;
      tasks.add(task);
      long[] e = {at, order++, tasks.size() - 1};
      pending.add(e);
      return e;
    }

    @Override
    public void run(long limit) {
      while (!pending.isEmpty()) {
        long[] first = pending.get(0);
        for (long[] e : pending) {
          if (e[0] < first[0] || e[0] == first[0] && e[1] < first[1]) {
            first = e;
          }
        }
        if (first[0] > limit) {
          return;
        }
        pending.remove(first);
        now = first[0];
        tasks.get((int) first[2]).run();
      }
    }
  }

  /** Runs one random program on {@code clock}; returns what ran, when, and what each cancel answered. */
  static List<String> program(Clock clock, long seed, int steps) {
    SplittableRandom random = new SplittableRandom(seed);
    List<String> log = new ArrayList<>();
    List<TimeSource.Scheduled> handles = new ArrayList<>();
    long[] streamDue = {0};
    int[] ids = {0};
    // delays that repeat (lanes open for them), more of them than there are lanes, and a few odd ones
    long[] fixed = {0, 7, 30, 30, 45, 60, 90, 120, 150, 180};
    Runnable[] act = new Runnable[1];
    act[0] = () -> {
      int id = ids[0]++;
      long delay = switch (random.nextInt(8)) {
        case 0 -> random.nextLong(0, 200);
        case 1 -> -random.nextLong(1, 1_000); // negative: due now
        case 2 -> random.nextInt(40) == 0 ? Long.MAX_VALUE : 500;
        default -> fixed[random.nextInt(fixed.length)];
      };
      Runnable event = () -> {
        log.add(id + "@" + clock.now());
        if (random.nextInt(3) == 0) {
          act[0].run(); // events schedule more, at their own instant
        }
      };
      switch (random.nextInt(6)) {
        case 0, 1 -> handles.add(clock.schedule(event, delay));
        case 2 -> clock.post(event, delay);
        case 3 -> {
          // a stream: mostly in due order, now and then out of it (that event must take the heap)
          long at = random.nextInt(5) == 0 ? clock.now() + random.nextLong(0, 20)
              : Math.max(streamDue[0], clock.now()) + random.nextLong(0, 50);
          streamDue[0] = Math.max(streamDue[0], at);
          clock.postOnStream(event, at - clock.now());
        }
        default -> {
          if (!handles.isEmpty()) {
            TimeSource.Scheduled h = handles.get(random.nextInt(handles.size()));
            log.add("cancel " + h.cancel());
          }
        }
      }
    };
    for (int i = 0; i < steps; i++) {
      if (random.nextInt(4) == 0) {
        clock.run(clock.now() + random.nextLong(0, 100));
      } else {
        act[0].run();
      }
    }
    clock.run(Long.MAX_VALUE);
    return log;
  }

  @Property(tries = 300)
  void theLanesNeverChangeTheOrderOfEvents(@ForAll long seed, @ForAll @IntRange(min = 1, max = 400) int steps) {
    List<String> expected = program(new Model(), seed, steps);
    assertThat(program(new Real(), seed, steps)).isEqualTo(expected);
  }
}
