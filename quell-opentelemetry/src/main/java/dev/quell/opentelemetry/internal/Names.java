package dev.quell.opentelemetry.internal;

import dev.quell.internal.Internal;
import dev.quell.internal.TelemetryNames;
import io.opentelemetry.api.common.AttributeKey;

/**
 * Attribute keys and span event names. Instrument names and tag names are core's
 * {@link TelemetryNames}, shared with the Micrometer module and listed in docs/telemetry.md.
 */
@Internal
public final class Names {
  private Names() {}

  public static final AttributeKey<String> POLICY = AttributeKey.stringKey(TelemetryNames.TAG_POLICY);
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey(TelemetryNames.TAG_OUTCOME);
  public static final AttributeKey<String> VERDICT = AttributeKey.stringKey(TelemetryNames.TAG_VERDICT);
  public static final AttributeKey<String> KIND = AttributeKey.stringKey(TelemetryNames.TAG_KIND);
  public static final AttributeKey<String> BUDGET = AttributeKey.stringKey(TelemetryNames.TAG_BUDGET);
  public static final AttributeKey<String> HEDGE = AttributeKey.stringKey(TelemetryNames.TAG_HEDGE);
  public static final AttributeKey<String> BREAKER = AttributeKey.stringKey(TelemetryNames.TAG_BREAKER);
  public static final AttributeKey<String> STATE = AttributeKey.stringKey(TelemetryNames.TAG_STATE);
  public static final AttributeKey<String> LIMITER = AttributeKey.stringKey(TelemetryNames.TAG_LIMITER);

  // span event names and their extra attributes
  public static final String EVENT_ATTEMPT = "quell.attempt";
  public static final String EVENT_RETRY = "quell.retry";
  public static final String EVENT_REJECTED = "quell.rejected";
  public static final String EVENT_CALL = "quell.call";
  public static final String EVENT_HEDGE = "quell.hedge";
  public static final String EVENT_BREAKER = "quell.breaker";
  public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("quell.attempt");
  public static final AttributeKey<Long> ATTEMPTS_MADE = AttributeKey.longKey("quell.attempts");
  public static final AttributeKey<Double> DURATION = AttributeKey.doubleKey("quell.duration");
  public static final AttributeKey<Double> DELAY = AttributeKey.doubleKey("quell.retry.delay");
  public static final AttributeKey<Double> UTILIZATION = AttributeKey.doubleKey("quell.budget.utilization");
  public static final AttributeKey<String> EXCEPTION_TYPE = AttributeKey.stringKey("exception.type");
}
