package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Calls that run work under a policy: {@code execute}, {@code run} and their async forms. */
final class Executions {
  private static final Set<String> POLICY_METHODS = Set.of("execute", "run", "executeAsync", "runAsync");
  private static final Set<String> SCOPE_METHODS = Set.of("execute", "run", "executeAsync");
  private static final Set<String> ASYNC_METHODS = Set.of("executeAsync", "runAsync");

  private static final int MAX_DEPTH = 8;

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

  /**
   * The policy a request through one of Quell's clients runs under, when the call is such a
   * request: {@code ResilientHttpClient.send}, or OkHttp's {@code Call.execute()} on a client built
   * (in this file) with Quell's interceptor. Null for any other call, or a client not traced here.
   */
  static PolicyModel.@Nullable Policy requestPolicy(MethodInvocationTree call, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    ExpressionTree receiver = ASTHelpers.getReceiver(call);
    if (method == null || receiver == null) {
      return null;
    }
    String name = method.getSimpleName().toString();
    if (QuellTypes.declaredIn(method, QuellTypes.HTTP_CLIENT) && name.equals("send")) {
      return httpClientPolicy(receiver, state, 0);
    }
    if (name.equals("execute") && method.owner.getQualifiedName().contentEquals("okhttp3.Call")
        && QuellTypes.isCall(ASTHelpers.stripParentheses(receiver), "okhttp3.OkHttpClient", "newCall")) {
      ExpressionTree client = ASTHelpers.getReceiver(ASTHelpers.stripParentheses(receiver));
      return client == null ? null : okHttpPolicy(client, state, 0);
    }
    return null;
  }

  private static PolicyModel.@Nullable Policy httpClientPolicy(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (QuellTypes.isCall(e, QuellTypes.HTTP_CLIENT, "of")) {
      List<? extends ExpressionTree> args = ((MethodInvocationTree) e).getArguments();
      return args.size() == 1 ? PolicyModel.httpPreset() : PolicyModel.evaluate(args.get(1), state);
    }
    if (QuellTypes.isCall(e, QuellTypes.HTTP_CLIENT, "withScopeKey", "withMaxKeys")) {
      ExpressionTree receiver = ASTHelpers.getReceiver(e);
      return receiver == null ? null : httpClientPolicy(receiver, state, depth + 1);
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? null : httpClientPolicy(initializer, state, depth + 1);
  }

  /** The policy of the Quell interceptor an OkHttp client's builder chain adds. */
  private static PolicyModel.@Nullable Policy okHttpPolicy(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      String owner = method == null ? "" : method.owner.getQualifiedName().toString();
      if (!owner.equals("okhttp3.OkHttpClient") && !owner.equals("okhttp3.OkHttpClient.Builder")) {
        return null;
      }
      if (method.getSimpleName().contentEquals("addInterceptor") && call.getArguments().size() == 1) {
        PolicyModel.Policy policy = interceptorPolicy(call.getArguments().get(0), state, depth + 1);
        if (policy != null) {
          return policy;
        }
      }
      ExpressionTree receiver = ASTHelpers.getReceiver(call);
      return receiver == null ? null : okHttpPolicy(receiver, state, depth + 1);
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? null : okHttpPolicy(initializer, state, depth + 1);
  }

  private static PolicyModel.@Nullable Policy interceptorPolicy(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (QuellTypes.isCall(e, QuellTypes.OKHTTP, "interceptor")) {
      List<? extends ExpressionTree> args = ((MethodInvocationTree) e).getArguments();
      return args.isEmpty() ? PolicyModel.httpPreset() : PolicyModel.evaluate(args.get(0), state);
    }
    if (QuellTypes.isCall(e, QuellTypes.OKHTTP_INTERCEPTOR, "withScopeKey", "withMaxKeys")) {
      ExpressionTree receiver = ASTHelpers.getReceiver(e);
      return receiver == null ? null : interceptorPolicy(receiver, state, depth + 1);
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? null : interceptorPolicy(initializer, state, depth + 1);
  }
}
