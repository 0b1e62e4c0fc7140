package dev.quell.sim;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Envoy's adaptive-concurrency gradient controller, reimplemented from its documentation
 * (adaptive_concurrency_filter.rst and the v3 proto) for the benchmark, with Envoy's defaults:
 *
 * <ul>
 *   <li>every {@code concurrency_update_interval} (100 ms here; Envoy requires it), the window's
 *       latency percentile (p50) is the sample RTT; {@code gradient = (minRTT + B) / sampleRTT} with
 *       {@code B = minRTT × buffer} (25%), clamped to [0.5, 2]; the new limit is
 *       {@code gradient × limit + √(gradient × limit)}, at most {@code max_concurrency_limit} (1000);
 *   <li>the minRTT is measured first and then every {@code interval} (60 s, plus up to 15% jitter),
 *       and whenever the limit sat at the minimum for five windows in a row: the limit is pinned to
 *       {@code min_concurrency} (3) until {@code request_count} (50) samples have come in, their p50 is
 *       the minRTT, and the limit goes back to where it was.
 * </ul>
 *
 * <p>A timed-out attempt is a sample of the timeout's length (what the caller observed).
 */
final class EnvoyGradient implements KneeBenchmark.Rule {
  private static final long UPDATE = 100 * KneeBenchmark.MS;
  private static final long INTERVAL = 60 * KneeBenchmark.SECOND;
  private static final double JITTER = 0.15;
  private static final int REQUEST_COUNT = 50;
  private static final int MIN_CONCURRENCY = 3;
  private static final int MAX_LIMIT = 1000;
  private static final double BUFFER = 0.25;

  private final SplittableRandom random;
  private double limit = MIN_CONCURRENCY;
  private double deferred = MIN_CONCURRENCY;
  private boolean measuring = true;
  private double minRtt = Double.NaN;
  private long nextMeasurement;
  private long windowEnd = -1;
  private int atMinimum;
  private long[] samples = new long[256];
  private int count;

  EnvoyGradient(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public int limit() {
    return measuring ? MIN_CONCURRENCY : (int) limit;
  }

  @Override
  public void onSample(long now, long rttNanos, int inFlight, boolean dropped) {
    if (windowEnd < 0) {
      windowEnd = now + UPDATE;
    }
    if (count == samples.length) {
      samples = Arrays.copyOf(samples, count * 2);
    }
    samples[count++] = rttNanos;
    if (measuring) {
      if (count >= REQUEST_COUNT) {
        minRtt = p50();
        count = 0;
        measuring = false;
        limit = deferred;
        nextMeasurement = now + INTERVAL + (long) (random.nextDouble() * JITTER * INTERVAL);
        windowEnd = now + UPDATE;
      }
      return;
    }
    if (now < windowEnd) {
      return;
    }
    windowEnd = now + UPDATE;
    double sample = p50();
    count = 0;
    double gradient = Math.max(0.5, Math.min(2.0, (minRtt * (1 + BUFFER)) / sample));
    double scaled = gradient * limit;
    limit = Math.max(MIN_CONCURRENCY, Math.min(MAX_LIMIT, scaled + Math.sqrt(scaled)));
    atMinimum = limit <= MIN_CONCURRENCY ? atMinimum + 1 : 0;
    if (now >= nextMeasurement || atMinimum >= 5) {
      atMinimum = 0;
      deferred = limit;
      measuring = true;
    }
  }

  private double p50() {
    long[] sorted = Arrays.copyOf(samples, count);
    Arrays.sort(sorted);
    return sorted[(count - 1) / 2];
  }
}
