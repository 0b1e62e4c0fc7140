package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.WARNING;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.TreePath;

/**
 * A call that retries, made inside the attempt (the work lambda) of another call that retries, in
 * the same method: the attempts multiply. Both policies must provably make more than one attempt.
 * Only work written inline in the outer call's lambda counts (a lambda inside it that may run on
 * another thread, later, does not).
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "A retrying call inside the attempt of another retrying call: the attempts multiply",
    severity = WARNING,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellnestedretry")
public final class QuellNestedRetry extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    boolean execution = Executions.isExecution(tree);
    PolicyModel.Policy inner = execution ? Executions.policyOf(tree, state) : Executions.requestPolicy(tree, state);
    if (inner == null || !inner.retries()) {
      return Description.NO_MATCH;
    }
    if (Contexts.inTestOrMain(state.getPath(), state)) {
      return Description.NO_MATCH; // a test does this on purpose
    }
    Tree child = tree;
    for (TreePath p = state.getPath().getParentPath(); p != null; p = p.getParentPath()) {
      Tree leaf = p.getLeaf();
      if (leaf instanceof MethodTree || leaf instanceof ClassTree) {
        return Description.NO_MATCH;
      }
      if (child instanceof LambdaExpressionTree) {
        boolean work = leaf instanceof MethodInvocationTree && Executions.isExecution((MethodInvocationTree) leaf)
            && Executions.work((MethodInvocationTree) leaf) == child;
        if (!work) {
          return Description.NO_MATCH; // a lambda that may run elsewhere, later
        }
        MethodInvocationTree outerCall = (MethodInvocationTree) leaf;
        PolicyModel.Policy outer = Executions.policyOf(outerCall, state);
        Integer outerAttempts = outer == null ? null : outer.attempts;
        Integer innerAttempts = inner.attempts;
        if (outer != null && outer.retries() && outerAttempts != null && innerAttempts != null) {
          long line = state.getPath().getCompilationUnit().getLineMap()
              .getLineNumber(ASTHelpers.getStartPosition(outerCall));
          int n = outerAttempts;
          int m = innerAttempts;
          String what = execution ? "This call makes up to " + m + " attempts"
              : "This request goes through " + state.getSourceForNode(clientOf(tree)) + ", one of Quell's clients,"
                  + " which retries it: up to " + m + " attempts";
          return buildDescription(tree)
              .setMessage(what + " inside each attempt of the call on line " + line
                  + ", which makes up to " + n + ": together up to " + n + " × " + m + " = " + (long) n * m
                  + " attempts on this dependency for one outer call, and each layer's budget sees only its own"
                  + " retries. Retry at one layer: run the outer call with policy.once() (or the inner one, when it is a"
                  + " policy), which keeps its breaker and budget.")
              .build();
        }
      }
      child = leaf;
    }
    return Description.NO_MATCH;
  }

  /** The client a request is made through: the receiver of send, or the client OkHttp's newCall was called on. */
  private static com.sun.source.tree.ExpressionTree clientOf(MethodInvocationTree request) {
    com.sun.source.tree.ExpressionTree receiver = ASTHelpers.stripParentheses(ASTHelpers.getReceiver(request));
    if (receiver instanceof MethodInvocationTree && ASTHelpers.getReceiver(receiver) != null
        && ASTHelpers.getSymbol((MethodInvocationTree) receiver).getSimpleName().contentEquals("newCall")) {
      return ASTHelpers.getReceiver(receiver);
    }
    return receiver;
  }
}
