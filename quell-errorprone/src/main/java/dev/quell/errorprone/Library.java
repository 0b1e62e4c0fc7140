package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import dev.quell.Hedge;
import org.jspecify.annotations.Nullable;

/**
 * Values built by the library itself, at compile time, from constants in the code: a diagnostic
 * then shows a value the way the library shows it (its own {@code toString}), not a copy of that
 * wording. quell-core comes onto the processor path with this module; without it (or with a version
 * that lacks a method) the answer is null and the check falls back to the source text.
 */
final class Library {
  private static final int MAX_DEPTH = 8;

  private Library() {}

  /** The hedge {@code expression} builds, as {@code Hedge.toString()} writes it; null when not known. */
  static @Nullable String hedge(ExpressionTree expression, VisitorState state) {
    try {
      Hedge hedge = buildHedge(expression, state, 0);
      return hedge == null ? null : hedge.toString();
    } catch (LinkageError | RuntimeException e) {
      return null; // no quell-core on the processor path, another version of it, or a value it refuses
    }
  }

  private static @Nullable Hedge buildHedge(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (!(e instanceof MethodInvocationTree)) {
      ExpressionTree initializer = Values.initializerOf(e, state);
      return initializer == null ? null : buildHedge(initializer, state, depth + 1);
    }
    MethodInvocationTree call = (MethodInvocationTree) e;
    MethodSymbol method = ASTHelpers.getSymbol(call);
    if (method == null || !QuellTypes.declaredIn(method, QuellTypes.HEDGE) || call.getArguments().size() != 1) {
      return null;
    }
    ExpressionTree arg = call.getArguments().get(0);
    String name = method.getSimpleName().toString();
    if (method.isStatic()) {
      switch (name) {
        case "after": return Values.duration(arg, state).map(Hedge::after).orElse(null);
        case "maxExtraLoad": return Values.doubleValue(arg, state).map(Hedge::maxExtraLoad).orElse(null);
        default: return null;
      }
    }
    ExpressionTree receiver = ASTHelpers.getReceiver(call);
    Hedge before = receiver == null ? null : buildHedge(receiver, state, depth + 1);
    if (before == null) {
      return null;
    }
    switch (name) {
      case "withMaxHedges": return Values.longValue(arg, state).map(n -> before.withMaxHedges(n.intValue())).orElse(null);
      case "withFloor": return Values.duration(arg, state).map(before::withFloor).orElse(null);
      case "withRetries": return Values.booleanValue(arg, state).map(before::withRetries).orElse(null);
      default: return null; // an executor, or a step this version does not know: not built here
    }
  }
}
