package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The least time a backoff makes the first retry wait, whatever its jitter draws, worked out from
 * constants: {@code Backoff.NONE}, {@code Backoff.constant(d)}, and {@code Backoff.exponential(...)}
 * with its {@code with…} steps (the smaller of the two bases, capped by the maximum: exactly that
 * with {@code Jitter.NONE}, half of it with {@code Jitter.EQUAL}, nothing with the default
 * {@code Jitter.FULL}). Unknown is null.
 */
final class Backoffs {
  private static final int MAX_DEPTH = 8;

  private Backoffs() {}

  static @Nullable Duration firstWait(ExpressionTree expression, VisitorState state) {
    Exponential e = evaluate(expression, state, 0);
    return e == null ? null : e.firstWait();
  }

  /** What is known of a backoff: the bases, the maximum and the jitter (a constant is NONE jitter, equal bases). */
  private record Exponential(@Nullable Duration transientBase, @Nullable Duration throttledBase,
      @Nullable Duration max, @Nullable String jitter) {
    @Nullable Duration firstWait() {
      if (transientBase == null || throttledBase == null || max == null || jitter == null) {
        return "FULL".equals(jitter) ? Duration.ZERO : null;
      }
      Duration base = transientBase.compareTo(throttledBase) <= 0 ? transientBase : throttledBase;
      Duration capped = base.compareTo(max) <= 0 ? base : max;
      switch (jitter) {
        case "NONE": return capped;
        case "EQUAL": return capped.dividedBy(2);
        default: return Duration.ZERO;
      }
    }
  }

  private static @Nullable Exponential evaluate(ExpressionTree expression, VisitorState state, int depth) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (Values.isStaticField(e, QuellTypes.BACKOFF, "NONE")) {
      return new Exponential(Duration.ZERO, Duration.ZERO, Duration.ZERO, "NONE");
    }
    if (e instanceof MethodInvocationTree) {
      MethodInvocationTree call = (MethodInvocationTree) e;
      MethodSymbol method = ASTHelpers.getSymbol(call);
      if (method == null) {
        return null;
      }
      String name = method.getSimpleName().toString();
      List<? extends ExpressionTree> args = call.getArguments();
      if (QuellTypes.declaredIn(method, QuellTypes.BACKOFF) && method.isStatic()) {
        Duration max = Duration.ofSeconds(30);
        switch (name + "/" + args.size()) {
          case "constant/1": {
            Duration d = Values.duration(args.get(0), state).orElse(null);
            return new Exponential(d, d, d, "NONE");
          }
          case "exponential/0":
            return new Exponential(Duration.ofMillis(100), Duration.ofSeconds(1), max, "FULL");
          case "exponential/1": {
            Duration d = Values.duration(args.get(0), state).orElse(null);
            return new Exponential(d, d, max, "FULL");
          }
          case "exponential/4":
            return new Exponential(Values.duration(args.get(0), state).orElse(null),
                Values.duration(args.get(1), state).orElse(null), Values.duration(args.get(3), state).orElse(null), "FULL");
          default:
            return null;
        }
      }
      if (QuellTypes.declaredIn(method, QuellTypes.EXPONENTIAL) && !method.isStatic() && args.size() == 1) {
        ExpressionTree receiver = ASTHelpers.getReceiver(call);
        Exponential before = receiver == null ? null : evaluate(receiver, state, depth + 1);
        if (before == null) {
          return null;
        }
        Duration d = Values.duration(args.get(0), state).orElse(null);
        switch (name) {
          case "withTransientBase": return new Exponential(d, before.throttledBase(), before.max(), before.jitter());
          case "withThrottledBase": return new Exponential(before.transientBase(), d, before.max(), before.jitter());
          case "withMax": return new Exponential(before.transientBase(), before.throttledBase(), d, before.jitter());
          case "withFactor": return before; // the first retry waits the base: the factor starts at the second
          case "withJitter": return new Exponential(before.transientBase(), before.throttledBase(), before.max(),
              jitter(args.get(0)).orElse(null));
          default: return null;
        }
      }
      return null;
    }
    ExpressionTree initializer = Values.initializerOf(e, state);
    return initializer == null ? null : evaluate(initializer, state, depth + 1);
  }

  private static Optional<String> jitter(ExpressionTree expression) {
    for (String mode : List.of("FULL", "EQUAL", "NONE")) {
      if (Values.isStaticField(expression, "dev.quell.Jitter", mode)) {
        return Optional.of(mode);
      }
    }
    return Optional.empty();
  }
}
