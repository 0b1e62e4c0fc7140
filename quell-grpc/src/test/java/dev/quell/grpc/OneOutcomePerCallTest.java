package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.hang;
import static dev.quell.grpc.FaultServer.Action.reply;
import static dev.quell.grpc.FaultServer.Action.stream;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many threads make calls with scripted faults — transient failures, pushback, permanent codes,
 * attempts that hang past their timeout, streams that fail after a response — while some callers
 * cancel at once, racing the first attempt. Every call must end exactly once, with the listener
 * contract kept (no callback after the close, none overlapping), with the outcome its script implies
 * (or CANCELLED, where the caller cancelled), and every attempt the client gave up on must be
 * cancelled on the server.
 */
class OneOutcomePerCallTest {
  private static final int THREADS = 8;
  private static final int CALLS_PER_THREAD = 40;

  /** What a call's name asks the server to do, and what the caller should hear in the end. */
  private enum Mode {
    OK(Status.Code.OK),
    FAIL_ONCE(Status.Code.OK),
    DOWN(Status.Code.UNAVAILABLE),
    STOP_PUSHBACK(Status.Code.RESOURCE_EXHAUSTED),
    SHORT_PUSHBACK(Status.Code.OK),
    PERMANENT(Status.Code.INVALID_ARGUMENT),
    HANG_FIRST(Status.Code.OK),
    STREAM(Status.Code.OK),
    STREAM_BREAKS(Status.Code.UNAVAILABLE);

    final Status.Code expected;

    Mode(Status.Code expected) {
      this.expected = expected;
    }

    FaultServer.Action answer(int attempt) {
      switch (this) {
        case OK:
          return reply("ok");
        case FAIL_ONCE:
          return attempt == 1 ? fail(Status.Code.UNAVAILABLE) : reply("ok");
        case DOWN:
          return fail(Status.Code.UNAVAILABLE);
        case STOP_PUSHBACK:
          return fail(Status.Code.RESOURCE_EXHAUSTED, "-1");
        case SHORT_PUSHBACK:
          return attempt == 1 ? fail(Status.Code.RESOURCE_EXHAUSTED, "1") : reply("ok");
        case PERMANENT:
          return fail(Status.Code.INVALID_ARGUMENT);
        case HANG_FIRST:
          return attempt == 1 ? hang() : reply("ok");
        case STREAM:
          return attempt == 1 ? fail(Status.Code.UNAVAILABLE) : stream(2, Status.Code.OK);
        default:
          return stream(1, Status.Code.UNAVAILABLE);
      }
    }

    MethodDescriptor<String, String> method() {
      return this == STREAM || this == STREAM_BREAKS ? FaultServer.STREAM : FaultServer.UNARY;
    }
  }

  private static final class Made {
    final String name;
    final Mode mode;
    final boolean cancelled;
    final RecordingListener listener;

    Made(String name, Mode mode, boolean cancelled, RecordingListener listener) {
      this.name = name;
      this.mode = mode;
      this.cancelled = cancelled;
      this.listener = listener;
    }
  }

  @Test
  void everyCallEndsExactlyOnce() throws Exception {
    Resilience policy = Resilience.DEFAULT.withName("storm")
        .withAttempts(3)
        .withAttemptTimeout(Duration.ofSeconds(5)) // generous: only HANG_FIRST should ever reach it
        .withBackoff(Backoff.exponential(Duration.ofMillis(1)))
        .withBudget(RetryBudget.NONE); // every script's outcome is then fixed: no refusals depend on timing
    try (FaultServer server = FaultServer.start((req, n) -> Mode.valueOf(req.split(":")[0]).answer(n))) {
      ManagedChannel channel = server.channel(ResilienceInterceptor.of(policy));
      // connect first: the storm measures calls, not how long a loaded machine takes to open a connection
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "OK:warm-up")).isEqualTo("ok");
      ExecutorService callers = Executors.newFixedThreadPool(THREADS);
      try {
        List<Future<List<Made>>> work = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          int thread = t;
          work.add(callers.submit(() -> {
            Random random = new Random(1000 + thread);
            List<Made> made = new ArrayList<>();
            for (int i = 0; i < CALLS_PER_THREAD; i++) {
              Mode mode = Mode.values()[random.nextInt(Mode.values().length)];
              boolean cancel = random.nextInt(5) == 0;
              String name = mode + ":" + thread + ":" + i;
              RecordingListener listener = new RecordingListener();
              ClientCall<String, String> call = channel.newCall(mode.method(), CallOptions.DEFAULT);
              call.start(listener, new Metadata());
              call.request(3);
              call.sendMessage(name);
              call.halfClose();
              if (cancel) {
                call.cancel("caller gave up", null);
              }
              made.add(new Made(name, mode, cancel, listener));
            }
            return made;
          }));
        }
        List<Made> all = new ArrayList<>();
        for (Future<List<Made>> f : work) {
          all.addAll(f.get(60, TimeUnit.SECONDS));
        }

        for (Made m : all) {
          Status status = m.listener.awaitClose(); // exactly one close, contract kept
          if (m.cancelled) {
            assertThat(status.getCode()).as(m.name).isIn(Status.Code.CANCELLED, m.mode.expected);
          } else {
            assertThat(status.getCode()).as(m.name + " " + status).isEqualTo(m.mode.expected);
          }
          if (status.getCode() == Status.Code.OK) {
            assertThat(m.listener.messages()).as(m.name).hasSize(m.mode == Mode.STREAM ? 2 : 1);
          }
          for (FaultServer.Seen attempt : server.seen(m.name)) {
            boolean answered = !(m.mode == Mode.HANG_FIRST && attempt.attempt == 1);
            if (!answered) {
              assertThat(attempt.wasCancelled()).as("abandoned attempt of " + m.name + " cancelled on the server").isTrue();
            }
          }
          int expectedAttempts = Set.of(Mode.OK, Mode.STOP_PUSHBACK, Mode.PERMANENT, Mode.STREAM_BREAKS).contains(m.mode) ? 1
              : m.mode == Mode.DOWN ? 3 : 2;
          if (!m.cancelled) {
            assertThat(server.seen(m.name)).as(m.name).hasSize(expectedAttempts);
          } else {
            assertThat(server.seen(m.name).size()).as(m.name).isLessThanOrEqualTo(expectedAttempts);
          }
        }
        for (Made m : all) {
          assertThat(m.listener.closes()).as("still exactly one close: " + m.name).isEqualTo(1);
          assertThat(m.listener.violations()).as(m.name).isEmpty();
        }
      } finally {
        callers.shutdownNow();
        channel.shutdownNow();
        channel.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }
}
