package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.NewClassTree;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Type;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The Quell types the checks know, by fully qualified name, so that a check works whether or not
 * the type exists in the version of Quell being compiled against (a missing type matches nothing).
 */
final class QuellTypes {
  static final String RESILIENCE = "dev.quell.Resilience";
  static final String SETTINGS = "dev.quell.Resilience.Settings";
  static final String RETRY_BUDGET = "dev.quell.RetryBudget";
  static final String POLICY_SCOPE = "dev.quell.PolicyScope";
  static final String OUTCOME = "dev.quell.Outcome";
  static final String BACKOFF = "dev.quell.Backoff";
  static final String EXPONENTIAL = "dev.quell.Backoff.Exponential";
  static final String CIRCUIT_BREAKER = "dev.quell.CircuitBreaker";
  static final String BREAKER_CONFIG = "dev.quell.CircuitBreaker.Config";
  static final String BREAKER_SETTINGS = "dev.quell.CircuitBreaker.Config.Settings";
  static final String LIMITER = "dev.quell.Limiter";
  static final String ADAPTIVE_CONFIG = "dev.quell.Limiter.AdaptiveConfig";
  static final String HEDGE = "dev.quell.Hedge";
  static final String MEASURED_TIMING = "dev.quell.MeasuredTiming";
  static final String HTTP_CLIENT = "dev.quell.http.ResilientHttpClient";
  static final String OKHTTP = "dev.quell.okhttp.QuellOkHttp";
  static final String OKHTTP_INTERCEPTOR = "dev.quell.okhttp.QuellInterceptor";
  static final String GRPC_INTERCEPTOR = "dev.quell.grpc.ResilienceInterceptor";

  /**
   * Types whose instances hold a guard's live state, or carry a guard handed to them: a value of
   * one of these built per call means the guard inside it lives for one call.
   */
  private static final List<String> HOLDERS = List.of(
      RESILIENCE, RETRY_BUDGET, POLICY_SCOPE, CIRCUIT_BREAKER, LIMITER, HTTP_CLIENT, OKHTTP_INTERCEPTOR, GRPC_INTERCEPTOR,
      // what the integrations are plugged into, when built around a guard
      "okhttp3.Interceptor", "okhttp3.OkHttpClient", "okhttp3.OkHttpClient.Builder",
      "io.grpc.ClientInterceptor", "io.grpc.Channel", "io.grpc.ManagedChannelBuilder", "io.grpc.stub.AbstractStub");

  /** Methods of other libraries known to keep their argument only in the value they return. */
  private static final Set<String> WRAPPING_METHODS = Set.of(
      "okhttp3.OkHttpClient.Builder#addInterceptor", "okhttp3.OkHttpClient.Builder#addNetworkInterceptor",
      "io.grpc.ClientInterceptors#intercept", "io.grpc.ClientInterceptors#interceptForward",
      "io.grpc.stub.AbstractStub#withInterceptors", "io.grpc.ManagedChannelBuilder#intercept");

  private QuellTypes() {}

  /** Whether {@code type} is {@code fqn} or a subtype of it; false when {@code fqn} is not on the classpath. */
  static boolean isA(@Nullable Type type, String fqn, VisitorState state) {
    if (type == null) {
      return false;
    }
    Type target = state.getTypeFromString(fqn);
    return target != null && ASTHelpers.isSubtype(type, target, state);
  }

  /** Whether the symbol is declared directly in the class {@code fqn}. */
  static boolean declaredIn(@Nullable Symbol symbol, String fqn) {
    return symbol != null && symbol.owner != null && symbol.owner.getQualifiedName().contentEquals(fqn);
  }

  /** Whether the symbol is declared in a Quell package. */
  static boolean declaredInQuell(@Nullable Symbol symbol) {
    if (symbol == null) {
      return false;
    }
    Symbol.PackageSymbol pkg = symbol.packge();
    String name = pkg == null ? "" : pkg.getQualifiedName().toString();
    return name.equals("dev.quell") || name.startsWith("dev.quell.");
  }

  /** The invoked method, for a call to {@code fqn#name} (declared there, or inherited and called on it). */
  static boolean isCall(ExpressionTree tree, String fqn, String... names) {
    if (!(tree instanceof MethodInvocationTree)) {
      return false;
    }
    MethodSymbol method = ASTHelpers.getSymbol((MethodInvocationTree) tree);
    if (method == null || !declaredIn(method, fqn)) {
      return false;
    }
    for (String name : names) {
      if (method.getSimpleName().contentEquals(name)) {
        return true;
      }
    }
    return names.length == 0;
  }

  static boolean isHolder(@Nullable Type type, VisitorState state) {
    for (String holder : HOLDERS) {
      if (isA(type, holder, state)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a call keeps its arguments only inside the value it returns: a Quell method or
   * constructor that returns a holder ({@code withBudget}, {@code PolicyScope.of}, an HTTP client
   * built around a policy...), or one of the few known wrapping methods of OkHttp and gRPC.
   */
  static boolean wrapsArguments(ExpressionTree call, VisitorState state) {
    MethodSymbol method = call instanceof MethodInvocationTree
        ? ASTHelpers.getSymbol((MethodInvocationTree) call)
        : call instanceof NewClassTree ? ASTHelpers.getSymbol((NewClassTree) call) : null;
    if (method == null) {
      return false;
    }
    Type produced = method.isConstructor() ? method.owner.type : method.getReturnType();
    if (declaredInQuell(method)) {
      return isHolder(produced, state);
    }
    return WRAPPING_METHODS.contains(method.owner.getQualifiedName() + "#" + method.getSimpleName());
  }
}
