package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TypeCastTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreeScanner;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Symbol.VarSymbol;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import javax.lang.model.element.ElementKind;
import org.jspecify.annotations.Nullable;

/**
 * Works out values from the code at hand: compile-time constants, {@code Duration} factories over
 * constants, and final variables (fields of this file, effectively final locals) whose initializer
 * is such a value. Anything else is unknown, and unknown is never guessed.
 */
final class Values {
  /** How far to follow variables to their initializers. */
  private static final int MAX_DEPTH = 8;

  private static final Map<CompilationUnitTree, Map<Symbol, VariableTree>> DECLARATIONS = new WeakHashMap<>();

  private Values() {}

  /** The declaration of a variable in the file being compiled, or null when it is declared elsewhere. */
  static @Nullable VariableTree declaration(Symbol symbol, VisitorState state) {
    CompilationUnitTree unit = state.getPath().getCompilationUnit();
    Map<Symbol, VariableTree> index;
    synchronized (DECLARATIONS) {
      index = DECLARATIONS.get(unit);
      if (index == null) {
        Map<Symbol, VariableTree> found = new HashMap<>();
        new TreeScanner<Void, Void>() {
          @Override
          public Void visitVariable(VariableTree tree, Void unused) {
            Symbol s = ASTHelpers.getSymbol(tree);
            if (s != null) {
              found.put(s, tree);
            }
            return super.visitVariable(tree, null);
          }
        }.scan(unit, null);
        index = found;
        DECLARATIONS.put(unit, index);
      }
    }
    return index.get(symbol);
  }

