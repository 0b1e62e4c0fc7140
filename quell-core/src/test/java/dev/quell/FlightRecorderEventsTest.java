package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.quell.internal.CallObserver;
import dev.quell.internal.jfr.QuellJfr;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, item 1: Quell's Flight Recorder events, recorded by a real in-process recording and read
 * back from its file as JDK Mission Control would read them. They come from the stream the core tells
 * its observers, so a call's events say what the call did; without a recording that enables them, a
 * policy runs on itself, in the lane it always took.
 */
class FlightRecorderEventsTest {
  private static final String[] QUELL_EVENTS = {"dev.quell.Attempt", "dev.quell.Call", "dev.quell.BudgetRefusal",
      "dev.quell.LimiterRefusal", "dev.quell.BreakerTransition"};

  @TempDir
  Path dir;

  private final List<Recording> recordings = new ArrayList<>();

  @AfterEach
  void closeRecordings() {
    recordings.forEach(Recording::close);
  }

  /** A recording with Quell's events on, running. */
  private Recording quellRecording() {
    Recording r = new Recording();
    recordings.add(r);
    for (String name : QUELL_EVENTS) {
      r.enable(name);
    }
    r.start();
    return r;
  }

  private List<RecordedEvent> stopAndRead(Recording r, String name) throws IOException {
    r.stop();
    Path file = dir.resolve(name + ".jfr");
    r.dump(file);
    return RecordingFile.readAllEvents(file).stream()
        .filter(e -> e.getEventType().getName().startsWith("dev.quell."))
        .collect(Collectors.toList());
  }

