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
      return Policy.preset("http", 3, Duration.ofSeconds(30), Duration.ofSeconds(10), Budget.AUTOMATIC);
    }
    if (Values.isStaticField(e, QuellTypes.RESILIENCE, "NONE")) {
      return Policy.preset("none", 1, null, null, Budget.NONE);
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
      case "withDeadline": p.deadline = duration(args.get(0), state); break;
      case "withoutDeadline": p.deadline = Setting.NONE; break;
      case "withAttemptTimeout": p.attemptTimeout = duration(args.get(0), state); p.presetAttemptTimeout = false; break;
      case "withoutAttemptTimeout": p.attemptTimeout = Setting.NONE; p.presetAttemptTimeout = false; break;
      case "withBudget": p.budget = budget(args.get(0), state); break;
      case "withAmbientCriticality": p.ambientCriticality = Values.booleanValue(args.get(0), state).orElse(null); break;
      case "withBackoff": notNull(p, "backoff", args.get(0), " (use Backoff.NONE for no delay)"); break;
      case "withClassifier": notNull(p, "classifier", args.get(0), ""); break;
      case "withTimeSource": notNull(p, "timeSource", args.get(0), ""); break;
      case "withListener":
      case "withAmbientDeadline":
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
    ExpressionTree e = ASTHelpers.stripParentheses(change);
    if (!(e instanceof LambdaExpressionTree) || ((LambdaExpressionTree) e).getParameters().size() != 1) {
      return keepOnlyOrigin(before);
    }
    LambdaExpressionTree lambda = (LambdaExpressionTree) e;
    Symbol settings = ASTHelpers.getSymbol(lambda.getParameters().get(0));
    List<MethodInvocationTree> calls = new ArrayList<>();
    boolean understood;
    if (lambda.getBody() instanceof ExpressionTree) {
      understood = collectChain((ExpressionTree) lambda.getBody(), settings, calls);
    } else {
      understood = true;
      for (StatementTree statement : ((BlockTree) lambda.getBody()).getStatements()) {
        understood &= statement instanceof ExpressionStatementTree
            && collectChain(((ExpressionStatementTree) statement).getExpression(), settings, calls);
      }
    }
    if (!understood) {
      return keepOnlyOrigin(before);
    }
    Policy p = before.copy();
    for (MethodInvocationTree call : calls) {
      String method = ASTHelpers.getSymbol(call).getSimpleName().toString();
      List<? extends ExpressionTree> args = call.getArguments();
      switch (method) {
        case "name": setName(p, args.get(0), state); break;
        case "attempts": setAttempts(p, args.get(0), state); break;
        case "deadline": p.deadline = Values.isNullLiteral(args.get(0)) ? Setting.NONE : duration(args.get(0), state); break;
        case "attemptTimeout":
          p.attemptTimeout = Values.isNullLiteral(args.get(0)) ? Setting.NONE : duration(args.get(0), state);
          p.presetAttemptTimeout = false;
          break;
        case "budget": p.budget = budget(args.get(0), state); break;
        case "useAmbientCriticality": p.ambientCriticality = Values.booleanValue(args.get(0), state).orElse(null); break;
        case "backoff": notNull(p, "backoff", args.get(0), " (use Backoff.NONE for no delay)"); break;
        case "classifier": notNull(p, "classifier", args.get(0), ""); break;
        case "timeSource": notNull(p, "timeSource", args.get(0), ""); break;
        case "listener":
        case "clearListeners":
        case "useAmbientDeadline":
          break;
        default:
          return keepOnlyOrigin(before);
      }
    }
    return p;
  }

  /** Collects {@code s.a(..).b(..)} into [a, b] when the chain starts at {@code settings}. */
  private static boolean collectChain(ExpressionTree expression, Symbol settings, List<MethodInvocationTree> calls) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    List<MethodInvocationTree> reversed = new ArrayList<>();
    while (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null || !QuellTypes.declaredIn(method, QuellTypes.SETTINGS)) {
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
