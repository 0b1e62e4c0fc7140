package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.ERROR;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Configuration that can never pass Quell's validation, worked out from constants: the same rules
 * as {@code Resilience.Settings.validate()}, the budgets' and backoffs' constructors,
 * {@code PolicyScope.of}, {@code CircuitBreaker.Config}, the {@code Limiter} factories and
 * {@code Limiter.AdaptiveConfig}, {@code Hedge} and {@code MeasuredTiming}, in the same words. Code inside {@code assertThrows} (and its kin) or a
 * {@code try} that catches {@code ResilienceConfigurationException} is expected to fail and is left
 * alone.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "This configuration can never pass validation: it throws ResilienceConfigurationException"
        + " every time it runs",
    severity = ERROR,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellinvalidconfiguration")
public final class QuellInvalidConfiguration extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;
  private static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(30);

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    List<String> problems = problems(tree, state);
    if (problems.isEmpty() || Contexts.expectsFailure(state.getPath(), state)) {
      return Description.NO_MATCH;
    }
    return buildDescription(tree)
        .setMessage("This can never pass validation; it throws ResilienceConfigurationException every time it runs: "
            + String.join("; ", problems))
        .build();
  }

  private static List<String> problems(MethodInvocationTree tree, VisitorState state) {
    List<String> built = ValueModels.breakerBuilt(tree, state);
    if (!built.isEmpty()) {
      return built; // a breaker built from a config whose settings do not fit together
    }
    if (PolicyModel.isStep(tree)) {
      ExpressionTree receiver = ASTHelpers.getReceiver(tree);
      PolicyModel.Policy before = receiver == null ? PolicyModel.Policy.unknown() : PolicyModel.evaluate(receiver, state);
      return before == null ? List.of() : PolicyModel.apply(before, tree, state).problems();
    }
    MethodSymbol method = ASTHelpers.getSymbol(tree);
    if (method == null) {
      return List.of();
    }
    String owner = method.owner.getQualifiedName().toString();
    String name = method.getSimpleName().toString();
    List<? extends ExpressionTree> args = tree.getArguments();
    List<String> problems = new ArrayList<>();
    if (owner.equals(QuellTypes.RETRY_BUDGET) && method.isStatic()) {
      switch (name) {
        case "of":
          if (args.size() >= 2) {
            tokenBucket(args.get(0), args.get(1), state, problems);
          }
          break;
        case "shared":
          Optional<String> shared = Values.stringValue(args.get(0), state);
          if (shared.isPresent() && shared.get().isBlank()) {
            problems.add("shared budget name must not be blank, was \"" + shared.get() + "\"");
          } else if (args.size() == 3) {
            tokenBucket(args.get(1), args.get(2), state, problems);
          }
          break;
        case "feedback":
          if (args.size() == 2) {
            Values.longValue(args.get(0), state).filter(n -> n <= 0 || n > 1_000_000).ifPresent(n -> problems.add(
                "feedback maxTokens was " + n + ": must be in [1, 1000000]; to turn the budget off use RetryBudget.NONE"));
            Values.doubleValue(args.get(1), state).filter(r -> !(Double.isFinite(r) && r >= 0.001 && r <= 1_000_000))
                .ifPresent(r -> problems.add(
                    "feedback tokenRatio was " + Values.render(r) + ": must be a finite number of at least 0.001"));
          }
          break;
        case "replenishing":
          if (args.size() >= 2) {
            Values.longValue(args.get(0), state).filter(n -> n <= 0).ifPresent(n -> problems.add(
                "replenishing maxTokens was " + n + ": must be at least 1; to turn the budget off use RetryBudget.NONE"));
            positive("replenishing period", args.get(1), state, problems);
          }
          break;
        case "concurrent":
          if (args.size() == 2) {
            Values.doubleValue(args.get(0), state).filter(f -> !(Double.isFinite(f) && f > 0 && f <= 1))
                .ifPresent(f -> problems.add("concurrent budget percent was " + Values.render(f)
                    + ": must be in (0, 1] (0.2 means 20%); to turn the budget off use RetryBudget.NONE"));
            Values.longValue(args.get(1), state).filter(n -> n < 0 || n > 1_000_000)
                .ifPresent(n -> problems.add("concurrent budget minimum was " + n + ": must be in [0, 1000000]"));
          }
          break;
        default:
          break;
      }
    } else if (owner.equals(QuellTypes.BACKOFF) && method.isStatic()) {
      if (name.equals("constant") && args.size() == 1) {
        notNegative("backoff delay", Values.duration(args.get(0), state), problems);
      } else if (name.equals("exponential") && !args.isEmpty()) {
        Exponential asked = parameters(tree, state);
        if (asked != null) {
          problems.addAll(asked.problems());
        }
      }
    } else if (owner.equals(QuellTypes.EXPONENTIAL) && !method.isStatic() && name.startsWith("with")) {
      Exponential asked = parameters(tree, state);
      if (asked != null) {
        problems.addAll(asked.problems());
      }
    } else if (owner.equals(QuellTypes.POLICY_SCOPE) && method.isStatic() && name.equals("of") && args.size() == 2) {
      Values.longValue(args.get(1), state).filter(n -> n < 1)
          .ifPresent(n -> problems.add("scope maxKeys was " + n + ": must be at least 1"));
    } else {
      problems.addAll(ValueModels.problems(tree, state));
    }
    return problems;
  }

  private static void tokenBucket(ExpressionTree fraction, ExpressionTree minimum, VisitorState state,
      List<String> problems) {
    Values.doubleValue(fraction, state).filter(f -> !(Double.isFinite(f) && f > 0 && f <= 1)).ifPresent(f -> problems.add(
        "budget fraction was " + Values.render(f) + ": must be in (0, 1]; to turn the budget off use RetryBudget.NONE"));
    Values.doubleValue(minimum, state).filter(m -> !(Double.isFinite(m) && m >= 0 && m <= 1e9)).ifPresent(m -> problems.add(
        "budget minimumPerSecond was " + Values.render(m)
            + ": must be a finite number of at least 0; to turn the budget off use RetryBudget.NONE"));
  }

  private static void positive(String parameter, ExpressionTree arg, VisitorState state, List<String> problems) {
    if (Values.isNullLiteral(arg)) {
      problems.add(parameter + " was null: must be a positive duration");
      return;
    }
    Values.duration(arg, state).filter(d -> d.isNegative() || d.isZero())
        .ifPresent(d -> problems.add(parameter + " was " + Values.render(d) + ": must be a positive duration"));
  }

  private static void notNegative(String parameter, Optional<Duration> value, List<String> problems) {
    value.filter(Duration::isNegative)
        .ifPresent(d -> problems.add(parameter + " was " + Values.render(d) + ": must be zero or positive"));
  }

  /** The exponential backoff an expression builds, or null when building it throws. */
  private static @Nullable Exponential exponential(ExpressionTree expression, VisitorState state) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    for (int depth = 0; depth < 8; depth++) {
      if (e instanceof MethodInvocationTree) {
        return built((MethodInvocationTree) e, state);
      }
      ExpressionTree initializer = Values.initializerOf(e, state);
      if (initializer == null) {
        break;
      }
      e = ASTHelpers.stripParentheses(initializer);
    }
    return Exponential.unknown();
  }

  /** What a call builds when it succeeds, or null when it throws. */
  private static @Nullable Exponential built(MethodInvocationTree call, VisitorState state) {
    Exponential result = parameters(call, state);
    if (result == null) {
      return null;
    }
    return result.problems().isEmpty() ? result : null;
  }

  /** The parameters a backoff call asks for, valid or not; null when a step before it throws. */
  private static @Nullable Exponential parameters(MethodInvocationTree call, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    String owner = method == null ? "" : method.owner.getQualifiedName().toString();
    List<? extends ExpressionTree> args = call.getArguments();
    if (owner.equals(QuellTypes.BACKOFF) && method.getSimpleName().contentEquals("exponential")) {
      if (args.isEmpty()) {
        return new Exponential(Optional.of(Duration.ofMillis(100)), Optional.of(Duration.ofSeconds(1)),
            Optional.of(2.0), Optional.of(DEFAULT_BACKOFF_MAX));
      } else if (args.size() == 1) {
        Optional<Duration> base = Values.duration(args.get(0), state);
        return new Exponential(base, base, Optional.of(2.0), Optional.of(DEFAULT_BACKOFF_MAX));
      } else if (args.size() == 4) {
        return new Exponential(Values.duration(args.get(0), state), Values.duration(args.get(1), state),
            Values.doubleValue(args.get(2), state), Values.duration(args.get(3), state));
      }
    } else if (owner.equals(QuellTypes.EXPONENTIAL) && !method.isStatic() && args.size() == 1) {
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      Exponential before = receiver == null ? Exponential.unknown() : exponential(receiver, state);
      return before == null ? null : before.with(method.getSimpleName().toString(), args.get(0), state);
    }
    return Exponential.unknown();
  }

  /** The parameters of an exponential backoff, each known or not, and the constructor's rules. */
  private static final class Exponential {
    final Optional<Duration> transientBase;
    final Optional<Duration> throttledBase;
    final Optional<Double> factor;
    final Optional<Duration> max;

    Exponential(Optional<Duration> transientBase, Optional<Duration> throttledBase, Optional<Double> factor,
        Optional<Duration> max) {
      this.transientBase = transientBase;
      this.throttledBase = throttledBase;
      this.factor = factor;
      this.max = max;
    }

    static Exponential unknown() {
      return new Exponential(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    Exponential with(String method, ExpressionTree arg, VisitorState state) {
      switch (method) {
        case "withTransientBase": return new Exponential(Values.duration(arg, state), throttledBase, factor, max);
        case "withThrottledBase": return new Exponential(transientBase, Values.duration(arg, state), factor, max);
        case "withFactor": return new Exponential(transientBase, throttledBase, Values.doubleValue(arg, state), max);
        case "withMax": return new Exponential(transientBase, throttledBase, factor, Values.duration(arg, state));
        default: return this;
      }
    }

    List<String> problems() {
      List<String> problems = new ArrayList<>();
      notNegative("backoff transientBase", transientBase, problems);
      notNegative("backoff throttledBase", throttledBase, problems);
      factor.filter(f -> !(f >= 1.0 && Double.isFinite(f))).ifPresent(f -> problems.add(
          "backoff factor was " + Values.render(f) + ": must be a finite number of at least 1"));
      notNegative("backoff max", max, problems);
      if (problems.isEmpty() && max.isPresent() && transientBase.isPresent()
          && max.get().compareTo(transientBase.get()) < 0) {
        problems.add("backoff max was " + Values.render(max.get()) + ": must not be less than transientBase ("
            + Values.render(transientBase.get()) + ")");
      }
      return problems;
    }
  }
}
