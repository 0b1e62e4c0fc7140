package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Symbol.VarSymbol;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The validation rules of Quell's configuration values other than policies, budgets and backoffs —
 * {@code CircuitBreaker.Config}, the {@code Limiter} factories and {@code Limiter.AdaptiveConfig},
 * {@code Hedge}, {@code MeasuredTiming}, gRPC's {@code withDeadlineSlack} — worked out from constants, in the words of the library's own
 * messages. A factory or {@code with…} step that throws is reported; a step after one that throws is
 * never reached, and is not reported again.
 */
final class ValueModels {
  private static final int MAX_DEPTH = 8;
  /** RateLimiter.MAX_REFILL_NANOS: a full bucket must refill within 100 years. */
  private static final double MAX_REFILL_NANOS = 100.0 * 365 * 24 * 3600 * 1e9;
  private static final long MAX_ADAPTIVE_LIMIT = 1_000_000;

  private ValueModels() {}

  /** The problems the call provably throws for; empty when it passes, or may, or an earlier step of its chain throws. */
  static List<String> problems(MethodInvocationTree call, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    if (method == null) {
      return List.of();
    }
    String owner = method.owner.getQualifiedName().toString();
    switch (owner) {
      case QuellTypes.HEDGE:
      case QuellTypes.MEASURED_TIMING:
      case QuellTypes.ADAPTIVE_CONFIG:
        if (!method.isStatic()) {
          ExpressionTree receiver = ASTHelpers.getReceiver(call);
          if (receiver != null && chainFails(receiver, owner, state, 0)) {
            return List.of();
          }
        }
        return stepProblems(call, method, owner, state);
      case QuellTypes.BREAKER_CONFIG: {
        if (method.isStatic()) {
          return List.of();
        }
        ExpressionTree receiver = ASTHelpers.getReceiver(call);
        Breaker before = receiver == null ? Breaker.unknown() : breaker(receiver, state, 0);
        return before == null ? List.of() : before.apply(call, method, state).problems();
      }
      case QuellTypes.LIMITER:
        return method.isStatic() ? limiterProblems(call, method, state) : List.of();
      case QuellTypes.GRPC_INTERCEPTOR:
        return method.getSimpleName().contentEquals("withDeadlineSlack") && call.getArguments().size() == 1
            ? deadlineSlack(call.getArguments().get(0), state) : List.of();
      default:
        return List.of();
    }
  }

  // ---------------------------------------------------------------- steps that check their own argument

