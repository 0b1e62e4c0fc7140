package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionStatementTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.StatementTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.TreePath;
import com.sun.source.tree.BlockTree;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.lang.model.element.ElementKind;
import org.jspecify.annotations.Nullable;

/**
 * What the code at hand proves about a {@code Resilience} policy: the settings that a chain of
 * {@code with…} calls from a preset (or from a final variable of this file) gives, each known or
 * unknown, and the problems {@code Resilience.Settings.validate()} would report for them.
 */
final class PolicyModel {
  private static final int MAX_DEPTH = 8;

  /** What the budget setting is known to be. */
  enum Budget { AUTOMATIC, NONE, EXPLICIT, UNKNOWN }

  /** What the hedge setting is known to be: none, a fixed delay, a measured one, one of a kind not known, unknown. */
  enum HedgeKind { NONE, FIXED, MEASURED, PRESENT, UNKNOWN;

    boolean present() {
      return this == FIXED || this == MEASURED || this == PRESENT;
    }
  }

  /** A setting that is known on or off, or unknown. */
  enum Toggle { ON, OFF, UNKNOWN }

  /** A duration setting that may be absent ("none"): known with a value, known absent, or unknown. */
  static final class Setting {
    static final Setting UNKNOWN = new Setting(false, null);
    static final Setting NONE = new Setting(true, null);

    final boolean known;
    final @Nullable Duration value;

    private Setting(boolean known, @Nullable Duration value) {
      this.known = known;
      this.value = value;
    }

    static Setting of(Optional<Duration> value) {
      return value.map(v -> new Setting(true, v)).orElse(UNKNOWN);
    }

    /** The value when it is known and present. */
    Optional<Duration> present() {
      return known ? Optional.ofNullable(value) : Optional.empty();
    }
  }

  /** A policy's settings as far as they are known. */
  static final class Policy {
    boolean nameKnown;
    @Nullable String name;
    @Nullable Integer attempts;
    Setting deadline = Setting.UNKNOWN;
    Setting attemptTimeout = Setting.UNKNOWN;
    /** Whether the attempt timeout is the preset's, never set in the chain. */
    boolean presetAttemptTimeout;
    Budget budget = Budget.UNKNOWN;
    /** A breaker of the policy's own ({@code withBreaker(CircuitBreaker.Config)}): fresh in every copy. */
    Toggle ownBreaker = Toggle.UNKNOWN;
    /** Measured timing, whose latency histogram is fresh in every copy. */
    Toggle measuredTiming = Toggle.UNKNOWN;
    HedgeKind hedge = HedgeKind.UNKNOWN;
    /** The hedge as the library writes it (its own toString), or its source when it cannot be built here. */
    @Nullable String hedgeText;
    /** The least time the first retry waits for the backoff, whatever the jitter draws; null when unknown. */
    @Nullable Duration firstWait;
    /** The source of the backoff set in the chain; null for the preset's. */
    @Nullable String backoffSource;
    @Nullable Boolean ambientCriticality;
    /** Null arguments seen in the last step, each a problem as validation words it. */
    final List<String> nullProblems = new ArrayList<>();
    /** Whether the chain starts at an effectively final local variable. */
    boolean viaLocal;

    static Policy unknown() {
      return new Policy();
    }

    static Policy preset(String name, int attempts, @Nullable Duration deadline, @Nullable Duration attemptTimeout,
        Budget budget) {
      Policy p = new Policy();
      p.nameKnown = true;
      p.name = name;
      p.attempts = attempts;
      p.deadline = deadline == null ? Setting.NONE : Setting.of(Optional.of(deadline));
      p.attemptTimeout = attemptTimeout == null ? Setting.NONE : Setting.of(Optional.of(attemptTimeout));
      p.budget = budget;
      p.ambientCriticality = false;
      p.presetAttemptTimeout = true;
      p.ownBreaker = Toggle.OFF;
      p.measuredTiming = Toggle.OFF;
      p.hedge = HedgeKind.NONE;
      p.firstWait = Duration.ZERO; // the presets' exponential backoff has full jitter: the first wait may be 0
      return p;
    }

