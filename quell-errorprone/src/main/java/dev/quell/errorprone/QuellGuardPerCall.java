package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.WARNING;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.bugpatterns.BugChecker.NewClassTreeMatcher;
import com.google.errorprone.fixes.SuggestedFix;
import com.google.errorprone.fixes.SuggestedFixes;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.tools.javac.code.Flags;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.ClassSymbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Symbol.VarSymbol;
import com.sun.tools.javac.code.Type;
import com.sun.tools.javac.code.TypeTag;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.lang.model.element.ElementKind;
import org.jspecify.annotations.Nullable;

/**
 * A guard (a policy with its own automatic budget, circuit breaker or latency histogram, a retry
 * budget, a scope, a breaker, a limiter, a resilient client) built inside code that runs per call,
 * and used only there: it starts fresh on every call, so it bounds nothing. {@code policy.once()}
 * is not a guard of its own: it is the same instance, sharing everything live.
 *
 * <p>Reported only when the guard provably lives for one call: it is used right where it is built,
 * or kept in a local variable that is only used (never returned, stored or handed to code the
 * check does not know). Constructors, initializers, {@code main} and test methods are not per call.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "A retry budget, policy, scope, breaker, limiter or resilient client is built per call,"
        + " so it starts fresh every time and bounds nothing; keep it in a field",
    severity = WARNING,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellguardpercall")
public final class QuellGuardPerCall extends BugChecker implements MethodInvocationTreeMatcher, NewClassTreeMatcher {
  private static final long serialVersionUID = 1L;
  private static final int MAX_DEPTH = 16;

  /** How a guard's value is used after it is built. */
  private enum Use { ESCAPES, DIRECT, WRAPPED }

  /** What kind of guard a creation builds, and what building it per call costs. */
  private static final class Kind {
    final String noun;
    final String consequence;
    final String fieldName;
    final boolean policy;

    Kind(String noun, String consequence, String fieldName) {
      this(noun, consequence, fieldName, false);
    }

    Kind(String noun, String consequence, String fieldName, boolean policy) {
      this.noun = noun;
      this.consequence = consequence;
      this.fieldName = fieldName;
      this.policy = policy;
    }
  }

  private static final Kind POLICY = new Kind("policy",
      "each call gets a new automatic retry budget, full, so the budget never refuses a retry and retries are"
          + " bounded only by attempts", "POLICY", true);
  private static final Kind POLICY_BREAKER = new Kind("policy",
      "each call gets a new circuit breaker of its own (withBreaker(CircuitBreaker.Config)), which never sees"
          + " more than one call, so it can never open", "POLICY", true);
  private static final Kind POLICY_HISTOGRAM = new Kind("policy",
      "each call gets a new latency histogram of its own (measured timing, or a hedge at a measured quantile),"
          + " which never gathers enough samples, so the measured timeout or hedge delay is never used", "POLICY", true);
  private static final Kind BUDGET = new Kind("retry budget",
      "each call starts with a full bucket, so the budget never refuses a retry", "RETRY_BUDGET");
  private static final Kind SCOPE = new Kind("policy scope",
      "its per-key budgets start full on every call and never refuse a retry", "SCOPE");
  private static final Kind BREAKER = new Kind("circuit breaker",
      "it never sees more than one call, so it can never open", "BREAKER");
  private static final Kind LIMITER = new Kind("limiter",
      "each call gets a fresh allowance, so nothing is ever limited", "LIMITER");
  private static final Kind HTTP_CLIENT = new Kind("resilient HTTP client",
      "its per-host budgets and breakers start fresh on every call and bound nothing", "CLIENT");
  private static final Kind OKHTTP = new Kind("OkHttp interceptor",
      "its per-host budgets and breakers start fresh on every call and bound nothing", "INTERCEPTOR");
  private static final Kind GRPC = new Kind("gRPC interceptor",
      "its per-service budgets and breakers start fresh on every call and bound nothing", "INTERCEPTOR");

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    Kind kind = creation(tree, state);
    return kind == null ? Description.NO_MATCH : check(tree, kind, state);
  }

  @Override
  public Description matchNewClass(NewClassTree tree, VisitorState state) {
    Type type = ASTHelpers.getType(tree);
    boolean grpc = type != null && type.tsym.getQualifiedName().contentEquals(QuellTypes.GRPC_INTERCEPTOR);
    return grpc ? check(tree, GRPC, state) : Description.NO_MATCH;
  }

  private static @Nullable Kind creation(MethodInvocationTree tree, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(tree);
    if (method == null) {
      return null;
    }
    String name = method.getSimpleName().toString();
    if (method.isStatic()) {
      String owner = method.owner.getQualifiedName().toString();
      switch (owner) {
        case QuellTypes.RETRY_BUDGET:
          return Set.of("of", "feedback", "replenishing", "concurrent").contains(name) ? BUDGET : null;
        case QuellTypes.POLICY_SCOPE:
          return name.equals("of") ? SCOPE : null;
        case QuellTypes.CIRCUIT_BREAKER:
          return name.equals("of") ? BREAKER : null;
        case QuellTypes.LIMITER:
          return Set.of("rate", "concurrency", "adaptive").contains(name) ? LIMITER : null;
        case QuellTypes.HTTP_CLIENT:
          return name.equals("of") ? HTTP_CLIENT : null;
        case QuellTypes.OKHTTP:
          return name.equals("interceptor") ? OKHTTP : null;
        case QuellTypes.GRPC_INTERCEPTOR:
          return QuellTypes.isA(method.getReturnType(), QuellTypes.GRPC_INTERCEPTOR, state) ? GRPC : null;
        default:
          return null;
      }
    }
    if (name.equals("withScopeKey") || name.equals("withMaxKeys")) {
      // a copy of a client or interceptor with fresh per-host budgets and breakers
      if (QuellTypes.declaredIn(method, QuellTypes.HTTP_CLIENT)) {
        return HTTP_CLIENT;
      }
      if (QuellTypes.declaredIn(method, QuellTypes.OKHTTP_INTERCEPTOR)) {
        return OKHTTP;
      }
    }
    if ((name.equals("withClassifier") || name.equals("withDeadlineSlack"))
        && QuellTypes.declaredIn(method, QuellTypes.GRPC_INTERCEPTOR)) {
      return GRPC; // a copy of the interceptor with fresh budgets and breakers
    }
    if (!PolicyModel.isStep(tree) || !PolicyModel.isChainEnd(state.getPath())) {
      return null; // once() is no step: it is the same instance, and shares its budget, breaker and histogram
    }
    PolicyModel.Policy policy = PolicyModel.evaluate(tree, state);
    if (policy == null || policy.viaLocal) {
      return null; // a chain from a local is reported where the local is built
    }
    return policy.ownsAutomaticBudget() ? POLICY
        : policy.ownsBreaker() ? POLICY_BREAKER
        : policy.ownsHistogram() ? POLICY_HISTOGRAM
        : null;
  }


  private Description check(ExpressionTree tree, Kind kind, VisitorState state) {
    if (Contexts.site(state.getPath(), state) != Contexts.Site.PER_CALL) {
      return Description.NO_MATCH;
    }
    Use use = use(state.getPath(), state, 0);
    if (use == Use.ESCAPES || (kind.policy && use == Use.WRAPPED)) {
      return Description.NO_MATCH; // a policy handed to a scope or client is reported as that scope or client
    }
    Description.Builder description = buildDescription(tree).setMessage(
        "This " + kind.noun + " is built on every call and used only there: " + kind.consequence
            + ". Build it once and keep it in a field.");
    SuggestedFix fix = hoist(tree, kind, state);
    if (fix != null) {
      description.addFix(fix);
    }
    return description.build();
  }

  // ---------------------------------------------------------------- does the value outlive the call?

  private static Use use(TreePath path, VisitorState state, int depth) {
    if (depth > MAX_DEPTH) {
      return Use.ESCAPES;
    }
    TreePath parentPath = path.getParentPath();
    Tree leaf = path.getLeaf();
    Tree parent = parentPath.getLeaf();
    switch (parent.getKind()) {
      case PARENTHESIZED:
      case TYPE_CAST:
        return use(parentPath, state, depth + 1);
      case MEMBER_SELECT: {
        TreePath grandPath = parentPath.getParentPath();
        Tree grand = grandPath.getLeaf();
        if (grand instanceof MethodInvocationTree && ((MethodInvocationTree) grand).getMethodSelect() == parent) {
          Type result = ASTHelpers.getType(grand);
          // a call that returns another guard (a step, scope.policy(key), client.newBuilder()) passes it on
          return QuellTypes.isHolder(result, state) ? use(grandPath, state, depth + 1) : Use.DIRECT;
        }
        return Use.ESCAPES;
      }
      case METHOD_INVOCATION:
      case NEW_CLASS: {
        boolean argument = parent instanceof MethodInvocationTree
            ? ((MethodInvocationTree) parent).getArguments().contains(leaf)
            : ((NewClassTree) parent).getArguments().contains(leaf);
        if (argument && QuellTypes.wrapsArguments((ExpressionTree) parent, state)) {
          Use outer = use(parentPath, state, depth + 1);
          return outer == Use.ESCAPES ? Use.ESCAPES : Use.WRAPPED;
        }
        return Use.ESCAPES;
      }
      case VARIABLE:
        return localUses((VariableTree) parent, parentPath, state, depth);
      default:
        return Use.ESCAPES;
    }
  }

  /** How a local variable's value is used: every use must be a plain use, in the same body. */
  private static Use localUses(VariableTree variable, TreePath variablePath, VisitorState state, int depth) {
    Symbol symbol = ASTHelpers.getSymbol(variable);
    if (symbol == null || symbol.getKind() != ElementKind.LOCAL_VARIABLE || !ASTHelpers.isConsideredFinal(symbol)) {
      return Use.ESCAPES;
    }
    TreePath scope = variablePath.getParentPath();
    List<TreePath> uses = usesOf(symbol, scope);
    if (uses.isEmpty()) {
      return Use.ESCAPES;
    }
    Use result = Use.DIRECT;
    for (TreePath usePath : uses) {
      if (crossesBoundary(usePath, scope.getLeaf())) {
        return Use.ESCAPES; // captured by a lambda or class that may run after this call
      }
      Use use = use(usePath, state, depth + 1);
      if (use == Use.ESCAPES) {
        return Use.ESCAPES;
      }
      if (use == Use.WRAPPED) {
        result = Use.WRAPPED;
      }
    }
    return result;
  }

  private static List<TreePath> usesOf(Symbol symbol, TreePath scope) {
    List<TreePath> uses = new ArrayList<>();
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitIdentifier(IdentifierTree node, Void unused) {
        if (symbol.equals(ASTHelpers.getSymbol(node))) {
          uses.add(getCurrentPath());
        }
        return null;
      }
    }.scan(scope, null);
    return uses;
  }

  private static boolean crossesBoundary(TreePath use, Tree scope) {
    for (TreePath p = use; p != null && p.getLeaf() != scope; p = p.getParentPath()) {
      Tree leaf = p.getLeaf();
      if (leaf instanceof LambdaExpressionTree || leaf instanceof ClassTree) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- the fix: hoist to a field

  private static @Nullable SuggestedFix hoist(ExpressionTree creation, Kind kind, VisitorState state) {
    ClassTree enclosing = ASTHelpers.findEnclosingNode(state.getPath(), ClassTree.class);
    ClassSymbol owner = enclosing == null ? null : ASTHelpers.getSymbol(enclosing);
    if (owner == null || owner.getSimpleName().isEmpty() || owner.isInterface() || owner.isAnonymous()
        || !(owner.owner.getKind() == ElementKind.PACKAGE || owner.isStatic())) {
      return null; // only classes that can hold a private static field in any Java version
    }
    Type type = ASTHelpers.getType(creation);
    if (type == null || mentionsTypeVariable(type) || !constantExpression(creation, state)) {
      return null;
    }
    SuggestedFix.Builder fix = SuggestedFix.builder();
    Set<String> taken = memberNames(enclosing);
    Tree parent = state.getPath().getParentPath().getLeaf();
    String field;
    String typeSource;
    if (parent instanceof VariableTree && ((VariableTree) parent).getInitializer() == creation) {
      VariableTree local = (VariableTree) parent;
      field = unique(constantName(local.getName().toString()), taken);
      typeSource = ASTHelpers.hasImplicitType(local, state)
          ? SuggestedFixes.prettyType(state, fix, type) : state.getSourceForNode(local.getType());
      Symbol symbol = ASTHelpers.getSymbol(local);
      for (TreePath use : usesOf(symbol, state.getPath().getParentPath().getParentPath())) {
        fix.replace(use.getLeaf(), field);
      }
      fix.delete(local);
    } else {
      String base = kind.fieldName;
      if (kind.policy) {
        PolicyModel.Policy policy = PolicyModel.evaluate(creation, state);
        if (policy != null && policy.nameKnown && policy.name != null && !constantName(policy.name).isEmpty()
            && !Set.of("default", "http", "none").contains(policy.name)) { // a preset's name says nothing
          base = constantName(policy.name);
        }
      }
      field = unique(base, taken);
      typeSource = SuggestedFixes.prettyType(state, fix, type);
      fix.replace(creation, field);
    }
    fix.merge(SuggestedFixes.addMembers(enclosing, state, SuggestedFixes.AdditionPosition.LAST,
        "private static final " + typeSource + " " + field + " = " + state.getSourceForNode(creation) + ";"));
    fix.setShortDescription("keep the " + kind.noun + " in a private static final field");
    return fix.build();
  }

  private static boolean mentionsTypeVariable(Type type) {
    if (type.hasTag(TypeTag.TYPEVAR)) {
      return true;
    }
    for (Type argument : type.getTypeArguments()) {
      if (mentionsTypeVariable(argument)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether evaluating the expression once, when the class initializes, gives what evaluating it
   * per call gives: it reads no local, parameter, instance member or mutable field, and outside
   * lambdas calls only Quell, {@code java.time} and {@code java.lang} value methods.
   */
  private static boolean constantExpression(ExpressionTree expression, VisitorState state) {
    Set<Symbol> declaredInside = new HashSet<>();
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitVariable(VariableTree node, Void unused) {
        declaredInside.add(ASTHelpers.getSymbol(node));
        return super.visitVariable(node, null);
      }
    }.scan(new TreePath(state.getPath(), expression), null);
    boolean[] ok = {true};
    new TreePathScanner<Void, Boolean>() {
      @Override
      public Void visitLambdaExpression(LambdaExpressionTree node, Boolean inLambda) {
        return super.visitLambdaExpression(node, true);
      }

      @Override
      public Void visitIdentifier(IdentifierTree node, Boolean inLambda) {
        Symbol symbol = ASTHelpers.getSymbol(node);
        if (symbol == null) {
          return null;
        }
        if (node.getName().contentEquals("this") || node.getName().contentEquals("super")) {
          ok[0] = false;
        } else if (symbol instanceof VarSymbol) {
          boolean local = symbol.getKind() != ElementKind.FIELD && symbol.getKind() != ElementKind.ENUM_CONSTANT;
          if (local ? !declaredInside.contains(symbol) : !(symbol.isStatic() && (symbol.flags() & Flags.FINAL) != 0)) {
            ok[0] = false;
          }
        } else if (symbol instanceof MethodSymbol && !symbol.isStatic()) {
          ok[0] = false; // an unqualified instance method: reads this object
        } else if (symbol instanceof MethodSymbol && !inLambda && !valueMethod(symbol)) {
          ok[0] = false;
        }
        return null;
      }

      @Override
      public Void visitMethodInvocation(MethodInvocationTree node, Boolean inLambda) {
        if (!inLambda && !valueMethod(ASTHelpers.getSymbol(node))) {
          ok[0] = false;
        }
        return super.visitMethodInvocation(node, inLambda);
      }

      @Override
      public Void visitNewClass(NewClassTree node, Boolean inLambda) {
        if (!inLambda && (node.getClassBody() != null || !valueMethod(ASTHelpers.getSymbol(node)))) {
          ok[0] = false;
        }
        return super.visitNewClass(node, inLambda);
      }

      @Override
      public Void visitMemberSelect(MemberSelectTree node, Boolean inLambda) {
        Symbol symbol = ASTHelpers.getSymbol(node);
        if (symbol instanceof VarSymbol && symbol.getKind() == ElementKind.FIELD
            && !(symbol.isStatic() && (symbol.flags() & Flags.FINAL) != 0)) {
          ok[0] = false; // a mutable or instance field: its value when the class initializes may differ
        }
        return super.visitMemberSelect(node, inLambda);
      }
    }.scan(new TreePath(state.getPath(), expression), false);
    return ok[0];
  }

  /** Methods whose result depends only on their arguments (or that build Quell configuration). */
  private static boolean valueMethod(@Nullable Symbol method) {
    if (method == null) {
      return false;
    }
    if (QuellTypes.declaredInQuell(method)) {
      return true;
    }
    String pkg = method.packge().getQualifiedName().toString();
    if (pkg.equals("java.time") || pkg.equals("java.time.temporal")) {
      return true;
    }
    String owner = method.owner.getQualifiedName().toString();
    return Set.of("java.lang.String", "java.lang.Math", "java.lang.StrictMath", "java.lang.Integer", "java.lang.Long",
        "java.lang.Double", "java.lang.Boolean", "java.util.List", "java.util.Set", "java.util.Map").contains(owner);
  }

  private static Set<String> memberNames(ClassTree enclosing) {
    Set<String> names = new HashSet<>();
    for (Tree member : enclosing.getMembers()) {
      if (member instanceof VariableTree) {
        names.add(((VariableTree) member).getName().toString());
      }
    }
    return names;
  }

  private static String unique(String base, Set<String> taken) {
    String name = base;
    for (int i = 2; taken.contains(name); i++) {
      name = base + "_" + i;
    }
    return name;
  }

  /** {@code inventoryPolicy} and {@code "inventory-api"} become {@code INVENTORY_POLICY} and {@code INVENTORY_API}. */
  static String constantName(String name) {
    StringBuilder out = new StringBuilder();
    char previous = '_';
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isLetterOrDigit(c) && c < 128) {
        if (Character.isUpperCase(c) && Character.isLowerCase(previous)) {
          out.append('_');
        }
        if (out.length() == 0 && Character.isDigit(c)) {
          out.append('_');
        }
        out.append(Character.toUpperCase(c));
      } else if (out.length() > 0 && out.charAt(out.length() - 1) != '_') {
        out.append('_');
      }
      previous = c;
    }
    while (out.length() > 0 && out.charAt(out.length() - 1) == '_') {
      out.setLength(out.length() - 1);
    }
    return out.toString().toUpperCase(Locale.ROOT);
  }
}
