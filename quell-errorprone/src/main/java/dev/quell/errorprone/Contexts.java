package dev.quell.errorprone;

import com.google.errorprone.VisitorState;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.AnnotationTree;
import com.sun.source.tree.BlockTree;
import com.sun.source.tree.CatchTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TryTree;
import com.sun.source.tree.UnionTypeTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreePath;
import com.sun.tools.javac.code.Symbol;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Type;
import java.util.List;
import java.util.Set;

/** Where a piece of code runs: per call or once, in a test, where a failure is expected. */
final class Contexts {
  /** Test frameworks' methods that run code expecting it to throw. */
  private static final Set<String> EXPECTING_METHODS = Set.of(
      "assertThrows", "assertThrowsExactly", "assertThatThrownBy", "isThrownBy", "catchThrowable",
      "catchThrowableOfType", "catchException", "assertThatCode", "expectThrows");

  /** Annotations of methods that a test framework runs, once per test. */
  private static final Set<String> TEST_ANNOTATIONS = Set.of(
      "org.junit.Test", "org.junit.jupiter.api.Test", "org.junit.jupiter.api.RepeatedTest",
      "org.junit.jupiter.params.ParameterizedTest", "org.junit.jupiter.api.TestFactory",
      "org.junit.jupiter.api.TestTemplate", "org.testng.annotations.Test", "net.jqwik.api.Property",
      "net.jqwik.api.Example");

  private Contexts() {}

  /** The kinds of place a piece of code can run. */
  enum Site {
    /** A lambda or a method body that runs for each request. */
    PER_CALL,
    /** A field initializer, an initializer block or a constructor: runs once per object or class. */
    ONCE,
    /** A test method, or {@code main}: runs once by design. */
    EXEMPT
  }

  /** Where the code at {@code path} runs. */
  static Site site(TreePath path, VisitorState state) {
    if (inTestOrMain(path, state)) {
      return Site.EXEMPT;
    }
    for (TreePath p = path; p != null; p = p.getParentPath()) {
      Tree leaf = p.getLeaf();
      if (leaf instanceof LambdaExpressionTree) {
        return Site.PER_CALL;
      }
      if (leaf instanceof MethodTree) {
        MethodTree method = (MethodTree) leaf;
        MethodSymbol symbol = ASTHelpers.getSymbol(method);
        if (symbol == null || symbol.isConstructor()) {
          return Site.ONCE;
        }
        if (isMain(symbol, state) || isTest(method, state)) {
          return Site.EXEMPT;
        }
        return Site.PER_CALL;
      }
      if (leaf instanceof BlockTree && p.getParentPath() != null && p.getParentPath().getLeaf() instanceof ClassTree) {
        return Site.ONCE; // an initializer block
      }
      if (leaf instanceof VariableTree && p.getParentPath() != null && p.getParentPath().getLeaf() instanceof ClassTree) {
        return Site.ONCE; // a field initializer
      }
      if (leaf instanceof ClassTree) {
        return Site.ONCE;
      }
    }
    return Site.ONCE;
  }

  /**
   * Whether the code at {@code path} is part of a test method or {@code main} (lambdas and classes
   * written inside them included): code that does unusual things on purpose, or runs once.
   */
  static boolean inTestOrMain(TreePath path, VisitorState state) {
    for (TreePath p = path; p != null; p = p.getParentPath()) {
      if (p.getLeaf() instanceof MethodTree) {
        MethodTree method = (MethodTree) p.getLeaf();
        MethodSymbol symbol = ASTHelpers.getSymbol(method);
        if (symbol != null && (isMain(symbol, state) || isTest(method, state))) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean isMain(MethodSymbol method, VisitorState state) {
    return method.isStatic() && method.getSimpleName().contentEquals("main") && method.getParameters().size() == 1
        && state.getTypes().isArray(method.getParameters().get(0).type);
  }

  private static boolean isTest(MethodTree method, VisitorState state) {
    for (AnnotationTree annotation : method.getModifiers().getAnnotations()) {
      Type type = ASTHelpers.getType(annotation);
      if (type != null && TEST_ANNOTATIONS.contains(type.tsym.getQualifiedName().toString())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the code at {@code path} is written to fail: inside a lambda handed to
   * {@code assertThrows} and its kin, or inside a {@code try} that catches the configuration
   * exception (or a supertype of it).
   */
  static boolean expectsFailure(TreePath path, VisitorState state) {
    Type configurationException = state.getTypeFromString("dev.quell.ResilienceConfigurationException");
    Tree child = path.getLeaf();
    for (TreePath p = path.getParentPath(); p != null; p = p.getParentPath()) {
      Tree leaf = p.getLeaf();
      if (leaf instanceof MethodInvocationTree && child instanceof LambdaExpressionTree) {
        Symbol invoked = ASTHelpers.getSymbol((MethodInvocationTree) leaf);
        if (invoked != null && EXPECTING_METHODS.contains(invoked.getSimpleName().toString())) {
          return true;
        }
      }
      if (leaf instanceof TryTree && child == ((TryTree) leaf).getBlock() && configurationException != null) {
        for (CatchTree c : ((TryTree) leaf).getCatches()) {
          Tree caught = c.getParameter().getType();
          List<? extends Tree> alternatives = caught instanceof UnionTypeTree
              ? ((UnionTypeTree) caught).getTypeAlternatives() : List.of(caught);
          for (Tree alternative : alternatives) {
            Type type = ASTHelpers.getType(alternative);
            if (type != null && ASTHelpers.isSubtype(configurationException, type, state)) {
              return true;
            }
          }
        }
      }
      if (leaf instanceof MethodTree || leaf instanceof ClassTree) {
        return false;
      }
      child = leaf;
    }
    return false;
  }
}
