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
import com.sun.source.tree.ExpressionStatementTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.TreePath;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Type;
import com.sun.tools.javac.code.TypeTag;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * An {@code Outcome} (or a future of one) returned by a Quell call such as {@code run} and
 * thrown away. {@code run} never throws for the work's failures: the outcome is the only place a
 * failure, a refusal by the budget or a missed deadline is reported, so ignoring it loses them.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "The Outcome of run(...) is ignored, so the call's failures vanish without a trace",
    severity = ERROR,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellignoredoutcome")
public final class QuellIgnoredOutcome extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;
  /** The types whose calls return an Outcome instead of throwing. */
  private static final Set<String> RUNS = Set.of(QuellTypes.RESILIENCE, QuellTypes.POLICY_SCOPE);

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(tree);
    if (method == null || !RUNS.contains(method.owner.getQualifiedName().toString())
        || !returnsOutcome(ASTHelpers.getType(tree), state)) {
      return Description.NO_MATCH;
    }
    if (Contexts.inTestOrMain(state.getPath(), state)) {
      return Description.NO_MATCH; // a test does this on purpose
    }
    Tree parent = state.getPath().getParentPath().getLeaf();
    boolean ignored = parent instanceof ExpressionStatementTree
        || (parent instanceof LambdaExpressionTree && returnsVoid((LambdaExpressionTree) parent, state));
    String name = method.getSimpleName().toString();
    String call = name + "(...)";
    if (!ignored) {
      // runAsync(...).join() or .get() as a statement: the wait is kept, the outcome it waited for dropped
      TreePath waitPath = waitedOn(state.getPath(), state);
      if (waitPath == null) {
        return Description.NO_MATCH;
      }
      Tree waitParent = waitPath.getParentPath().getLeaf();
      ignored = waitParent instanceof ExpressionStatementTree
          || (waitParent instanceof LambdaExpressionTree && returnsVoid((LambdaExpressionTree) waitParent, state));
      call = name + "(...)." + ASTHelpers.getSymbol((MethodInvocationTree) waitPath.getLeaf()).getSimpleName() + "()";
    }
    if (!ignored) {
      return Description.NO_MATCH;
    }
    return buildDescription(tree)
        .setMessage("The Outcome of " + call + " is ignored: " + name + " never throws for the work's failures,"
            + " so a failure, a refusal by the budget or a missed deadline here vanishes without a trace."
            + " Read the outcome (outcome.stopReason(), outcome.failure()), or call execute(...), which throws.")
        .build();
  }

  /** The {@code join()}/{@code get()} called directly on the future of an outcome at {@code path}, if any. */
  private static @Nullable TreePath waitedOn(TreePath path, VisitorState state) {
    TreePath select = path.getParentPath();
    if (!(select.getLeaf() instanceof MemberSelectTree)) {
      return null;
    }
    TreePath call = select.getParentPath();
    if (!(call.getLeaf() instanceof MethodInvocationTree)
        || ((MethodInvocationTree) call.getLeaf()).getMethodSelect() != select.getLeaf()) {
      return null;
    }
    MethodSymbol wait = ASTHelpers.getSymbol((MethodInvocationTree) call.getLeaf());
    boolean waits = wait != null && Set.of("join", "get", "getNow", "resultNow").contains(wait.getSimpleName().toString())
        && QuellTypes.isA(wait.owner.type, "java.util.concurrent.Future", state)
        || wait != null && wait.getSimpleName().contentEquals("join")
            && wait.owner.getQualifiedName().contentEquals("java.util.concurrent.CompletableFuture");
    return waits ? call : null;
  }

  private static boolean returnsOutcome(Type type, VisitorState state) {
    if (type == null) {
      return false;
    }
    if (type.tsym.getQualifiedName().contentEquals(QuellTypes.OUTCOME)) {
      return true;
    }
    if (QuellTypes.isA(type, "java.util.concurrent.CompletionStage", state) && type.getTypeArguments().size() == 1) {
      Type argument = type.getTypeArguments().get(0);
      return argument.tsym.getQualifiedName().contentEquals(QuellTypes.OUTCOME);
    }
    return false;
  }

  private static boolean returnsVoid(LambdaExpressionTree lambda, VisitorState state) {
    Type functional = ASTHelpers.getType(lambda);
    if (functional == null) {
      return false;
    }
    Type descriptor = state.getTypes().findDescriptorType(functional);
    return descriptor != null && descriptor.getReturnType().hasTag(TypeTag.VOID);
  }
}
