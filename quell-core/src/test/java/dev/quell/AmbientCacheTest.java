package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * The cache in front of the per-thread state ({@link Ambient#get}): a watched thread is cached in
 * its own place, or takes it once it is freed; a thread always gets its own state, the same object
 * the {@code ThreadLocal} holds, whether its place in the cache is free, its own, or another live
 * thread's; and a dead thread's place is freed by the watchdog's pass.
 */
class AmbientCacheTest {

  /** Starts {@code t} and waits for it to end. */
  private static void onThread(Thread t) throws InterruptedException {
    t.start();
    t.join(TimeUnit.MINUTES.toMillis(1));
    assertThat(t.isAlive()).as("the thread ended").isFalse();
  }

  /** Arms and disarms this thread's fast slot, as any fast lane does on its first call. */
  private static void armOnce() {
    Ambient a = Ambient.get();
    a.armFast(Long.MAX_VALUE, false).disarm();
  }

  /** A thread (not started) whose place in the cache is free, and not {@code otherThan}'s place. */
  private static Thread withFreePlace(Runnable body, int otherThan) {
    for (int tries = 0; tries < 4096; tries++) {
      Thread t = new Thread(body);
      if (Ambient.cachedAt(t) == null && (t.getId() & 1023) != otherThan) {
        return t;
      } // else a place some live thread of this JVM holds: take the next id
    }
    throw new AssertionError("no free place in the cache after 4,096 thread ids");
  }

  @Test
  void aThreadTakesItsOwnPlaceOnceItIsWatched() throws Exception {
    // two threads alive at once, in two free places: each is cached in its own
    CountDownLatch bothArmed = new CountDownLatch(2);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int n = 0; n < 2; n++) {
      Runnable body = () -> {
        try {
          Thread me = Thread.currentThread();
          Ambient mine = Ambient.get();
          assertThat(mine).isSameAs(Ambient.uncached());
          assertThat(Ambient.cachedAt(me)).as("no slot yet: not cached").isNull();
          mine.armFast(Long.MAX_VALUE, false).disarm(); // its first fast attempt: it gets a watched slot
          assertThat(Ambient.cachedAt(me)).as("cached as its slot is made").isSameAs(mine);
          bothArmed.countDown();
          bothArmed.await();
          assertThat(Ambient.cachedAt(me)).as("still its own with the other cached").isSameAs(mine);
          assertThat(Ambient.get()).isSameAs(mine);
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
          bothArmed.countDown();
        }
      };
      threads.add(withFreePlace(body, n == 0 ? -1 : (int) (threads.get(0).getId() & 1023)));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(TimeUnit.MINUTES.toMillis(1));
    }
    assertThat(failed.get()).isNull();
  }

  @Test
  void aWatchedThreadTakesItsPlaceWhenItIsFreedLater() throws Exception {
    CountDownLatch armed = new CountDownLatch(1);
    CountDownLatch freed = new CountDownLatch(1);
    AtomicReference<Ambient> mine = new AtomicReference<>();
    AtomicReference<Ambient> cachedWhileTaken = new AtomicReference<>();
    AtomicReference<Ambient> cachedAfterGet = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread t = withFreePlace(() -> {
      try {
        mine.set(Ambient.get());
        mine.get().armFast(Long.MAX_VALUE, false).disarm(); // the place is taken: not cached
        cachedWhileTaken.set(Ambient.cachedAt(Thread.currentThread()));
        armed.countDown();
        freed.await();
        assertThat(Ambient.get()).isSameAs(mine.get()); // a miss: it takes the place now free
        cachedAfterGet.set(Ambient.cachedAt(Thread.currentThread()));
      } catch (Throwable e) {
        failed.set(e);
      } finally {
        armed.countDown();
      }
    }, -1);
    Thread holder = new Thread(() -> { }); // never started: to the cache, a thread that will die
    while ((holder.getId() & 1023) != (t.getId() & 1023)) {
      holder = new Thread(() -> { });
    }
    Ambient held = new Ambient(holder);
    Ambient.offer(held, holder);
    t.start();
    armed.await(1, TimeUnit.MINUTES);
    Ambient.forget(holder);
    freed.countDown();
    t.join(TimeUnit.MINUTES.toMillis(1));
    assertThat(failed.get()).isNull();
    assertThat(cachedWhileTaken.get()).isSameAs(held);
    assertThat(cachedAfterGet.get()).isSameAs(mine.get());
  }

  @Test
  void twoLiveThreadsSharingAPlaceEachGetTheirOwnState() throws Exception {
    // thread ids are handed out in order, so a thread made 1,024 ids later shares the first's place
    CountDownLatch firstCached = new CountDownLatch(1);
    CountDownLatch secondPushed = new CountDownLatch(1);
    CountDownLatch firstLooked = new CountDownLatch(1);
    CountDownLatch secondDone = new CountDownLatch(1);
    AtomicReference<Ambient> firstState = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread first = new Thread(() -> {
      try {
        armOnce();
        firstState.set(Ambient.get());
        firstCached.countDown();
        secondPushed.await(); // alive, holding its place, while the second runs
        assertThat(Ambient.get().depth()).as("the second thread's frame is its own").isZero();
        firstLooked.countDown();
        secondDone.await();
        assertThat(Ambient.get()).isSameAs(firstState.get()).isSameAs(Ambient.uncached());
      } catch (Throwable e) {
        failed.compareAndSet(null, e);
      }
    });
    Thread second = null;
    List<Thread> skipped = new ArrayList<>();
    while (second == null) {
      Thread candidate = new Thread(() -> {
        try {
          firstCached.await();
          armOnce();
          Ambient mine = Ambient.get();
          assertThat(mine).isNotSameAs(firstState.get()).isSameAs(Ambient.uncached());
          Ambient.Frame frame = mine.push(); // state of its own: the first thread's stack is untouched
          assertThat(Ambient.get().depth()).isEqualTo(1);
          secondPushed.countDown();
          firstLooked.await();
          mine.pop(frame);
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
        } finally {
          secondPushed.countDown();
          firstLooked.countDown();
          secondDone.countDown();
        }
      });
      if ((candidate.getId() & 1023) == (first.getId() & 1023)) {
        second = candidate;
      } else {
        skipped.add(candidate); // never started
      }
    }
    assertThat(skipped).hasSizeLessThan(1024);
    first.start();
    onThread(second);
    first.join(TimeUnit.MINUTES.toMillis(1));
    assertThat(failed.get()).isNull();
    assertThat(firstState.get()).isNotNull();
  }

  @Test
  void theWatchdogsPassFreesADeadThreadsPlace() {
    // a thread never started is not alive: to the watchdog's pass it is a thread that has died
    Thread dead = new Thread(() -> { });
    while (Ambient.cachedAt(dead) != null) {
      dead = new Thread(() -> { }); // a place some live thread of this JVM holds: take the next id
    }
    Ambient state = new Ambient(dead);
    Ambient.offer(state, dead);
    assertThat(Ambient.cachedAt(dead)).isSameAs(state);

    Watchdog watchdog = new Watchdog(); // the test's own, driven by hand: only its pass can free it
    List<Watchdog.Slot> active = new ArrayList<>(List.of(new Watchdog.Slot(dead)));
    watchdog.scan(active, 1_000_000_000L);

    assertThat(active).as("the dead thread's slot is forgotten").isEmpty();
    assertThat(Ambient.cachedAt(dead)).isNull();
  }

  @Test
  void aTakenPlaceIsNotTakenOver() {
    Thread one = new Thread(() -> { });
    while (Ambient.cachedAt(one) != null) {
      one = new Thread(() -> { });
    }
    Ambient held = new Ambient(one);
    Ambient.offer(held, one);
    Thread other = new Thread(() -> { });
    while ((other.getId() & 1023) != (one.getId() & 1023)) {
      other = new Thread(() -> { });
    }
    Ambient.offer(new Ambient(other), other);
    assertThat(Ambient.cachedAt(other)).as("the place stays the first thread's").isSameAs(held);
    Ambient.forget(other); // not the holder: nothing changes
    assertThat(Ambient.cachedAt(one)).isSameAs(held);
    Ambient.forget(one);
    assertThat(Ambient.cachedAt(one)).isNull();
  }

  @Test
  void threadsThatComeAndGoEachSeeOnlyTheirOwnState() throws Exception {
    // pool churn: places are taken, freed by the real watchdog as threads die, and taken again
    comeAndGo(Thread::new);
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void virtualThreadsThatComeAndGoEachSeeOnlyTheirOwnState() throws Exception {
    // each virtual thread has an id (and a place) of its own, and runs on a carrier that has its own
    Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
    Method make = Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
    comeAndGo(body -> {
      try {
        return (Thread) make.invoke(builder, body);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    });
  }

  private static void comeAndGo(Function<Runnable, Thread> threadOf) throws Exception {
    int total = 600;
    AtomicInteger done = new AtomicInteger();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    for (int wave = 0; wave < total / 8; wave++) {
      List<Thread> threads = new ArrayList<>();
      for (int n = 0; n < 8; n++) {
        threads.add(threadOf.apply(() -> {
          try {
            for (int i = 0; i < 50; i++) {
              Ambient mine = Ambient.get();
              assertThat(mine).isSameAs(Ambient.uncached());
              mine.armFast(Long.MAX_VALUE, false).disarm();
              Ambient.Frame frame = mine.push();
              assertThat(Ambient.get()).isSameAs(mine);
              assertThat(Ambient.get().depth()).isEqualTo(1);
              mine.pop(frame);
            }
            done.incrementAndGet();
          } catch (Throwable e) {
            failed.compareAndSet(null, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(1));
      }
    }
    assertThat(failed.get()).isNull();
    assertThat(done.get()).isEqualTo(total);
  }
}