  /**
   * The initializer that always gives this expression's value, when the expression names a final
   * field declared (and initialized) in this file or an effectively final local; otherwise null. A
   * final field with an initializer can never be assigned again, so its initializer is its value.
   */
  static @Nullable ExpressionTree initializerOf(ExpressionTree expression, VisitorState state) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (!(e instanceof IdentifierTree) && !(e instanceof MemberSelectTree)) {
      return null;
    }
    Symbol symbol = ASTHelpers.getSymbol(e);
    if (!(symbol instanceof VarSymbol) || !ASTHelpers.isConsideredFinal(symbol)) {
      return null;
    }
    ElementKind kind = symbol.getKind();
    if (kind != ElementKind.FIELD && kind != ElementKind.LOCAL_VARIABLE) {
      return null;
    }
    VariableTree declaration = declaration(symbol, state);
    return declaration == null ? null : declaration.getInitializer();
  }

  /** The value of a compile-time constant, following final variables of this file. */
  static @Nullable Object constant(ExpressionTree expression, VisitorState state) {
    return constant(expression, state, 0);
  }

  private static @Nullable Object constant(ExpressionTree expression, VisitorState state, int depth) {
    Object value = ASTHelpers.constValue(expression);
    if (value != null || depth > MAX_DEPTH) {
      return value;
    }
    ExpressionTree initializer = initializerOf(expression, state);
    return initializer == null ? null : constant(initializer, state, depth + 1);
  }

  static Optional<Long> longValue(ExpressionTree expression, VisitorState state) {
    Object value = constant(expression, state);
    if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
      return Optional.of(((Number) value).longValue());
    }
    if (value instanceof Character) {
      return Optional.of((long) (Character) value);
    }
    return Optional.empty();
  }

  static Optional<Double> doubleValue(ExpressionTree expression, VisitorState state) {
    Object value = constant(expression, state);
    if (value instanceof Number) {
      return Optional.of(((Number) value).doubleValue());
    }
    if (value instanceof Character) {
      return Optional.of((double) (Character) value);
    }
    return Optional.empty();
  }

  static Optional<Boolean> booleanValue(ExpressionTree expression, VisitorState state) {
    Object value = constant(expression, state);
    return value instanceof Boolean ? Optional.of((Boolean) value) : Optional.empty();
  }

  static Optional<String> stringValue(ExpressionTree expression, VisitorState state) {
    Object value = constant(expression, state);
    return value instanceof String ? Optional.of((String) value) : Optional.empty();
  }

  /** Whether the expression is the literal {@code null}, cast or not ({@code (TimeSource) null}). */
  static boolean isNullLiteral(ExpressionTree expression) {
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    while (e instanceof TypeCastTree) {
      e = ASTHelpers.stripParentheses(((TypeCastTree) e).getExpression());
    }
    return e.getKind() == Tree.Kind.NULL_LITERAL;
  }

  /** Whether the expression names the static field {@code owner.name}. */
  static boolean isStaticField(ExpressionTree expression, String owner, String name) {
    Symbol symbol = ASTHelpers.getSymbol(ASTHelpers.stripParentheses(expression));
    return symbol instanceof VarSymbol && ASTHelpers.isStatic(symbol) && symbol.getSimpleName().contentEquals(name)
        && symbol.owner != null && symbol.owner.getQualifiedName().contentEquals(owner);
  }

  /** The value of a {@code java.time.Duration} expression built from constants. */
  static Optional<Duration> duration(ExpressionTree expression, VisitorState state) {
    try {
      return Optional.ofNullable(duration(expression, state, 0));
    } catch (ArithmeticException | java.time.DateTimeException e) {
      return Optional.empty(); // it would overflow at run time too: that is not the question asked
    }
  }

  private static @Nullable Duration duration(ExpressionTree expression, VisitorState state, int depth) {
    if (depth > MAX_DEPTH) {
      return null;
    }
    ExpressionTree e = ASTHelpers.stripParentheses(expression);
    if (isStaticField(e, "java.time.Duration", "ZERO")) {
      return Duration.ZERO;
    }
    if (e instanceof MethodInvocationTree) {
      return durationCall((MethodInvocationTree) e, state, depth);
    }
    ExpressionTree initializer = initializerOf(e, state);
    return initializer == null ? null : duration(initializer, state, depth + 1);
  }

  private static @Nullable Duration durationCall(MethodInvocationTree call, VisitorState state, int depth) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    if (method == null || !method.owner.getQualifiedName().contentEquals("java.time.Duration")) {
      return null;
    }
    String name = method.getSimpleName().toString();
    List<? extends ExpressionTree> args = call.getArguments();
    if (method.isStatic()) {
      if (name.equals("of") && args.size() == 2) {
        Optional<Long> amount = longValue(args.get(0), state);
        ChronoUnit unit = chronoUnit(args.get(1));
        return amount.isPresent() && unit != null ? Duration.of(amount.get(), unit) : null;
      }
      if (name.equals("ofSeconds") && args.size() == 2) {
        Optional<Long> seconds = longValue(args.get(0), state);
        Optional<Long> nanos = longValue(args.get(1), state);
        return seconds.isPresent() && nanos.isPresent() ? Duration.ofSeconds(seconds.get(), nanos.get()) : null;
      }
      if (args.size() != 1) {
        return null;
      }
      Optional<Long> amount = longValue(args.get(0), state);
      if (amount.isEmpty()) {
        return null;
      }
      long n = amount.get();
      switch (name) {
        case "ofNanos": return Duration.ofNanos(n);
        case "ofMillis": return Duration.ofMillis(n);
        case "ofSeconds": return Duration.ofSeconds(n);
        case "ofMinutes": return Duration.ofMinutes(n);
        case "ofHours": return Duration.ofHours(n);
        case "ofDays": return Duration.ofDays(n);
        default: return null;
      }
    }
    ExpressionTree receiver = ASTHelpers.getReceiver(call);
    Duration base = receiver == null ? null : duration(receiver, state, depth + 1);
    if (base == null) {
      return null;
    }
    if (args.isEmpty()) {
      switch (name) {
        case "negated": return base.negated();
        case "abs": return base.abs();
        default: return null;
      }
    }
    if (args.size() != 1) {
      return null;
    }
    if (name.equals("plus") || name.equals("minus")) {
      Duration other = duration(args.get(0), state, depth + 1);
      if (other == null) {
        return null;
      }
      return name.equals("plus") ? base.plus(other) : base.minus(other);
    }
    Optional<Long> amount = longValue(args.get(0), state);
    if (amount.isEmpty()) {
      return null;
    }
    long n = amount.get();
    switch (name) {
      case "plusNanos": return base.plusNanos(n);
      case "plusMillis": return base.plusMillis(n);
      case "plusSeconds": return base.plusSeconds(n);
      case "plusMinutes": return base.plusMinutes(n);
      case "plusHours": return base.plusHours(n);
      case "plusDays": return base.plusDays(n);
      case "minusNanos": return base.minusNanos(n);
      case "minusMillis": return base.minusMillis(n);
      case "minusSeconds": return base.minusSeconds(n);
      case "minusMinutes": return base.minusMinutes(n);
      case "minusHours": return base.minusHours(n);
      case "minusDays": return base.minusDays(n);
      case "multipliedBy": return base.multipliedBy(n);
      case "dividedBy": return n == 0 ? null : base.dividedBy(n);
      default: return null;
    }
  }

  private static @Nullable ChronoUnit chronoUnit(ExpressionTree expression) {
    Symbol symbol = ASTHelpers.getSymbol(ASTHelpers.stripParentheses(expression));
    if (symbol instanceof VarSymbol && symbol.owner.getQualifiedName().contentEquals("java.time.temporal.ChronoUnit")) {
      try {
        ChronoUnit unit = ChronoUnit.valueOf(symbol.getSimpleName().toString());
        return unit.isDurationEstimated() && unit != ChronoUnit.DAYS ? null : unit; // Duration.of refuses estimated units
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return null;
  }

  /**
   * A duration as Quell's own messages write it: whole milliseconds as "250 ms"; anything negative,
   * finer than a millisecond or too long to count in nanoseconds in ISO form.
   */
  static String render(Duration d) {
    return dev.quell.internal.Problems.duration(d); // the library's own words, from the library
  }

  /** A number as Quell's own messages write it (Java's {@code String.valueOf}). */
  static String render(double d) {
    return String.valueOf(d);
  }
}
