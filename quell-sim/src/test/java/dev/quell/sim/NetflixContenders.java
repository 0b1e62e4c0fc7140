package dev.quell.sim;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import dev.quell.sim.KneeBenchmark.Contender;
import java.util.List;
import java.util.function.Supplier;

/**
 * Netflix's concurrency-limits (0.5.4) as benchmark contenders, each with its library defaults, fed
 * as its {@code AbstractLimiter} feeds it: one sample per ended attempt with the attempts in flight
 * when it was admitted, a timeout as a drop.
 */
final class NetflixContenders {
  private NetflixContenders() {}

  static Contender aimd() {
    return of("netflix aimd", () -> AIMDLimit.newBuilder().build());
  }

  static Contender gradient2() {
    return of("netflix gradient2", () -> Gradient2Limit.newBuilder().build());
  }

  /** Vegas draws its probe jitter from ThreadLocalRandom: its runs vary a little from one to the next. */
  static Contender vegas() {
    return of("netflix vegas", VegasLimit::newDefault);
  }

  static List<Contender> all() {
    return List.of(aimd(), gradient2(), vegas());
  }

  private static Contender of(String name, Supplier<Limit> limit) {
    return Contender.rule(name, clock -> {
      Limit l = limit.get();
      return new KneeBenchmark.Rule() {
        @Override
        public int limit() {
          return l.getLimit();
        }

        @Override
        public void onSample(long now, long rttNanos, int inFlight, boolean dropped) {
          l.onSample(now - rttNanos, rttNanos, inFlight, dropped);
        }
      };
    });
  }
}