    Policy copy() {
      Policy p = new Policy();
      p.nameKnown = nameKnown;
      p.name = name;
      p.attempts = attempts;
      p.deadline = deadline;
      p.attemptTimeout = attemptTimeout;
      p.presetAttemptTimeout = presetAttemptTimeout;
      p.budget = budget;
      p.ownBreaker = ownBreaker;
      p.measuredTiming = measuredTiming;
      p.hedge = hedge;
      p.hedgeText = hedgeText;
      p.firstWait = firstWait;
      p.backoffSource = backoffSource;
      p.ambientCriticality = ambientCriticality;
      p.viaLocal = viaLocal;
      return p;
    }

    /** True when the policy provably retries (more than one attempt). */
    boolean retries() {
      return attempts != null && attempts > 1;
    }

    /** True when the policy provably owns an automatic budget that it spends from. */
    boolean ownsAutomaticBudget() {
      return budget == Budget.AUTOMATIC && retries();
    }

    /** True when the policy provably owns a circuit breaker built from a configuration. */
    boolean ownsBreaker() {
      return ownBreaker == Toggle.ON;
    }

    /** True when the policy provably owns a latency histogram: measured timing, or a hedge at a measured quantile. */
    boolean ownsHistogram() {
      return measuredTiming == Toggle.ON || hedge == HedgeKind.MEASURED;
    }

    /** True when the policy provably owns live state that learns from many calls: a guard. */
    boolean isGuard() {
      return ownsAutomaticBudget() || ownsBreaker() || ownsHistogram();
    }

    /** The problems {@code Resilience.Settings.validate()} reports for the known settings, in its words. */
    List<String> problems() {
      List<String> problems = new ArrayList<>();
      if (nameKnown && (name == null || name.isBlank())) {
        problems.add("name was " + (name == null ? "null" : '"' + name + '"') + ": must not be blank");
      }
      if (attempts != null && attempts < 1) {
        problems.add("attempts was " + attempts + ": must be at least 1 (attempts counts the first attempt too)");
      }
      positive("deadline", deadline, problems);
      positive("attemptTimeout", attemptTimeout, problems);
      problems.addAll(nullProblems);
      if (hedge.present() && attempts != null && attempts <= 1) {
        problems.add("hedge was " + (hedgeText == null ? "set" : hedgeText)
            + ": needs attempts of 2 or more: every hedge is an attempt");
      }
      if (Boolean.TRUE.equals(ambientCriticality)) {
        if (attempts != null && attempts <= 1) {
          problems.add("useAmbientCriticality was true: has no effect with attempts = 1:"
              + " criticality only decides which retries a budget funds");
        }
        if (budget == Budget.NONE) {
          problems.add("useAmbientCriticality was true: has no effect without a budget (budget is RetryBudget.NONE)");
        }
      }
      return problems;
    }

    private static void positive(String parameter, Setting setting, List<String> problems) {
      Optional<Duration> value = setting.present();
      if (value.isPresent() && (value.get().isNegative() || value.get().isZero())) {
        problems.add(parameter + " was " + Values.render(value.get()) + ": must be a positive duration");
      }
    }
  }

  private PolicyModel() {}

  /** Whether the call is a {@code with…} method of {@code Resilience} that returns a new policy. */
  static boolean isStep(ExpressionTree tree) {
    if (!(tree instanceof MethodInvocationTree)) {
      return false;
    }
    MethodSymbol method = ASTHelpers.getSymbol((MethodInvocationTree) tree);
    return method != null && !method.isStatic() && QuellTypes.declaredIn(method, QuellTypes.RESILIENCE)
        && method.getSimpleName().toString().startsWith("with")
        && method.getReturnType().tsym.getQualifiedName().contentEquals(QuellTypes.RESILIENCE);
  }

  /** Whether the step at {@code path} is the last of its chain: its result is not the receiver of another step. */
  static boolean isChainEnd(TreePath path) {
    Tree parent = path.getParentPath().getLeaf();
    TreePath grandPath = path.getParentPath().getParentPath();
    Tree grand = grandPath == null ? null : grandPath.getLeaf();
    return !(parent instanceof MemberSelectTree && grand instanceof MethodInvocationTree
        && ((MethodInvocationTree) grand).getMethodSelect() == parent && isStep((ExpressionTree) grand));
  }

  /**
   * The policy a {@code Resilience} expression evaluates to; null when it never evaluates to one,
   * because a step before it fails validation (that step is reported on its own).
   */
  static @Nullable Policy evaluate(ExpressionTree expression, VisitorState state) {
    return evaluate(expression, state, 0);
  }

