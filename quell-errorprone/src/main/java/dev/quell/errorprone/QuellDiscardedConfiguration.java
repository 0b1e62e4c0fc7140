package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.ERROR;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.fixes.SuggestedFix;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.BlockTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.ExpressionStatementTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.ParenthesizedTree;
import com.sun.source.tree.StatementTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.tools.javac.code.Attribute;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Type;
import com.sun.tools.javac.code.TypeTag;
import java.util.List;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import org.jspecify.annotations.Nullable;

/**
 * A {@code with…}/{@code without…} call on one of Quell's immutable values whose result is thrown
 * away (Kevlar's KEV008): the value is never changed in place, so the statement does nothing and the
 * code goes on with the configuration it had. Matches the methods Quell marks
 * {@code @CheckReturnValue}, and any {@code with…} method of a Quell type that returns its own type.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "A with…/without… call whose result is dropped: Quell's configuration values are immutable,"
        + " so the call changes nothing",
    severity = ERROR,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quelldiscardedconfiguration")
public final class QuellDiscardedConfiguration extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(tree);
    if (method == null || !returnsACopy(method)) {
      return Description.NO_MATCH;
    }
    Tree parent = state.getPath().getParentPath().getLeaf();
    boolean statement = parent instanceof ExpressionStatementTree;
    boolean voidLambda = parent instanceof LambdaExpressionTree && returnsVoid((LambdaExpressionTree) parent, state);
    if (!(statement || voidLambda) || Contexts.expectsFailure(state.getPath(), state)) {
      return Description.NO_MATCH;
    }
    ExpressionTree root = root(tree);
    String type = method.owner.getSimpleName().toString();
    String call = method.getSimpleName() + "(...)";
    String receiver = root == null ? "its receiver" : state.getSourceForNode(root);
    Description.Builder description = buildDescription(tree).setMessage(
        type + " is immutable: " + call + " returns a changed copy and leaves " + receiver + " as it was, so this"
            + " statement does nothing and the code goes on with the old configuration. Keep the copy where the"
            + " value is built (static final Resilience POLICY = ...." + method.getSimpleName() + "(...)), or assign it.");
    if (statement && root != null) {
      SuggestedFix fix = fix((ExpressionStatementTree) parent, state.getPath().getParentPath(), tree, root, state);
      if (fix != null) {
        description.addFix(fix);
      }
    }
    return description.build();
  }

  /** A Quell instance method that returns a changed copy of its receiver. */
  private static boolean returnsACopy(MethodSymbol method) {
    if (method.isStatic() || !QuellTypes.declaredInQuell(method)) {
      return false;
    }
    if (marked(method)) {
      return true;
    }
    String name = method.getSimpleName().toString();
    boolean withName = name.equals("with") || (name.startsWith("with") && name.length() > 4
        && Character.isUpperCase(name.charAt(name.startsWith("without") && name.length() > 7 ? 7 : 4)));
    Type returned = method.getReturnType();
    return withName && returned != null && returned.tsym == method.owner;
  }

  /** Whether the method, or a class around it, carries an annotation named CheckReturnValue. */
  private static boolean marked(Symbol symbol) {
    for (Symbol s = symbol; s != null && s.getKind() != ElementKind.PACKAGE; s = s.owner) {
      for (Attribute.Compound annotation : s.getAnnotationMirrors()) {
        if (annotation.type.tsym.getSimpleName().contentEquals("CheckReturnValue")) {
          return true;
        }
      }
    }
    return false;
  }

  /** The expression a chain of copying calls starts from ({@code policy} in {@code policy.withA(1).withB(2)}). */
  private static @Nullable ExpressionTree root(MethodInvocationTree call) {
    ExpressionTree e = call;
    while (e instanceof MethodInvocationTree) {
      MethodSymbol method = ASTHelpers.getSymbol((MethodInvocationTree) e);
      if (method == null || !returnsACopy(method)) {
        return e;
      }
      e = ASTHelpers.getReceiver(e);
    }
    return e;
  }

  /**
   * Keeps the copy where that is what the code meant and nothing else changes: folded into the
   * local's initializer when the statement comes right after its declaration; assigned back to a
   * local that is not final and captured by no lambda. A field, a preset or any other receiver has
   * no obvious owner for the copy.
   */
  private static @Nullable SuggestedFix fix(ExpressionStatementTree statement, TreePath statementPath,
      MethodInvocationTree call, ExpressionTree root, VisitorState state) {
    if (!(root instanceof IdentifierTree)) {
      return null;
    }
    Symbol local = ASTHelpers.getSymbol(root);
    if (local == null || local.getKind() != ElementKind.LOCAL_VARIABLE) {
      return null;
    }
    String chain = state.getSourceCode().subSequence(state.getEndPosition(root), state.getEndPosition(call)).toString();
    Tree block = statementPath.getParentPath().getLeaf();
    if (block instanceof BlockTree) {
      List<? extends StatementTree> statements = ((BlockTree) block).getStatements();
      int index = statements.indexOf(statement);
      if (index > 0 && statements.get(index - 1) instanceof VariableTree
          && local.equals(ASTHelpers.getSymbol(statements.get(index - 1)))
          && ((VariableTree) statements.get(index - 1)).getInitializer() != null) {
        ExpressionTree initializer = ((VariableTree) statements.get(index - 1)).getInitializer();
        String source = state.getSourceForNode(initializer);
        boolean plain = initializer instanceof MethodInvocationTree || initializer instanceof IdentifierTree
            || initializer instanceof MemberSelectTree || initializer instanceof ParenthesizedTree
            || initializer instanceof NewClassTree;
        SuggestedFix.Builder fix = SuggestedFix.builder()
            .replace(initializer, (plain ? source : "(" + source + ")") + chain)
            .setShortDescription("build the local with the change");
        QuellGuardPerCall.deleteStatement(statement, fix, state);
        return fix.build();
      }
    }
    VariableTree declaration = Values.declaration(local, state);
    if (declaration == null || declaration.getModifiers().getFlags().contains(Modifier.FINAL) || captured(local, state)) {
      return null;
    }
    return SuggestedFix.builder()
        .prefixWith(call, state.getSourceForNode(root) + " = ")
        .setShortDescription("assign the copy back to " + state.getSourceForNode(root))
        .build();
  }

  /** Whether a lambda or a local class reads the local: assigning it again would not compile. */
  private static boolean captured(Symbol local, VisitorState state) {
    boolean[] captured = {false};
    new TreePathScanner<Void, Void>() {
      @Override
      public Void visitIdentifier(IdentifierTree node, Void unused) {
        if (local.equals(ASTHelpers.getSymbol(node))) {
          for (TreePath p = getCurrentPath(); p != null; p = p.getParentPath()) {
            if (p.getLeaf() instanceof LambdaExpressionTree || p.getLeaf() instanceof ClassTree) {
              captured[0] = true; // the use is inside a lambda or class written in the local's method
              break;
            }
            if (p.getLeaf() instanceof com.sun.source.tree.MethodTree) {
              break;
            }
          }
        }
        return null;
      }
    }.scan(new TreePath(state.getPath().getCompilationUnit()), null);
    return captured[0];
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