  private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
    return events.stream().filter(e -> e.getEventType().getName().equals(name)).collect(Collectors.toList());
  }

  /** A clock that never moves and whose sleeps return at once: retries follow one another without waiting. */
  private static final class StillClock implements TimeSource {
    private final Random random = new Random(7);

    @Override
    public long nanoTime() {
      return 5_000_000_000L;
    }

    @Override
    public void sleep(long nanos) {}

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      return () -> true;
    }

    @Override
    public RandomGenerator random() {
      return random;
    }
  }

  @Test
  void aCallThatFailsOnceThenSucceedsRecordsTwoAttemptsAndOneCall() throws Exception {
    Resilience policy = Resilience.DEFAULT.withName("inventory").withBackoff(Backoff.NONE);
    Recording r = quellRecording();
    AtomicInteger tries = new AtomicInteger();
    String answer = policy.execute(() -> {
      if (tries.incrementAndGet() == 1) {
        throw new IOException("connection reset");
      }
      return "42 in stock";
    });
    List<RecordedEvent> events = stopAndRead(r, "fail-once");

    assertThat(answer).isEqualTo("42 in stock");
    List<RecordedEvent> attempts = named(events, "dev.quell.Attempt");
    assertThat(attempts).extracting(e -> e.getInt("attempt") + " " + e.getString("kind") + " "
        + e.getString("verdict") + " " + e.getString("outcome") + " " + e.getString("policy"))
        .containsExactly("1 first TRANSIENT java.io.IOException inventory", "2 retry OK returned inventory");
    assertThat(attempts).allMatch(e -> e.getLong("latency") >= 0 && e.getString("key").isEmpty()
        && e.getString("criticality").equals("CRITICAL"));
    List<RecordedEvent> calls = named(events, "dev.quell.Call");
    assertThat(calls).hasSize(1);
    RecordedEvent call = calls.get(0);
    assertThat(call.getInt("attempts")).isEqualTo(2);
    assertThat(call.getString("stopReason")).isEqualTo("SUCCEEDED");
    assertThat(call.getString("verdict")).isEqualTo("OK");
    assertThat(call.getLong("elapsed")).isGreaterThanOrEqualTo(attempts.get(0).getLong("latency"));
    assertThat(call.getEventType().getCategoryNames()).containsExactly("Quell", "Calls");
    assertThat(call.getEventType().getLabel()).isEqualTo("Quell Call");
  }

  @Test
  void aSuccessOnTheFastLanesIsRecordedAsACallOfOneAttempt() throws Exception {
    Resilience plain = Resilience.DEFAULT.withName("plain");
    Resilience breaker = Resilience.DEFAULT.withName("guarded").withBreaker(CircuitBreaker.Config.DEFAULT);
    Recording r = quellRecording();
    plain.execute(() -> "a");
    breaker.execute(() -> "b");
    plain.executeAsync(() -> CompletableFuture.completedFuture("c")).join();
    List<RecordedEvent> events = stopAndRead(r, "fast");

    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getString("policy") + " "
        + e.getInt("attempts") + " " + e.getString("stopReason"))
        .containsExactly("plain 1 SUCCEEDED", "guarded 1 SUCCEEDED", "plain 1 SUCCEEDED");
    assertThat(named(events, "dev.quell.Attempt")).extracting(e -> e.getString("kind"))
        .containsExactly("first", "first", "first");
  }

  @Test
  void aRetryTheBudgetRefusesIsRecordedAsABudgetRefusal() throws Exception {
    StillClock clock = new StillClock();
    RetryBudget dry = RetryBudget.of(0.1, 0, clock);
    assertThat(dry.trySpend(Criticality.CRITICAL)).isTrue(); // its one token: the next retry is refused
    Resilience policy = Resilience.DEFAULT.withName("payments").withTimeSource(clock).withBudget(dry);
    Recording r = quellRecording();
    Outcome<Object> outcome = policy.run(() -> {
      throw new IOException("503");
    });
    List<RecordedEvent> events = stopAndRead(r, "budget");

    assertThat(outcome.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    List<RecordedEvent> refusals = named(events, "dev.quell.BudgetRefusal");
    assertThat(refusals).hasSize(1);
    assertThat(refusals.get(0).getString("policy")).isEqualTo("payments");
    assertThat(refusals.get(0).getString("budget")).isEqualTo(dry.name());
    assertThat(refusals.get(0).getInt("attempts")).isEqualTo(1);
    assertThat(refusals.get(0).getDouble("utilization")).isEqualTo(dry.utilization());
    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getString("stopReason"))
        .containsExactly("BUDGET_EXHAUSTED");
    assertThat(named(events, "dev.quell.Call").get(0).getLong("clock")).isEqualTo(clock.nanoTime());
  }

  @Test
  void aBreakerThatOpensAndIsIsolatedRecordsItsTransitions() throws Exception {
    StillClock clock = new StillClock();
    CircuitBreaker breaker = CircuitBreaker.of("inventory-api", CircuitBreaker.Config.DEFAULT.withMinimumCalls(2),
        clock);
    Resilience policy = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(clock)
        .withBreaker(breaker);
    Recording r = quellRecording();
    for (int i = 0; i < 3; i++) {
      policy.run(() -> {
        throw new IOException("down");
      });
    }
    breaker.reset();
    breaker.isolate();
    List<RecordedEvent> events = stopAndRead(r, "breaker");

    assertThat(named(events, "dev.quell.BreakerTransition")).extracting(e -> e.getString("breaker") + " "
        + e.getString("state") + " " + e.getString("cause"))
        .containsExactly("inventory-api OPEN attempts", "inventory-api CLOSED reset", "inventory-api ISOLATED isolate");
    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getString("stopReason"))
        .containsExactly("ATTEMPTS_EXHAUSTED", "ATTEMPTS_EXHAUSTED", "DEPENDENCY_UNAVAILABLE");
  }

  @Test
  void aCallALimiterRefusesIsRecordedAsALimiterRefusal() throws Exception {
    StillClock clock = new StillClock();
    Limiter rate = Limiter.rate(1, 1, clock);
    Resilience policy = Resilience.DEFAULT.withName("search").withTimeSource(clock).withLimiter(rate);
    Recording r = quellRecording();
    Outcome<String> first = policy.run(() -> "ok");
    Outcome<String> second = policy.run(() -> "ok");
    List<RecordedEvent> events = stopAndRead(r, "limiter");

    assertThat(first.stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(second.stopReason()).isEqualTo(StopReason.LIMITED);
    List<RecordedEvent> refusals = named(events, "dev.quell.LimiterRefusal");
    assertThat(refusals).extracting(e -> e.getString("policy") + " " + e.getString("limiters"))
        .containsExactly("search rate:" + rate.name());
  }

  @Test
  void aHedgeIsRecordedAsAnAttemptOfKindHedge() throws Exception {
    AtomicReference<Runnable> due = new AtomicReference<>();
    TimeSource manual = new TimeSource() {
      @Override
      public long nanoTime() {
        return 0;
      }

      @Override
      public void sleep(long nanos) {}

      @Override
      public Scheduled schedule(Runnable task, long delayNanos) {
        due.set(task);
        return () -> true;
      }

      @Override
      public RandomGenerator random() {
        return new Random(1);
      }
    };
    Resilience policy = Resilience.DEFAULT.withName("search").withAttempts(2).withTimeSource(manual)
        .withHedge(Hedge.after(Duration.ofMillis(10))).withBudget(RetryBudget.of(0.1, 0, manual));
    CompletableFuture<String> slow = new CompletableFuture<>();
    AtomicInteger started = new AtomicInteger();
    Recording r = quellRecording();
    CompletableFuture<String> answer = policy.executeAsync(() -> started.incrementAndGet() == 1 ? slow
        : CompletableFuture.completedFuture("from the hedge"));
    Runnable hedgeDue = due.get();
    assertThat(hedgeDue).as("the hedge timer").isNotNull();
    hedgeDue.run();
    assertThat(answer.join()).isEqualTo("from the hedge");
    List<RecordedEvent> events = stopAndRead(r, "hedge");

    assertThat(named(events, "dev.quell.Attempt")).extracting(e -> e.getInt("attempt") + " " + e.getString("kind")
        + " " + e.getString("verdict")).contains("2 hedge OK");
    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getInt("attempts") + " "
        + e.getString("stopReason")).containsExactly("2 SUCCEEDED");
  }

  @Test
  void aPolicyScopeKeyIsRecordedAsTheDependencyKey() throws Exception {
    PolicyScope<String> byHost = PolicyScope.of(Resilience.DEFAULT.withName("catalog"));
    Recording r = quellRecording();
    byHost.policy("eu.example.com").execute(() -> "ok");
    List<RecordedEvent> events = stopAndRead(r, "scope");

    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getString("policy") + " " + e.getString("key"))
        .containsExactly("catalog:eu.example.com eu.example.com");
  }

  @Test
  void withoutARecordingThatEnablesThemNothingIsRecordedAndThePolicyRunsOnItself() throws Exception {
    Resilience policy = Resilience.DEFAULT.withName("inventory").withBackoff(Backoff.NONE);
    // a recording with the JDK's default settings: Quell's events are off unless a settings file turns them on
    Recording jdkOnly = new Recording(Configuration.getConfiguration("default"));
    recordings.add(jdkOnly);
    jdkOnly.start();
    assertThat(QuellJfr.calls()).isFalse();
    assertThat(policy.now()).as("the instance the call runs on, whose flags choose its lane").isSameAs(policy);
    AtomicInteger tries = new AtomicInteger();
    policy.execute(() -> {
      if (tries.incrementAndGet() == 1) {
        throw new IOException("reset");
      }
      return "ok";
    });
    assertThat(stopAndRead(jdkOnly, "jdk-only")).isEmpty();

    Recording quell = quellRecording();
    assertThat(QuellJfr.calls()).isTrue();
    Resilience twin = policy.now();
    assertThat(twin).isNotSameAs(policy);
    assertThat(twin.observers).hasSize(policy.observers.length + 1);
    assertThat(twin.budget()).isSameAs(policy.budget());
    assertThat(policy.now()).as("one twin per policy").isSameAs(twin);
    quell.stop();
    assertThat(QuellJfr.calls()).as("off again once the recording stops").isFalse();
    assertThat(policy.now()).isSameAs(policy);
  }

  /** The application of {@link #aRecordingStartedWithTheJvmIsSeenFromTheFirstCall}: three calls, then exit. */
  public static final class ThreeCalls {
    public static void main(String[] args) throws Exception {
      Resilience inventory = Resilience.DEFAULT.withName("inventory");
      for (int i = 0; i < 3; i++) {
        inventory.execute(() -> "42 in stock");
      }
    }
  }

  @Test
  void aRecordingStartedWithTheJvmIsSeenFromTheFirstCall() throws Exception {
    // the production setup: -XX:StartFlightRecording with quell.jfc, running before Quell's classes load
    Path file = dir.resolve("started-with-the-jvm.jfr");
    Path settings = Path.of("src", "main", "resources", "dev", "quell", "quell.jfc").toAbsolutePath();
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:StartFlightRecording:settings=" + settings + ",filename=" + file, "-Xlog:jfr*=off",
        "-cp", System.getProperty("java.class.path"), ThreeCalls.class.getName())
        .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile()).start();
    assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("the application exits").isTrue();
    assertThat(p.exitValue()).as(java.nio.file.Files.readString(dir.resolve("out.txt"))).isZero();
    List<RecordedEvent> events = RecordingFile.readAllEvents(file);

    assertThat(named(events, "dev.quell.Call")).extracting(e -> e.getString("policy") + " " + e.getInt("attempts")
        + " " + e.getString("stopReason")).containsExactly("inventory 1 SUCCEEDED", "inventory 1 SUCCEEDED",
        "inventory 1 SUCCEEDED");
    assertThat(named(events, "dev.quell.Attempt")).hasSize(3);
  }

  @Test
  void eventCodeNeverThrowsIntoTheCall() {
    java.util.concurrent.atomic.AtomicBoolean failing = new java.util.concurrent.atomic.AtomicBoolean();
    TimeSource broken = new TimeSource() {
      @Override
      public long nanoTime() {
        if (failing.get()) {
          throw new IllegalStateException("a clock that fails");
        }
        return 0;
      }

      @Override
      public void sleep(long nanos) {}

      @Override
      public Scheduled schedule(Runnable task, long delayNanos) {
        return () -> true;
      }
    };
    CallObserver observer = QuellJfr.observer(Resilience.DEFAULT.withName("odd").withTimeSource(broken));
    quellRecording();
    failing.set(true);
    assertThatCode(() -> {
      observer.attemptEnded("odd", RetryBudget.NONE, Criticality.CRITICAL, 1, false, null, null, 1);
      observer.callEnded("odd", RetryBudget.NONE, Criticality.CRITICAL, StopReason.BUDGET_EXHAUSTED, 1, null, 1);
      QuellJfr.breakerMoved("odd", CircuitBreaker.State.OPEN, "attempts");
    }).doesNotThrowAnyException();
  }
}
