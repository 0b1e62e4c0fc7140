package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The cache in front of the per-thread state ({@link Ambient#get}): a thread always gets its own
 * state, the same object the {@code ThreadLocal} holds, whether its place in the cache is free,
 * its own, or another live thread's; and a dead thread's place is freed by the watchdog's pass.
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

  @Test
  void aThreadGetsItsOwnStateBeforeAndAfterItIsCached() throws Exception {
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        Ambient before = Ambient.get();
        assertThat(before).isSameAs(Ambient.uncached());
        armOnce();
        Ambient after = Ambient.get();
        assertThat(after).isSameAs(before);
        if (Ambient.cachedAt(Thread.currentThread()) == before) {
          assertThat(Ambient.get()).as("found through the cache").isSameAs(before);
        }
      } catch (Throwable e) {
        failed.set(e);
      }
    });
    onThread(t);
    assertThat(failed.get()).isNull();
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
}
