package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.WARNING;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.bugpatterns.BugChecker.NewClassTreeMatcher;
import com.google.errorprone.fixes.Replacements;
import com.google.errorprone.fixes.SuggestedFix;
import com.google.errorprone.fixes.SuggestedFixes;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.BlockTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ConditionalExpressionTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.ParenthesizedTree;
import com.sun.source.tree.ReturnTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TryTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.TreeScanner;
import com.sun.tools.javac.code.Flags;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.ClassSymbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Symbol.VarSymbol;
import com.sun.tools.javac.code.Type;
import com.sun.tools.javac.code.TypeTag;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
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
 * check does not know) — a try-with-resources variable included — chosen by {@code ?:}, or
 * returned by a private helper whose every caller uses it for one call. Constructors, initializers,
 * {@code main} and test methods are not per call.
 *
 * <p>The fix hoists the guard to a {@code private static final} field. Every finding of a file is
 * planned together, so that patch mode, which applies them all at once, gets names that differ and
 * hide nothing, and fields placed where their initializers may read what they read.
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
    Kind kind = reported(tree, state);
    return kind == null ? Description.NO_MATCH : describe(tree, kind, state);
  }

  @Override
  public Description matchNewClass(NewClassTree tree, VisitorState state) {
    Kind kind = reported(tree, state);
    return kind == null ? Description.NO_MATCH : describe(tree, kind, state);
  }

  /** The kind of guard {@code tree} builds, when it is built per call and provably dies with the call. */
  private static @Nullable Kind reported(ExpressionTree tree, VisitorState state) {
    Kind kind;
    if (tree instanceof MethodInvocationTree) {
      kind = creation((MethodInvocationTree) tree, state);
    } else {
      Type type = ASTHelpers.getType(tree);
      kind = type != null && type.tsym.getQualifiedName().contentEquals(QuellTypes.GRPC_INTERCEPTOR) ? GRPC : null;
    }
    if (kind == null || Contexts.site(state.getPath(), state) != Contexts.Site.PER_CALL) {
      return null;
    }
    Use use = use(state.getPath(), state, 0);
    if (use == Use.ESCAPES || (kind.policy && use == Use.WRAPPED)) {
      return null; // a policy handed to a scope or client is reported as that scope or client
    }
    return kind;
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


  private Description describe(ExpressionTree tree, Kind kind, VisitorState state) {
    MethodTree helper = helperReturning(state.getPath());
    String where = helper == null ? "This " + kind.noun + " is built on every call and used only there: "
        : "This " + kind.noun + " is built anew each time " + helper.getName() + "() is called, and every caller uses"
            + " it for that one call only: ";
    Description.Builder description = buildDescription(tree).setMessage(
        where + kind.consequence + ". Build it once and keep it in a field.");
    SuggestedFix fix = fix(tree, kind, state);
    if (fix != null) {
      description.addFix(fix);
    }
    return description.build();
  }

  /** The method whose return statement gives the value at {@code path}, if it is returned. */
  private static @Nullable MethodTree helperReturning(TreePath path) {
    TreePath p = path.getParentPath();
    while (p.getLeaf() instanceof ParenthesizedTree || p.getLeaf() instanceof ConditionalExpressionTree) {
      p = p.getParentPath();
    }
    if (!(p.getLeaf() instanceof ReturnTree)) {
      return null;
    }
    for (TreePath q = p; q != null; q = q.getParentPath()) {
      if (q.getLeaf() instanceof LambdaExpressionTree || q.getLeaf() instanceof ClassTree) {
        return null;
      }
      if (q.getLeaf() instanceof MethodTree) {
        return (MethodTree) q.getLeaf();
      }
    }
    return null;
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
      case CONDITIONAL_EXPRESSION:
        // chosen per call by ?: — either branch is the value the conditional gives
        return ((ConditionalExpressionTree) parent).getCondition() == leaf ? Use.ESCAPES : use(parentPath, state, depth + 1);
      case TRY:
        // try (client) { ... } of Java 9: closed at the end of the block, so it dies there
        return ((TryTree) parent).getResources().contains(leaf) ? Use.DIRECT : Use.ESCAPES;
      case RETURN:
        return returnedUse(parentPath, state, depth);
      default:
        return Use.ESCAPES;
    }
  }

  /** How a local variable's value is used: every use must be a plain use, in the same body. */
  private static Use localUses(VariableTree variable, TreePath variablePath, VisitorState state, int depth) {
    Symbol symbol = ASTHelpers.getSymbol(variable);
    boolean local = symbol != null
        && (symbol.getKind() == ElementKind.LOCAL_VARIABLE || symbol.getKind() == ElementKind.RESOURCE_VARIABLE);
    if (!local || !ASTHelpers.isConsideredFinal(symbol)) {
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

  /**
   * A value returned by a private method dies with the call when every caller in the file uses it
   * only for that call, and at least one caller runs per request: a helper that builds a fresh
   * policy for each caller. A method others can call or override is out of sight.
   */
  private static Use returnedUse(TreePath returnPath, VisitorState state, int depth) {
    MethodTree helper = null;
    for (TreePath p = returnPath; p != null && helper == null; p = p.getParentPath()) {
      if (p.getLeaf() instanceof LambdaExpressionTree || p.getLeaf() instanceof ClassTree) {
        return Use.ESCAPES;
      }
      if (p.getLeaf() instanceof MethodTree) {
        helper = (MethodTree) p.getLeaf();
      }
    }
    MethodSymbol method = helper == null ? null : ASTHelpers.getSymbol(helper);
    if (method == null || !method.getModifiers().contains(javax.lang.model.element.Modifier.PRIVATE)) {
      return Use.ESCAPES;
    }
    List<TreePath> calls = new ArrayList<>();
    boolean[] referenced = {false};
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitMethodInvocation(MethodInvocationTree node, Void unused) {
        if (method.equals(ASTHelpers.getSymbol(node))) {
          calls.add(getCurrentPath());
        }
        return super.visitMethodInvocation(node, null);
      }

      @Override
      public Void visitMemberReference(MemberReferenceTree node, Void unused) {
        referenced[0] |= method.equals(ASTHelpers.getSymbol(node));
        return super.visitMemberReference(node, null);
      }
    }.scan(state.getPath().getCompilationUnit(), null);
    if (calls.isEmpty() || referenced[0]) {
      return Use.ESCAPES;
    }
    Use result = Use.ESCAPES;
    for (TreePath call : calls) {
      Use use = use(call, state, depth + 1);
      if (use == Use.ESCAPES) {
        return Use.ESCAPES;
      }
      if (Contexts.site(call, state) == Contexts.Site.PER_CALL) {
        result = result == Use.WRAPPED ? Use.WRAPPED : use;
      } else if (result != Use.ESCAPES && use == Use.WRAPPED) {
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

  /**
   * The names of the fields a class gets, by creation, worked out once for the whole class: every
   * finding in it is fixed together in patch mode, so each must get a name none of the others takes.
   */
  private static final Map<CompilationUnitTree, Map<Tree, String>> PLANS = new WeakHashMap<>();

  /** Where a hoisted guard goes: the class, and the index of the member the new field goes before. */
  private static final class Hoist {
    final ClassTree owner;
    final List<Tree> members;
    final int position;
    final String base;

    Hoist(ClassTree owner, List<Tree> members, int position, String base) {
      this.owner = owner;
      this.members = members;
      this.position = position;
      this.base = base;
    }
  }

  private static @Nullable SuggestedFix fix(ExpressionTree creation, Kind kind, VisitorState state) {
    Hoist hoist = hoist(creation, kind, state);
    if (hoist == null) {
      return null;
    }
    String name = plan(state).get(creation);
    return name == null ? null : build(creation, kind, hoist, name, state); // null: inside a guard hoisted whole
  }

  /** Whether the guard can become a static field of its class, and where that field goes. */
  private static @Nullable Hoist hoist(ExpressionTree creation, Kind kind, VisitorState state) {
    TreePath ownerPath = state.getPath();
    while (ownerPath != null && !(ownerPath.getLeaf() instanceof ClassTree)) {
      ownerPath = ownerPath.getParentPath();
    }
    if (ownerPath == null) {
      return null;
    }
    ClassTree enclosing = (ClassTree) ownerPath.getLeaf();
    ClassSymbol owner = ASTHelpers.getSymbol(enclosing);
    if (owner == null || owner.getSimpleName().isEmpty() || owner.isInterface() || owner.isAnonymous()
        || !(owner.owner.getKind() == ElementKind.PACKAGE || owner.isStatic())) {
      return null; // only classes that can hold a private static field in any Java version
    }
    Type type = ASTHelpers.getType(creation);
    if (type == null || mentionsTypeVariable(type) || !constantExpression(creation, state)) {
      return null;
    }
    // the local the guard is kept in, if any: a try-with-resources of the Java 9 form cannot lose it
    Tree parent = state.getPath().getParentPath().getLeaf();
    if (parent instanceof VariableTree && ((VariableTree) parent).getInitializer() == creation) {
      Symbol local = ASTHelpers.getSymbol(parent);
      if (local == null || (local.getKind() != ElementKind.LOCAL_VARIABLE
          && local.getKind() != ElementKind.RESOURCE_VARIABLE)) {
        return null;
      }
      for (TreePath use : usesOf(local, state.getPath().getParentPath().getParentPath())) {
        if (use.getParentPath().getLeaf() instanceof TryTree) {
          return null;
        }
      }
    }
    List<Tree> members = new ArrayList<>();
    for (Tree member : enclosing.getMembers()) {
      if (!generated(member)) {
        members.add(member);
      }
    }
    TreePath memberPath = state.getPath();
    while (memberPath.getParentPath() != null && memberPath.getParentPath().getLeaf() != enclosing) {
      memberPath = memberPath.getParentPath();
    }
    int memberIndex = members.indexOf(memberPath.getLeaf());
    if (memberIndex < 0) {
      return null;
    }
    // after every static field of this class its initializer reads (and the static blocks that
    // assign a blank one); before the static initializer it is used in, if that is where it was
    int lower = -1;
    for (Symbol field : staticFieldsRead(creation, owner)) {
      for (int i = 0; i < members.size(); i++) {
        Tree member = members.get(i);
        if (member instanceof VariableTree && field.equals(ASTHelpers.getSymbol(member))) {
          lower = Math.max(lower, i);
          if (((VariableTree) member).getInitializer() == null) {
            lower = Math.max(lower, lastStaticBlock(members));
          }
        }
      }
    }
    Tree member = members.get(memberIndex);
    boolean staticInitializer = (member instanceof VariableTree
            && ((VariableTree) member).getModifiers().getFlags().contains(javax.lang.model.element.Modifier.STATIC))
        || (member instanceof BlockTree && ((BlockTree) member).isStatic());
    int upper = staticInitializer ? memberIndex : members.size();
    int preferred = 0; // among the fields written before the code that uses it
    for (int i = 0; i < memberIndex; i++) {
      if (members.get(i) instanceof VariableTree) {
        preferred = i + 1;
      }
    }
    int position = Math.max(preferred, lower + 1);
    if (position > upper) {
      return null;
    }
    return new Hoist(enclosing, members, position, baseName(creation, kind, state));
  }

  private static String baseName(ExpressionTree creation, Kind kind, VisitorState state) {
    Tree parent = state.getPath().getParentPath().getLeaf();
    if (parent instanceof VariableTree && ((VariableTree) parent).getInitializer() == creation) {
      String local = constantName(((VariableTree) parent).getName().toString());
      if (!local.isEmpty()) {
        return local;
      }
    }
    if (kind.policy) {
      PolicyModel.Policy policy = PolicyModel.evaluate(creation, state);
      if (policy != null && policy.nameKnown && policy.name != null && !constantName(policy.name).isEmpty()
          && !Set.of("default", "http", "none").contains(policy.name)) { // a preset's name says nothing
        return constantName(policy.name);
      }
    }
    return kind.fieldName;
  }

  /** Record components' fields and accessors, default constructors: members javac writes, not the user. */
  private static boolean generated(Tree member) {
    Symbol symbol = ASTHelpers.getSymbol(member);
    return symbol != null && ((symbol.flags() & (Flags.GENERATED_MEMBER | Flags.GENERATEDCONSTR)) != 0
        || (symbol.getKind() == ElementKind.FIELD && (symbol.flags() & Flags.RECORD) != 0));
  }

  private static int lastStaticBlock(List<Tree> members) {
    int last = -1;
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i) instanceof BlockTree && ((BlockTree) members.get(i)).isStatic()) {
        last = i;
      }
    }
    return last;
  }

  /** The static fields of {@code owner} an expression reads, by simple name or qualified. */
  private static Set<Symbol> staticFieldsRead(ExpressionTree expression, ClassSymbol owner) {
    Set<Symbol> fields = new HashSet<>();
    new TreeScanner<Void, Void>() {
      private void note(Tree node) {
        Symbol symbol = ASTHelpers.getSymbol(node);
        if (symbol instanceof VarSymbol && symbol.getKind() == ElementKind.FIELD && symbol.isStatic()
            && owner.equals(symbol.owner)) {
          fields.add(symbol);
        }
      }

      @Override
      public Void visitIdentifier(IdentifierTree node, Void unused) {
        note(node);
        return null;
      }

      @Override
      public Void visitMemberSelect(MemberSelectTree node, Void unused) {
        note(node);
        return super.visitMemberSelect(node, null);
      }
    }.scan(expression, null);
    return fields;
  }

  /**
   * The fields every fixable finding of the class gets, in source order, each a name that nothing
   * in the file uses (so it shadows nothing) and no other new field takes. A guard built inside
   * another one that is hoisted moves with it and gets no field of its own.
   */
  private static Map<Tree, String> plan(VisitorState state) {
    CompilationUnitTree unit = state.getPath().getCompilationUnit();
    synchronized (PLANS) {
      Map<Tree, String> known = PLANS.get(unit);
      if (known != null) {
        return known;
      }
    }
    List<ExpressionTree> hoisted = new ArrayList<>();
    Map<Tree, String> bases = new HashMap<>();
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitMethodInvocation(MethodInvocationTree node, Void unused) {
        consider(node);
        return super.visitMethodInvocation(node, null);
      }

      @Override
      public Void visitNewClass(NewClassTree node, Void unused) {
        consider(node);
        return super.visitNewClass(node, null);
      }

      private void consider(ExpressionTree node) {
        VisitorState here = state.withPath(getCurrentPath());
        Kind kind = reported(node, here);
        Hoist hoist = kind == null ? null : hoist(node, kind, here);
        if (hoist != null) {
          hoisted.add(node);
          bases.put(node, hoist.base);
        }
      }
    }.scan(new TreePath(unit), null);
    Set<String> taken = takenNames(state);
    Map<Tree, String> names = new HashMap<>();
    for (ExpressionTree creation : hoisted) {
      boolean inside = false;
      for (ExpressionTree other : hoisted) {
        inside |= other != creation && ASTHelpers.getStartPosition(other) <= ASTHelpers.getStartPosition(creation)
            && state.getEndPosition(creation) <= state.getEndPosition(other);
      }
      String base = bases.get(creation);
      if (!inside && base != null) {
        String name = unique(base, taken);
        taken.add(name);
        names.put(creation, name);
      }
    }
    synchronized (PLANS) {
      PLANS.put(unit, names);
    }
    return names;
  }

  /**
   * Every simple name written in the file, and the fields its classes inherit: a new field must
   * hide none of them, and no two new fields of the file share a name.
   */
  private static Set<String> takenNames(VisitorState state) {
    Set<String> names = new HashSet<>();
    new TreeScanner<Void, Void>() {
      @Override
      public Void visitIdentifier(IdentifierTree node, Void unused) {
        names.add(node.getName().toString());
        return null;
      }

      @Override
      public Void visitMemberSelect(MemberSelectTree node, Void unused) {
        names.add(node.getIdentifier().toString());
        return super.visitMemberSelect(node, null);
      }

      @Override
      public Void visitVariable(VariableTree node, Void unused) {
        names.add(node.getName().toString());
        return super.visitVariable(node, null);
      }

      @Override
      public Void visitClass(ClassTree node, Void unused) {
        ClassSymbol symbol = ASTHelpers.getSymbol(node);
        if (symbol != null) {
          for (Type supertype : state.getTypes().closure(symbol.type)) {
            for (Symbol member : supertype.tsym.getEnclosedElements()) {
              if (member.getKind() == ElementKind.FIELD) {
                names.add(member.getSimpleName().toString());
              }
            }
          }
        }
        return super.visitClass(node, null);
      }
    }.scan(state.getPath().getCompilationUnit(), null);
    return names;
  }

  private static SuggestedFix build(ExpressionTree creation, Kind kind, Hoist hoist, String field, VisitorState state) {
    // several findings insert their fields at one place: keep them all, in the order of the findings
    SuggestedFix.Builder fix = SuggestedFix.builder().setCoalescePolicy(Replacements.CoalescePolicy.EXISTING_FIRST);
    Type type = ASTHelpers.getType(creation);
    TreePath declarationPath = state.getPath().getParentPath();
    Tree parent = declarationPath.getLeaf();
    String typeSource;
    if (parent instanceof VariableTree && ((VariableTree) parent).getInitializer() == creation) {
      VariableTree local = (VariableTree) parent;
      typeSource = ASTHelpers.hasImplicitType(local, state)
          ? SuggestedFixes.prettyType(state, fix, type) : state.getSourceForNode(local.getType());
      Symbol symbol = ASTHelpers.getSymbol(local);
      List<TreePath> uses = usesOf(symbol, declarationPath.getParentPath());
      if (symbol.getKind() == ElementKind.RESOURCE_VARIABLE) {
        dropResource((TryTree) declarationPath.getParentPath().getLeaf(), local, uses, field, fix, state);
      } else {
        for (TreePath use : uses) {
          fix.replace(use.getLeaf(), field);
        }
        deleteStatement(local, fix, state);
      }
    } else {
      typeSource = SuggestedFixes.prettyType(state, fix, type);
      fix.replace(creation, field);
    }
    String declaration = "private static final " + typeSource + " " + field + " = " + state.getSourceForNode(creation) + ";";
    insertMember(hoist, declaration, fix, state);
    fix.setShortDescription("keep the " + kind.noun + " in a private static final field");
    return fix.build();
  }

  /**
   * A client kept for the whole process is not closed after one request: its resource goes, and so
   * does the {@code try} when it was only there to close it.
   */
  private static void dropResource(TryTree statement, VariableTree resource, List<TreePath> uses, String field,
      SuggestedFix.Builder fix, VisitorState state) {
    List<? extends Tree> resources = statement.getResources();
    int index = resources.indexOf(resource);
    if (resources.size() == 1 && statement.getCatches().isEmpty() && statement.getFinallyBlock() == null) {
      fix.replace(statement, edited(statement.getBlock(), uses, field, state));
      return;
    }
    if (resources.size() == 1) {
      fix.replace(ASTHelpers.getStartPosition(statement), ASTHelpers.getStartPosition(statement.getBlock()), "try ");
    } else if (index < resources.size() - 1) {
      fix.replace(ASTHelpers.getStartPosition(resource), ASTHelpers.getStartPosition(resources.get(index + 1)), "");
    } else {
      int from = state.getEndPosition(resources.get(index - 1));
      CharSequence source = state.getSourceCode();
      while (from > 0 && (source.charAt(from - 1) == ';' || Character.isWhitespace(source.charAt(from - 1)))) {
        from--; // the separator before the last resource goes with it
      }
      fix.replace(from, state.getEndPosition(resource), "");
    }
    for (TreePath use : uses) {
      fix.replace(use.getLeaf(), field);
    }
  }

  /** The source of {@code region} with each use renamed to {@code field}. */
  private static String edited(Tree region, List<TreePath> uses, String field, VisitorState state) {
    int start = ASTHelpers.getStartPosition(region);
    StringBuilder text = new StringBuilder(state.getSourceCode().subSequence(start, state.getEndPosition(region)));
    List<Tree> ordered = new ArrayList<>();
    for (TreePath use : uses) {
      ordered.add(use.getLeaf());
    }
    ordered.sort((a, b) -> Integer.compare(ASTHelpers.getStartPosition(b), ASTHelpers.getStartPosition(a)));
    for (Tree use : ordered) {
      text.replace(ASTHelpers.getStartPosition(use) - start, state.getEndPosition(use) - start, field);
    }
    return text.toString();
  }

  /**
   * Writes the field on a line of its own before the member at the planned position (and before
   * that member's comments), indented like it; or after the last member.
   */
  private static void insertMember(Hoist hoist, String declaration, SuggestedFix.Builder fix, VisitorState state) {
    CharSequence source = state.getSourceCode();
    List<Tree> members = hoist.members;
    if (hoist.position == members.size()) {
      Tree last = members.get(members.size() - 1);
      int end = state.getEndPosition(last);
      fix.replace(end, end, "\n" + indentation(source, ASTHelpers.getStartPosition(last)) + declaration);
      return;
    }
    int start = ASTHelpers.getStartPosition(members.get(hoist.position));
    int lineStart = lineStart(source, start);
    if (!source.subSequence(lineStart, start).toString().isBlank()) {
      fix.replace(start, start, declaration + " "); // the member shares its line with something else
      return;
    }
    int floor = hoist.position > 0 ? state.getEndPosition(members.get(hoist.position - 1))
        : ASTHelpers.getStartPosition(hoist.owner);
    int at = lineStart;
    while (at > 0) {
      int previous = lineStart(source, at - 1);
      String line = source.subSequence(previous, at - 1).toString().trim();
      boolean comment = line.startsWith("//") || line.startsWith("/*") || line.startsWith("*") || line.endsWith("*/");
      if (!comment || previous <= floor) {
        break;
      }
      at = previous;
    }
    fix.replace(at, at, indentation(source, start) + declaration + "\n");
  }

  /** Deletes a statement, and the line it leaves empty when it had one of its own. */
  static void deleteStatement(Tree statement, SuggestedFix.Builder fix, VisitorState state) {
    CharSequence source = state.getSourceCode();
    int start = ASTHelpers.getStartPosition(statement);
    int end = state.getEndPosition(statement);
    int lineStart = lineStart(source, start);
    int lineEnd = end;
    while (lineEnd < source.length() && source.charAt(lineEnd) != '\n') {
      lineEnd++;
    }
    boolean ownLine = source.subSequence(lineStart, start).toString().isBlank()
        && source.subSequence(end, lineEnd).toString().isBlank() && lineEnd < source.length();
    if (ownLine) {
      fix.replace(lineStart, lineEnd + 1, "");
    } else {
      fix.delete(statement);
    }
  }

  private static int lineStart(CharSequence source, int position) {
    int i = position;
    while (i > 0 && source.charAt(i - 1) != '\n') {
      i--;
    }
    return i;
  }

  /** The blanks that open the line holding {@code position}. */
  private static String indentation(CharSequence source, int position) {
    int start = lineStart(source, position);
    int end = start;
    while (end < position && (source.charAt(end) == ' ' || source.charAt(end) == '\t')) {
      end++;
    }
    return source.subSequence(start, end).toString();
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
