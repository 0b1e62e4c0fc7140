package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Calls that run work under a policy: {@code execute}, {@code run} and their async forms. */
final class Executions {
  private static final Set<String> POLICY_METHODS = Set.of("execute", "run", "executeAsync", "runAsync");
  private static final Set<String> SCOPE_METHODS = Set.of("execute", "run", "executeAsync");
  private static final Set<String> ASYNC_METHODS = Set.of("executeAsync", "runAsync");

  private Executions() {}

  /** Whether the call runs work under a {@code Resilience} policy or a {@code PolicyScope}. */
  static boolean isExecution(ExpressionTree tree) {
    if (!(tree instanceof MethodInvocationTree)) {
      return false;
    }
    MethodSymbol method = ASTHelpers.getSymbol((MethodInvocationTree) tree);
    if (method == null || method.isStatic()) {
      return false;
    }
    String name = method.getSimpleName().toString();
    return (QuellTypes.declaredIn(method, QuellTypes.RESILIENCE) && POLICY_METHODS.contains(name))
        || (QuellTypes.declaredIn(method, QuellTypes.POLICY_SCOPE) && SCOPE_METHODS.contains(name));
  }

  /** Whether the call hands work to a policy that expects a future from it. */
  static boolean isAsyncExecution(ExpressionTree tree) {
    return isExecution(tree)
        && ASYNC_METHODS.contains(ASTHelpers.getSymbol((MethodInvocationTree) tree).getSimpleName().toString());
  }

  /** The policy an execution runs under, as far as it is known; null when it never exists. */
  static PolicyModel.@Nullable Policy policyOf(MethodInvocationTree execution, VisitorState state) {
    ExpressionTree receiver = ASTHelpers.getReceiver(execution);
    if (receiver == null) {
      return PolicyModel.Policy.unknown();
    }
    MethodSymbol method = ASTHelpers.getSymbol(execution);
    return QuellTypes.declaredIn(method, QuellTypes.POLICY_SCOPE)
        ? PolicyModel.evaluateScopeTemplate(receiver, state)
        : PolicyModel.evaluate(receiver, state);
  }

  /** The work argument: the last one (a scope's calls take the key first). */
  static ExpressionTree work(MethodInvocationTree execution) {
    return execution.getArguments().get(execution.getArguments().size() - 1);
  }
}