  private static @Nullable Policy evaluate(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return Policy.unknown();
    }
    if (Values.isStaticField(e, QuellTypes.RESILIENCE, "DEFAULT")) {
      return Policy.preset("default", 3, Duration.ofSeconds(30), Duration.ofSeconds(10), Budget.AUTOMATIC);
    }
    if (Values.isStaticField(e, QuellTypes.RESILIENCE, "HTTP")) {
      return httpPreset();
    }
    if (Values.isStaticField(e, QuellTypes.RESILIENCE, "NONE")) {
      return Policy.preset("none", 1, null, null, Budget.NONE);
    }
    if (QuellTypes.isCall(e, QuellTypes.RESILIENCE, "once")) {
      // the same instance for work that must not be repeated: its budget, breaker and histogram, one attempt
      ExpressionTree receiver = ASTHelpers.getReceiver(e);
      Policy base = receiver == null ? Policy.unknown() : evaluate(receiver, state, depth + 1);
      if (base == null) {
        return null;
      }
      Policy once = base.copy();
      once.attempts = 1;
      once.hedge = HedgeKind.NONE;
      once.ambientCriticality = false;
      return once;
    }
    if (isStep(e)) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      Policy before = receiver == null ? Policy.unknown() : evaluate(receiver, state, depth + 1);
      if (before == null) {
        return null;
      }
      Policy after = apply(before, call, state);
      return after.problems().isEmpty() ? after : null;
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    if (initializer != null) {
      Policy p = evaluate(initializer, state, depth + 1);
      if (p != null && ASTHelpers.getSymbol(e).getKind() == ElementKind.LOCAL_VARIABLE) {
        p.viaLocal = true;
      }
      return p;
    }
    return Policy.unknown();
  }

  /** {@code Resilience.HTTP}, which Quell's HTTP clients use when given no policy. */
  static Policy httpPreset() {
    return Policy.preset("http", 3, Duration.ofSeconds(30), Duration.ofSeconds(10), Budget.AUTOMATIC);
  }

  /** The template of a {@code PolicyScope} expression, as far as it is known. */
  static @Nullable Policy evaluateScopeTemplate(ExpressionTree expression, VisitorState state) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    for (int depth = 0; depth <= MAX_DEPTH; depth++) {
      if (QuellTypes.isCall(e, QuellTypes.POLICY_SCOPE, "of")) {
        return evaluate(((MethodInvocationTree) e).getArguments().get(0), state);
      }
      ExpressionTree initializer = Values.initializerOf(e, state);
      if (initializer == null) {
        break;
      }
      e = ASTHelpers.stripParentheses(initializer);
    }
    return Policy.unknown();
  }

  /** The policy after one {@code with…} step. Settings validation is left to {@link Policy#problems()}. */
  static Policy apply(Policy before, MethodInvocationTree call, VisitorState state) {
    Policy p = before.copy();
    String method = ASTHelpers.getSymbol(call).getSimpleName().toString();
    List<? extends ExpressionTree> args = call.getArguments();
    switch (method) {
      case "withName": setName(p, args.get(0), state); break;
      case "withAttempts": setAttempts(p, args.get(0), state); break;
      case "withDeadline": setDeadline(p, args.get(0), state); break;
      case "withoutDeadline": p.deadline = Setting.NONE; break;
      case "withAttemptTimeout": setAttemptTimeout(p, args.get(0), state); break;
      case "withoutAttemptTimeout": p.attemptTimeout = Setting.NONE; p.presetAttemptTimeout = false; break;
      case "withBudget": p.budget = budget(args.get(0), state); break;
      case "withAmbientCriticality": p.ambientCriticality = Values.booleanValue(args.get(0), state).orElse(null); break;
      case "withBackoff": setBackoff(p, args.get(0), state); break;
      case "withClassifier": notNull(p, "classifier", args.get(0), ""); break;
      case "withTimeSource": notNull(p, "timeSource", args.get(0), ""); break;
      case "withBreaker": p.ownBreaker = ownsWhatItIsGiven(call) ? Toggle.ON : Toggle.OFF; break;
      case "withoutBreaker": p.ownBreaker = Toggle.OFF; break;
      case "withMeasuredTiming": p.measuredTiming = Toggle.ON; break;
      case "withoutMeasuredTiming": p.measuredTiming = Toggle.OFF; break;
      case "withHedge": setHedge(p, args.get(0), state); break;
      case "withoutHedge": p.hedge = HedgeKind.NONE; break;
      case "withListener":
      case "withAmbientDeadline":
      case "withLimiter":
      case "withoutLimiters":
      case "withDiscard":
        break;
      case "with":
        return withSettings(p, args.get(0), state);
      default:
        return keepOnlyOrigin(p); // a step this model does not know may change anything
    }
    return p;
  }

  private static Policy keepOnlyOrigin(Policy before) {
    Policy p = Policy.unknown();
    p.viaLocal = before.viaLocal;
    return p;
  }

  /** {@code with(s -> s.attempts(2).deadline(...))}: the settings calls on the lambda's parameter, in order. */
  private static Policy withSettings(Policy before, ExpressionTree change, VisitorState state) {
    List<MethodInvocationTree> calls = settingsCalls(change, QuellTypes.SETTINGS);
    if (calls == null) {
      return keepOnlyOrigin(before);
    }
    Policy p = before.copy();
    for (MethodInvocationTree call : calls) {
      String method = ASTHelpers.getSymbol(call).getSimpleName().toString();
      List<? extends ExpressionTree> args = call.getArguments();
      switch (method) {
        case "name": setName(p, args.get(0), state); break;
        case "attempts": setAttempts(p, args.get(0), state); break;
        case "deadline": setDeadline(p, args.get(0), state); break;
        case "noDeadline": p.deadline = Setting.NONE; break;
        case "attemptTimeout": setAttemptTimeout(p, args.get(0), state); break;
        case "noAttemptTimeout": p.attemptTimeout = Setting.NONE; p.presetAttemptTimeout = false; break;
        case "budget": p.budget = budget(args.get(0), state); break;
        case "useAmbientCriticality": p.ambientCriticality = Values.booleanValue(args.get(0), state).orElse(null); break;
        case "backoff": setBackoff(p, args.get(0), state); break;
        case "classifier": notNull(p, "classifier", args.get(0), ""); break;
        case "timeSource": notNull(p, "timeSource", args.get(0), ""); break;
        case "breaker": p.ownBreaker = ownsWhatItIsGiven(call) ? Toggle.ON : Toggle.OFF; break;
        case "noBreaker": p.ownBreaker = Toggle.OFF; break;
        case "measuredTiming": p.measuredTiming = Toggle.ON; break;
        case "noMeasuredTiming": p.measuredTiming = Toggle.OFF; break;
        case "hedge": setHedge(p, args.get(0), state); break;
        case "noHedge": p.hedge = HedgeKind.NONE; break;
        case "listener":
        case "clearListeners":
        case "useAmbientDeadline":
        case "limiter":
        case "clearLimiters":
        case "discard":
          break;
        default:
          return keepOnlyOrigin(before);
      }
    }
    return p;
  }

  /**
   * The calls a {@code with(s -> ...)} lambda makes on its settings parameter (of type {@code owner}),
   * in order: {@code s -> s.a(..).b(..)} or a block of such statements. Null when the lambda does
   * anything else, which this model does not follow.
   */
  static @Nullable List<MethodInvocationTree> settingsCalls(ExpressionTree change, String owner) {
    ExpressionTree e = ASTHelpers.stripParentheses(change);
    if (!(e instanceof LambdaExpressionTree) || ((LambdaExpressionTree) e).getParameters().size() != 1) {
      return null;
    }
    LambdaExpressionTree lambda = (LambdaExpressionTree) e;
    Symbol settings = ASTHelpers.getSymbol(lambda.getParameters().get(0));
    List<MethodInvocationTree> calls = new ArrayList<>();
    boolean understood;
    if (lambda.getBody() instanceof ExpressionTree) {
      understood = collectChain((ExpressionTree) lambda.getBody(), settings, owner, calls);
    } else {
      understood = true;
      for (StatementTree statement : ((BlockTree) lambda.getBody()).getStatements()) {
        understood &= statement instanceof ExpressionStatementTree
            && collectChain(((ExpressionStatementTree) statement).getExpression(), settings, owner, calls);
      }
    }
    return understood ? calls : null;
  }

  /** Collects {@code s.a(..).b(..)} into [a, b] when the chain starts at {@code settings}. */
  private static boolean collectChain(ExpressionTree expression, Symbol settings, String owner,
      List<MethodInvocationTree> calls) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    List<MethodInvocationTree> reversed = new ArrayList<>();
    while (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null || !QuellTypes.declaredIn(method, owner)) {
        return false;
      }
      reversed.add(0, call);
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      if (receiver == null) {
        return false;
      }
      e = ASTHelpers.stripParentheses(receiver);
    }
    if (!(e instanceof IdentifierTree) || !settings.equals(ASTHelpers.getSymbol(e))) {
      return false;
    }
    calls.addAll(reversed);
    return true;
  }

  private static void setHedge(Policy p, ExpressionTree arg, VisitorState state) {
    p.hedge = ValueModels.hedgeKind(arg, state);
    String built;
    try {
      built = Library.hedge(arg, state);
    } catch (LinkageError e) {
      built = null; // quell-core is not on the processor path: the hedge is named by its source
    }
    p.hedgeText = built != null ? built : state.getSourceForNode(arg);
  }

  private static void setBackoff(Policy p, ExpressionTree arg, VisitorState state) {
    notNull(p, "backoff", arg, " (use Backoff.NONE for no delay)");
    p.firstWait = Backoffs.firstWait(arg, state);
    p.backoffSource = state.getSourceForNode(arg);
  }

  /** {@code deadline(null)} is refused: "no deadline" is said with {@code withoutDeadline()}. */
  private static void setDeadline(Policy p, ExpressionTree arg, VisitorState state) {
    if (Values.isNullLiteral(arg)) {
      p.nullProblems.add("deadline was null: must be a positive duration; for no deadline use withoutDeadline()");
      return;
    }
    p.deadline = duration(arg, state);
  }

  private static void setAttemptTimeout(Policy p, ExpressionTree arg, VisitorState state) {
    p.presetAttemptTimeout = false;
    if (Values.isNullLiteral(arg)) {
      p.nullProblems.add("attemptTimeout was null: must be a positive duration; for none use withoutAttemptTimeout()");
      return;
    }
    p.attemptTimeout = duration(arg, state);
  }

  /**
   * Whether a {@code withBreaker}/{@code breaker} call gives the policy a breaker of its own: the
   * overload that takes a {@code CircuitBreaker.Config} builds one per policy instance; the one that
   * takes a live {@code CircuitBreaker} shares it.
   */
  private static boolean ownsWhatItIsGiven(MethodInvocationTree call) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    return method != null && method.getParameters().size() == 1
        && method.getParameters().get(0).type.tsym.getQualifiedName().contentEquals(QuellTypes.BREAKER_CONFIG);
  }

  private static void setName(Policy p, ExpressionTree arg, VisitorState state) {
    if (Values.isNullLiteral(arg)) {
      p.nameKnown = true;
      p.name = null;
      return;
    }
    Optional<String> name = Values.stringValue(arg, state);
    p.nameKnown = name.isPresent();
    p.name = name.orElse(null);
  }

  private static void setAttempts(Policy p, ExpressionTree arg, VisitorState state) {
    p.attempts = Values.longValue(arg, state).map(Long::intValue).orElse(null);
  }

  private static Setting duration(ExpressionTree arg, VisitorState state) {
    return Setting.of(Values.duration(arg, state));
  }

  private static void notNull(Policy p, String parameter, ExpressionTree arg, String hint) {
    if (Values.isNullLiteral(arg)) {
      p.nullProblems.add(parameter + " was null: must not be null" + hint);
    }
  }

  /** What a budget argument is known to be. */
  static Budget budget(ExpressionTree expression, VisitorState state) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    for (int depth = 0; depth <= MAX_DEPTH; depth++) {
      if (Values.isNullLiteral(e) || Values.isStaticField(e, QuellTypes.RETRY_BUDGET, "NONE")) {
        return Budget.NONE;
      }
      if (Values.isStaticField(e, QuellTypes.RETRY_BUDGET, "AUTOMATIC")) {
        return Budget.AUTOMATIC;
      }
      if (QuellTypes.isCall(e, QuellTypes.RETRY_BUDGET, "of", "shared", "feedback", "replenishing", "concurrent")) {
        return Budget.EXPLICIT;
      }
      ExpressionTree initializer = Values.initializerOf(e, state);
      if (initializer == null) {
        return Budget.UNKNOWN;
      }
      e = ASTHelpers.stripParentheses(initializer);
    }
    return Budget.UNKNOWN;
  }
}