  /** Whether evaluating {@code expression}, a chain of steps of {@code owner}, provably throws at some step. */
  private static boolean chainFails(ExpressionTree expression, String owner, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return false;
    }
    if (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null || !QuellTypes.declaredIn(method, owner)) {
        return false;
      }
      if (!stepProblems(call, method, owner, state).isEmpty()) {
        return true;
      }
      ExpressionTree receiver = method.isStatic() ? null : ASTHelpers.getReceiver(call);
      return receiver != null && chainFails(receiver, owner, state, depth + 1);
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer != null && chainFails(initializer, owner, state, depth + 1);
  }

  /** The rule of one step that checks only its own argument, as the library words it. */
  private static List<String> stepProblems(MethodInvocationTree call, MethodSymbol method, String owner,
      VisitorState state) {
    List<? extends ExpressionTree> args = call.getArguments();
    if (args.size() != 1) {
      return List.of();
    }
    ExpressionTree arg = args.get(0);
    String name = method.getSimpleName().toString();
    List<String> problems = new ArrayList<>();
    switch (owner + "#" + name) {
      case QuellTypes.HEDGE + "#after":
        notNegative("hedge delay", arg, state, problems);
        break;
      case QuellTypes.HEDGE + "#withFloor":
        notNegative("hedge floor", arg, state, problems);
        break;
      case QuellTypes.HEDGE + "#maxExtraLoad":
        Values.doubleValue(arg, state).filter(l -> !(Double.isFinite(l) && l > 0 && l < 1)).ifPresent(l -> problems.add(
            "hedge maxExtraLoad was " + Values.render(l)
                + ": must be in (0, 1): the share of extra attempts you accept, 0.05 for 5%"));
        break;
      case QuellTypes.HEDGE + "#withMaxHedges":
        Values.longValue(arg, state).filter(n -> n < 1 || n > 10)
            .ifPresent(n -> problems.add("hedge maxHedges was " + n + ": must be between 1 and 10"));
        break;
      case QuellTypes.MEASURED_TIMING + "#multipleOfP95":
        Values.doubleValue(arg, state).filter(m -> !(Double.isFinite(m) && m >= 1 && m <= 1000)).ifPresent(m -> problems.add(
            "measured timing multiple was " + Values.render(m)
                + ": must be between 1 and 1000 (a ceiling below the p95 would cut off one answer in twenty)"));
        break;
      case QuellTypes.MEASURED_TIMING + "#withFloor":
        positive("measured timing floor", arg, state, problems);
        break;
      case QuellTypes.MEASURED_TIMING + "#withWindow":
        if (Values.isNullLiteral(arg)) {
          problems.add("measured timing window was null: must be between 1 s and 1 h");
        } else {
          Values.duration(arg, state)
              .filter(w -> w.compareTo(Duration.ofSeconds(1)) < 0 || w.compareTo(Duration.ofHours(1)) > 0)
              .ifPresent(w -> problems.add("measured timing window was " + Values.render(w) + ": must be between 1 s and 1 h"));
        }
        break;
      case QuellTypes.MEASURED_TIMING + "#withMinSamples":
        Values.longValue(arg, state).filter(n -> n < 1)
            .ifPresent(n -> problems.add("measured timing minSamples was " + n + ": must be at least 1"));
        break;
      case QuellTypes.ADAPTIVE_CONFIG + "#withMode":
        if (Values.isNullLiteral(arg)) {
          problems.add("adaptive mode was null: must be " + modes());
        }
        break;
      case QuellTypes.ADAPTIVE_CONFIG + "#withInitialLimit":
      case QuellTypes.ADAPTIVE_CONFIG + "#withMinLimit":
      case QuellTypes.ADAPTIVE_CONFIG + "#withMaxLimit": {
        String parameter = "adaptive " + Character.toLowerCase(name.charAt(4)) + name.substring(5);
        Values.longValue(arg, state).filter(n -> n < 1 || n > MAX_ADAPTIVE_LIMIT).ifPresent(n -> problems.add(
            parameter + " was " + n + ": must be in [1, " + MAX_ADAPTIVE_LIMIT + "]"));
        break;
      }
      case QuellTypes.ADAPTIVE_CONFIG + "#withBackoffRatio":
        Values.doubleValue(arg, state).filter(r -> !(r >= 0.5 && r < 1)).ifPresent(r -> problems.add(
            "adaptive backoffRatio was " + Values.render(r) + ": must be at least 0.5 and less than 1"));
        break;
      case QuellTypes.ADAPTIVE_CONFIG + "#withTolerance":
        Values.doubleValue(arg, state).filter(t -> !(t >= 1 && t <= 100))
            .ifPresent(t -> problems.add("adaptive tolerance was " + Values.render(t) + ": must be in [1, 100]"));
        break;
      case QuellTypes.ADAPTIVE_CONFIG + "#withSmoothing":
        Values.doubleValue(arg, state).filter(v -> !(v > 0 && v <= 1))
            .ifPresent(v -> problems.add("adaptive smoothing was " + Values.render(v) + ": must be in (0, 1]"));
        break;
      case QuellTypes.ADAPTIVE_CONFIG + "#withLongWindow":
        Values.longValue(arg, state).filter(n -> n < 10 || n > 1_000_000)
            .ifPresent(n -> problems.add("adaptive longWindow was " + n + ": must be in [10, 1000000]"));
        break;
      default:
        break;
    }
    return problems;
  }

  // ---------------------------------------------------------------- Limiter factories

  private static List<String> limiterProblems(MethodInvocationTree call, MethodSymbol method, VisitorState state) {
    List<? extends ExpressionTree> args = call.getArguments();
    List<String> problems = new ArrayList<>();
    switch (method.getSimpleName().toString()) {
      case "rate": {
        if (args.size() < 2) {
          break;
        }
        Optional<Double> perSecond = Values.doubleValue(args.get(0), state);
        Optional<Long> burst = Values.longValue(args.get(1), state);
        boolean rateOk = perSecond.map(p -> Double.isFinite(p) && p > 0 && p <= 1e9).orElse(false);
        boolean burstOk = burst.map(b -> b >= 1).orElse(false);
        perSecond.filter(p -> !(Double.isFinite(p) && p > 0 && p <= 1e9)).ifPresent(p -> problems.add(
            "rate limiter perSecond was " + Values.render(p) + ": must be a finite number greater than 0 and at most 1e9"));
        burst.filter(b -> b < 1).ifPresent(b -> problems.add("rate limiter burst was " + b + ": must be at least 1"));
        if (rateOk && burstOk && Math.max(1, Math.ceil(1e9 / perSecond.get())) * burst.get() > MAX_REFILL_NANOS) {
          problems.add("rate limiter burst / perSecond was " + burst.get() + " / " + Values.render(perSecond.get())
              + ": refilling a full bucket must take at most 100 years");
        }
        for (int i = 2; i < args.size(); i++) {
          String type = parameterType(method, i);
          if (type.equals("java.time.Duration")) {
            notNegative("rate limiter maxWait", args.get(i), state, problems);
          } else if (type.equals("dev.quell.TimeSource") && Values.isNullLiteral(args.get(i))) {
            problems.add("rate limiter timeSource was null: must not be null; use TimeSource.system()");
          }
        }
        break;
      }
      case "concurrency":
        if (args.isEmpty()) {
          break;
        }
        Values.longValue(args.get(0), state).filter(n -> n < 1 || n >= Integer.MAX_VALUE).ifPresent(n -> problems.add(
            "concurrency limit n was " + n + ": must be at least 1 and less than " + Integer.MAX_VALUE));
        if (args.size() == 2) {
          notNegative("concurrency limit maxWait", args.get(1), state, problems);
        }
        break;
      case "adaptive":
        if (args.size() != 1) {
          break;
        }
        if (Values.isNullLiteral(args.get(0))) {
          problems.add("adaptive limiter config was null: must not be null; use AdaptiveConfig.DEFAULT");
          break;
        }
        Limits limits = limits(args.get(0), state, 0);
        if (limits != null) {
          problems.addAll(limits.problems());
        }
        break;
      default:
        break;
    }
    return problems;
  }

  /** The adaptive modes as the library's message lists them ("KNEE, LOSS or GRADIENT"), from the library when it is there. */
  private static String modes() {
    try {
      // the default first, then the others in their declared order, as the library lists them
      dev.quell.Limiter.AdaptiveConfig.Mode first = dev.quell.Limiter.AdaptiveConfig.DEFAULT.mode();
      List<String> names = new ArrayList<>();
      names.add(first.name());
      for (dev.quell.Limiter.AdaptiveConfig.Mode m : dev.quell.Limiter.AdaptiveConfig.Mode.values()) {
        if (m != first) {
          names.add(m.name());
        }
      }
      return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
    } catch (LinkageError | RuntimeException e) {
      return "KNEE, LOSS or GRADIENT";
    }
  }

  private static String parameterType(MethodSymbol method, int index) {
    List<VarSymbol> parameters = method.getParameters();
    return index < parameters.size() ? parameters.get(index).type.tsym.getQualifiedName().toString() : "";
  }

  /** The limits of an adaptive configuration, each known or not; null when building it throws. */
  private static final class Limits {
    @Nullable Long initial;
    @Nullable Long min;
    @Nullable Long max;

    /**
     * The limits of a configuration the library builds ({@code config}), read from quell-core on the
     * processor path so that the check follows the library's defaults; {@code initial}, {@code min}
     * and {@code max} when it is not there (or is a version without that configuration).
     */
    static Limits of(java.util.function.Supplier<dev.quell.Limiter.AdaptiveConfig> config, long initial, long min,
        long max) {
      Limits l = new Limits();
      try {
        dev.quell.Limiter.AdaptiveConfig c = config.get();
        l.initial = (long) c.initialLimit();
        l.min = (long) c.minLimit();
        l.max = (long) c.maxLimit();
      } catch (LinkageError | RuntimeException e) {
        l.initial = initial;
        l.min = min;
        l.max = max;
      }
      return l;
    }

    /** {@code AdaptiveConfig.DEFAULT}'s limits (the knee mode: 20, within [5, 1000]). */
    static Limits defaults() {
      return of(() -> dev.quell.Limiter.AdaptiveConfig.DEFAULT, 20, 5, 1000);
    }

    /** {@code AdaptiveConfig.loss()}'s and {@code gradient()}'s limits (Netflix's: 20, within [20, 200]). */
    static Limits netflix() {
      return of(dev.quell.Limiter.AdaptiveConfig::loss, 20, 20, 200);
    }

    /** What {@code Limiter.adaptive(config)} checks when the limiter is built. */
    List<String> problems() {
      List<String> problems = new ArrayList<>();
      if (min != null && max != null && min > max) {
        problems.add("adaptive minLimit was " + min + ": must not be above maxLimit (" + max + ")");
      }
      if (initial != null && min != null && max != null && (initial < min || initial > max)) {
        problems.add("adaptive initialLimit was " + initial + ": must be in [minLimit, maxLimit] = [" + min + ", " + max + "]");
      }
      return problems;
    }
  }

  private static @Nullable Limits limits(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return new Limits();
    }
    if (Values.isStaticField(e, QuellTypes.ADAPTIVE_CONFIG, "DEFAULT")) {
      return Limits.defaults();
    }
    if (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null || !QuellTypes.declaredIn(method, QuellTypes.ADAPTIVE_CONFIG)) {
        return new Limits();
      }
      if (!stepProblems(call, method, QuellTypes.ADAPTIVE_CONFIG, state).isEmpty()) {
        return null;
      }
      if (method.isStatic()) {
        String factory = method.getSimpleName().toString();
        return factory.equals("gradient") || factory.equals("loss") ? Limits.netflix() : new Limits();
      }
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      Limits l = receiver == null ? new Limits() : limits(receiver, state, depth + 1);
      if (l == null) {
        return null;
      }
      Long value = call.getArguments().size() == 1 ? Values.longValue(call.getArguments().get(0), state).orElse(null) : null;
      switch (method.getSimpleName().toString()) {
        case "withInitialLimit": l.initial = value; break;
        case "withMinLimit": l.min = value; break;
        case "withMaxLimit": l.max = value; break;
        default: break;
      }
      return l;
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? new Limits() : limits(initializer, state, depth + 1);
  }

  // ---------------------------------------------------------------- Hedge kinds, for the policy model

  /** What kind of hedge an argument of {@code withHedge} is: a fixed delay, a measured quantile, or a hedge of a kind not known. */
  static PolicyModel.HedgeKind hedgeKind(ExpressionTree expression, VisitorState state) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    for (int depth = 0; depth <= MAX_DEPTH; depth++) {
      if (e instanceof MethodInvocationTree) {
        MethodSymbol method = ASTHelpers.getSymbol((MethodInvocationTree) e);
        if (method == null || !QuellTypes.declaredIn(method, QuellTypes.HEDGE)) {
          return PolicyModel.HedgeKind.PRESENT;
        }
        if (method.isStatic()) {
          String name = method.getSimpleName().toString();
          return name.equals("after") ? PolicyModel.HedgeKind.FIXED
              : name.equals("maxExtraLoad") ? PolicyModel.HedgeKind.MEASURED : PolicyModel.HedgeKind.PRESENT;
        }
        ExpressionTree receiver = ASTHelpers.getReceiver(e);
        if (receiver == null) {
          return PolicyModel.HedgeKind.PRESENT;
        }
        e = ASTHelpers.stripParentheses(receiver); // withMaxHedges, withFloor...: the same kind
        continue;
      }
      ExpressionTree initializer = Values.initializerOf(e, state);
      if (initializer == null) {
        break;
      }
      e = ASTHelpers.stripParentheses(initializer);
    }
    return PolicyModel.HedgeKind.PRESENT; // withHedge(null) throws, so a policy that has one has a hedge
  }

  // ---------------------------------------------------------------- CircuitBreaker.Config

  /** A setting known to have a value (possibly the literal null), or unknown. */
  private static final class Known<T> {
    static final Known<?> UNKNOWN = new Known<>(false, null);

    final boolean known;
    final @Nullable T value;

    private Known(boolean known, @Nullable T value) {
      this.known = known;
      this.value = value;
    }

    static <T> Known<T> of(@Nullable T value) {
      return new Known<>(true, value);
    }

    @SuppressWarnings("unchecked")
    static <T> Known<T> unknown() {
      return (Known<T>) UNKNOWN;
    }

    static Known<Duration> duration(ExpressionTree arg, VisitorState state) {
      if (Values.isNullLiteral(arg)) {
        return of(null);
      }
      return Values.duration(arg, state).map(Known::of).orElse(unknown());
    }
  }

  /** A breaker configuration's settings as far as they are known, and the rules of its validation. */
  private static final class Breaker {
    Optional<Double> failureRate = Optional.empty();
    Optional<Long> minimumCalls = Optional.empty();
    Known<Duration> window = Known.unknown();
    Optional<Long> consecutiveFailures = Optional.empty();
    Optional<Boolean> slowCalls = Optional.empty();
    Known<Duration> slowCallDuration = Known.unknown();
    Optional<Double> slowCallRate = Optional.empty();
    Optional<Long> probes = Optional.empty();
    Optional<Long> probeSuccesses = Optional.empty();
    Known<Duration> breakDuration = Known.unknown();
    Known<Duration> maxBreakDuration = Known.unknown();
    Known<Duration> ramp = Known.unknown();

    static Breaker unknown() {
      return new Breaker();
    }

    static Breaker defaults() {
      Breaker b = new Breaker();
      b.failureRate = Optional.of(0.5);
      b.minimumCalls = Optional.of(20L);
      b.window = Known.of(Duration.ofSeconds(30));
      b.consecutiveFailures = Optional.of(0L);
      b.slowCalls = Optional.of(false);
      b.slowCallDuration = Known.of(null);
      b.slowCallRate = Optional.of(0.5);
      b.probes = Optional.of(1L);
      b.probeSuccesses = Optional.of(1L);
      b.breakDuration = Known.of(Duration.ofSeconds(5));
      b.maxBreakDuration = Known.of(Duration.ofMinutes(5));
      b.ramp = Known.of(Duration.ofSeconds(10));
      return b;
    }

    Breaker copy() {
      Breaker b = new Breaker();
      b.failureRate = failureRate;
      b.minimumCalls = minimumCalls;
      b.window = window;
      b.consecutiveFailures = consecutiveFailures;
      b.slowCalls = slowCalls;
      b.slowCallDuration = slowCallDuration;
      b.slowCallRate = slowCallRate;
      b.probes = probes;
      b.probeSuccesses = probeSuccesses;
      b.breakDuration = breakDuration;
      b.maxBreakDuration = maxBreakDuration;
      b.ramp = ramp;
      return b;
    }

    /** The configuration after one {@code Config} step: a {@code with…} method or {@code with(s -> ...)}. */
    Breaker apply(MethodInvocationTree call, MethodSymbol method, VisitorState state) {
      String name = method.getSimpleName().toString();
      if (name.equals("with")) {
        List<MethodInvocationTree> calls = call.getArguments().size() == 1
            ? PolicyModel.settingsCalls(call.getArguments().get(0), QuellTypes.BREAKER_SETTINGS) : null;
        if (calls == null) {
          return unknown();
        }
        Breaker b = copy();
        for (MethodInvocationTree setting : calls) {
          if (!b.set(ASTHelpers.getSymbol(setting).getSimpleName().toString(), setting.getArguments(), state)) {
            return unknown();
          }
        }
        return b;
      }
      if (!name.startsWith("with") || name.length() < 5) {
        return unknown();
      }
      String setting = name.startsWith("without") ? "no" + name.substring(7)
          : Character.toLowerCase(name.charAt(4)) + name.substring(5);
      Breaker b = copy();
      return b.set(setting, call.getArguments(), state) ? b : unknown();
    }

    /** Applies the settings call {@code name}; false for one this model does not know. */
    private boolean set(String name, List<? extends ExpressionTree> args, VisitorState state) {
      switch (name) {
        case "failureRate": failureRate = Values.doubleValue(args.get(0), state); return true;
        case "minimumCalls": minimumCalls = Values.longValue(args.get(0), state); return true;
        case "window": window = Known.duration(args.get(0), state); return true;
        case "consecutiveFailures": consecutiveFailures = Values.longValue(args.get(0), state); return true;
        case "slowCalls":
          slowCalls = Optional.of(true);
          slowCallDuration = Known.duration(args.get(0), state);
          slowCallRate = Values.doubleValue(args.get(1), state);
          return true;
        case "noSlowCalls":
          slowCalls = Optional.of(false);
          slowCallDuration = Known.of(null);
          return true;
        case "probes": probes = Values.longValue(args.get(0), state); return true;
        case "probeSuccesses": probeSuccesses = Values.longValue(args.get(0), state); return true;
        case "breakDuration": breakDuration = Known.duration(args.get(0), state); return true;
        case "maxBreakDuration": maxBreakDuration = Known.duration(args.get(0), state); return true;
        case "ramp": ramp = Known.duration(args.get(0), state); return true;
        default: return false;
      }
    }

    /** What {@code CircuitBreaker.Config} validation reports for the known settings, in its words. */
    List<String> problems() {
      List<String> problems = new ArrayList<>();
      failureRate.filter(r -> !(Double.isFinite(r) && r > 0 && r <= 1))
          .ifPresent(r -> problems.add("breaker failureRate was " + Values.render(r) + ": must be in (0, 1]"));
      minimumCalls.filter(n -> n < 1).ifPresent(n -> problems.add("breaker minimumCalls was " + n + ": must be at least 1"));
      if (window.known && (window.value == null || window.value.compareTo(Duration.ofMillis(1)) < 0)) {
        problems.add("breaker window was " + shown(window.value) + ": must be at least 1 ms");
      }
      consecutiveFailures.filter(n -> n < 0).ifPresent(n -> problems.add(
          "breaker consecutiveFailures was " + n + ": must be at least 0 (0 turns this trip off)"));
      if (slowCalls.orElse(false)) {
        if (slowCallDuration.known && !positive(slowCallDuration.value)) {
          problems.add("breaker slowCallDuration was " + shown(slowCallDuration.value)
              + ": must be a positive duration (use noSlowCalls() to turn slow-call detection off)");
        }
        slowCallRate.filter(r -> !(Double.isFinite(r) && r > 0 && r <= 1))
            .ifPresent(r -> problems.add("breaker slowCallRate was " + Values.render(r) + ": must be in (0, 1]"));
      }
      probes.filter(n -> n < 1 || n > 1000).ifPresent(n -> problems.add("breaker probes was " + n + ": must be between 1 and 1000"));
      probeSuccesses.filter(n -> n < 1).ifPresent(n -> problems.add("breaker probeSuccesses was " + n + ": must be at least 1"));
      boolean breakOk = breakDuration.known && positive(breakDuration.value);
      boolean maxOk = maxBreakDuration.known && positive(maxBreakDuration.value);
      if (breakDuration.known && !breakOk) {
        problems.add("breaker breakDuration was " + shown(breakDuration.value) + ": must be a positive duration");
      }
      if (maxBreakDuration.known && !maxOk) {
        problems.add("breaker maxBreakDuration was " + shown(maxBreakDuration.value) + ": must be a positive duration");
      }
      if (ramp.known && (ramp.value == null || ramp.value.isNegative())) {
        problems.add("breaker ramp was " + shown(ramp.value) + ": must be zero (no ramp) or positive");
      }
      return problems;
    }

    private static boolean positive(@Nullable Duration d) {
      return d != null && !d.isNegative() && !d.isZero();
    }

    /**
     * What building a breaker from this config reports beyond {@link #problems()}: how the settings
     * fit together, which the library checks only then, so that {@code with…} methods can come in
     * any order.
     */
    List<String> wholeProblems() {
      List<String> problems = new ArrayList<>();
      Duration first = breakDuration.value;
      Duration most = maxBreakDuration.value;
      if (breakDuration.known && maxBreakDuration.known && positive(first) && positive(most)
          && first != null && most != null && most.compareTo(first) < 0) {
        problems.add("breaker maxBreakDuration was " + shown(most) + ": must be at least breakDuration ("
            + shown(first) + ")");
      }
      return problems;
    }

    private static String shown(@Nullable Duration d) {
      return d == null ? "null" : Values.render(d);
    }
  }

  /**
   * Where a breaker is built from a config ({@code CircuitBreaker.of(name, config…)},
   * {@code withBreaker(config)}, {@code breaker(config)}): how its settings fit together.
   */
  static List<String> breakerBuilt(MethodInvocationTree call, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    if (method == null) {
      return List.of();
    }
    String owner = method.owner.getQualifiedName().toString();
    if (!owner.equals(QuellTypes.CIRCUIT_BREAKER) && !owner.equals(QuellTypes.RESILIENCE)
        && !owner.equals(QuellTypes.SETTINGS)) {
      return List.of();
    }
    String name = method.getSimpleName().toString();
    ExpressionTree config = null;
    for (int i = 0; i < call.getArguments().size(); i++) {
      if (ASTHelpers.isSameType(ASTHelpers.getType(call.getArguments().get(i)),
          state.getTypeFromString(QuellTypes.BREAKER_CONFIG), state)) {
        config = call.getArguments().get(i);
      }
    }
    boolean builds = name.equals("of") || name.equals("withBreaker") || name.equals("breaker");
    if (!builds || config == null) {
      return List.of();
    }
    Breaker b = breaker(config, state, 0);
    return b == null ? List.of() : b.wholeProblems();
  }

  /** The breaker configuration an expression evaluates to; null when building it throws at some step. */
  private static @Nullable Breaker breaker(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return Breaker.unknown();
    }
    if (Values.isStaticField(e, QuellTypes.BREAKER_CONFIG, "DEFAULT")) {
      return Breaker.defaults();
    }
    if (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null || method.isStatic() || !QuellTypes.declaredIn(method, QuellTypes.BREAKER_CONFIG)) {
        return Breaker.unknown();
      }
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      Breaker before = receiver == null ? Breaker.unknown() : breaker(receiver, state, depth + 1);
      if (before == null) {
        return null;
      }
      Breaker after = before.apply(call, method, state);
      return after.problems().isEmpty() ? after : null;
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? Breaker.unknown() : breaker(initializer, state, depth + 1);
  }

  /** gRPC's {@code ResilienceInterceptor.withDeadlineSlack}: zero or positive, at most a minute. */
  private static List<String> deadlineSlack(ExpressionTree arg, VisitorState state) {
    List<String> problems = new ArrayList<>();
    notNegative("deadlineSlack", arg, state, problems);
    Values.duration(arg, state).filter(d -> d.compareTo(Duration.ofMinutes(1)) > 0).ifPresent(d -> problems.add(
        "deadlineSlack was " + Values.render(d) + ": must be at most 1 minute: it is a margin for timers, not a timeout"));
    return problems;
  }

  // ---------------------------------------------------------------- durations

  private static void notNegative(String parameter, ExpressionTree arg, VisitorState state, List<String> problems) {
    if (Values.isNullLiteral(arg)) {
      problems.add(parameter + " was null: must be zero or positive");
      return;
    }
    Values.duration(arg, state).filter(Duration::isNegative)
        .ifPresent(d -> problems.add(parameter + " was " + Values.render(d) + ": must be zero or positive"));
  }

  private static void positive(String parameter, ExpressionTree arg, VisitorState state, List<String> problems) {
    if (Values.isNullLiteral(arg)) {
      problems.add(parameter + " was null: must be a positive duration");
      return;
    }
    Values.duration(arg, state).filter(d -> d.isNegative() || d.isZero())
        .ifPresent(d -> problems.add(parameter + " was " + Values.render(d) + ": must be a positive duration"));
  }
}
