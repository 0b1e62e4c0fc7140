package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.ERROR;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.CompilationUnitTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.util.TreePathScanner;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code RetryBudget.shared(name, ...)} asked for twice in one file with the same name and
 * different parameters, all worked out from constants. There is one bucket per name in the process
 * and the first caller's parameters win, so one of the two sets is silently ignored (logged once).
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "RetryBudget.shared is called with the same name and different parameters; the first caller's"
        + " parameters win and the others are ignored",
    severity = ERROR,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellsharedbudgetconflict")
public final class QuellSharedBudgetConflict extends BugChecker implements CompilationUnitTreeMatcher {
  private static final long serialVersionUID = 1L;

  private static final class Request {
    final ExpressionTree call;
    final double fraction;
    final double minimumPerSecond;

    Request(ExpressionTree call, double fraction, double minimumPerSecond) {
      this.call = call;
      this.fraction = fraction;
      this.minimumPerSecond = minimumPerSecond;
    }

    boolean sameParameters(Request other) {
      return Double.compare(fraction, other.fraction) == 0 && Double.compare(minimumPerSecond, other.minimumPerSecond) == 0;
    }

    String parameters() {
      return "fraction=" + fraction + ", minimumPerSecond=" + minimumPerSecond;
    }
  }

  @Override
  public Description matchCompilationUnit(CompilationUnitTree unit, VisitorState state) {
    Map<String, Request> first = new HashMap<>();
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitMethodInvocation(MethodInvocationTree tree, Void unused) {
        if (!Contexts.inTestOrMain(getCurrentPath(), state)) { // a test may ask for a conflict on purpose
          check(tree, first, unit, state);
        }
        return super.visitMethodInvocation(tree, null);
      }
    }.scan(unit, null);
    return Description.NO_MATCH;
  }

  private void check(MethodInvocationTree tree, Map<String, Request> first, CompilationUnitTree unit,
      VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(tree);
    if (method == null || !method.isStatic() || !QuellTypes.declaredIn(method, QuellTypes.RETRY_BUDGET)
        || !method.getSimpleName().contentEquals("shared")) {
      return;
    }
    List<? extends ExpressionTree> args = tree.getArguments();
    Optional<String> name = Values.stringValue(args.get(0), state);
    Request request;
    if (args.size() == 1) {
      request = new Request(tree, 0.1, 3.0); // RetryBudget.DEFAULT_FRACTION, DEFAULT_MINIMUM_PER_SECOND
    } else {
      Optional<Double> fraction = Values.doubleValue(args.get(1), state);
      Optional<Double> minimum = Values.doubleValue(args.get(2), state);
      if (fraction.isEmpty() || minimum.isEmpty()) {
        return;
      }
      request = new Request(tree, fraction.get(), minimum.get());
    }
    if (name.isEmpty()) {
      return;
    }
    Request earlier = first.putIfAbsent(name.get(), request);
    if (earlier == null || earlier.sameParameters(request)) {
      return;
    }
    long line = unit.getLineMap().getLineNumber(ASTHelpers.getStartPosition(earlier.call));
    state.reportMatch(buildDescription(tree)
        .setMessage("RetryBudget.shared(\"" + name.get() + "\") asks for " + request.parameters() + " here, but line "
            + line + " asks for " + earlier.parameters() + ". There is one bucket per name in the process: whichever"
            + " call runs first decides its parameters, and the other set is ignored (with one warning in the log)."
            + " Keep the shared budget in one constant, or give different dependencies different names.")
        .build());
  }
}
