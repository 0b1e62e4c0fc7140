package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.ERROR;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.util.TreeScanner;
import com.sun.tools.javac.code.Symbol.MethodSymbol;
import com.sun.tools.javac.code.Type;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Work handed to {@code executeAsync} (or {@code runAsync}) that blocks before it returns its
 * future: a sleep, a wait on another future, a latch, a queue, a synchronous HTTP send. Only calls
 * written directly in the work lambda count; a lambda inside it (say, one given to
 * {@code supplyAsync}) runs elsewhere and is fine.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "Work given to executeAsync blocks before returning its future, stalling the caller and"
        + " Quell's timer thread",
    severity = ERROR,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellblockingasyncwork")
public final class QuellBlockingAsyncWork extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;

  /** Blocking methods, by the type that declares them (subtypes included) and their names. */
  private static final Map<String, Set<String>> BLOCKING = Map.ofEntries(
      Map.entry("java.lang.Thread", Set.of("sleep", "join")),
      Map.entry("java.lang.Object", Set.of("wait")),
      Map.entry("java.util.concurrent.TimeUnit", Set.of("sleep", "timedJoin", "timedWait")),
      Map.entry("java.util.concurrent.Future", Set.of("get")),
      Map.entry("java.util.concurrent.CompletableFuture", Set.of("join", "get")),
      Map.entry("java.util.concurrent.CountDownLatch", Set.of("await")),
      Map.entry("java.util.concurrent.CyclicBarrier", Set.of("await")),
      Map.entry("java.util.concurrent.Phaser", Set.of("awaitAdvance", "awaitAdvanceInterruptibly")),
      Map.entry("java.util.concurrent.Semaphore", Set.of("acquire", "acquireUninterruptibly")),
      Map.entry("java.util.concurrent.BlockingQueue", Set.of("take", "put")),
      Map.entry("java.util.concurrent.ExecutorService", Set.of("awaitTermination", "invokeAll", "invokeAny")),
      Map.entry("java.util.concurrent.locks.Condition", Set.of("await", "awaitNanos", "awaitUninterruptibly")),
      Map.entry("java.net.http.HttpClient", Set.of("send")));

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    if (!Executions.isAsyncExecution(tree)) {
      return Description.NO_MATCH;
    }
    if (Contexts.inTestOrMain(state.getPath(), state)) {
      return Description.NO_MATCH; // a test does this on purpose
    }
    ExpressionTree work = ASTHelpers.stripParentheses(Executions.work(tree));
    if (!(work instanceof LambdaExpressionTree)) {
      return Description.NO_MATCH;
    }
    String async = ASTHelpers.getSymbol(tree).getSimpleName().toString();
    new TreeScanner<Void, Void>() {
      @Override
      public Void visitLambdaExpression(LambdaExpressionTree node, Void unused) {
        return null; // runs elsewhere, later
      }

      @Override
      public Void visitClass(ClassTree node, Void unused) {
        return null;
      }

      @Override
      public Void visitMethodInvocation(MethodInvocationTree call, Void unused) {
        String blocking = blocking(call, state);
        if (blocking != null) {
          state.reportMatch(buildDescription(call)
              .setMessage(blocking + " blocks inside work given to " + async + ", which must return its future at"
                  + " once: the first attempt runs on the caller's thread, and retries run on Quell's single timer"
                  + " thread, where a block holds up every timeout and retry in the process (and this attempt's"
                  + " own timeout cannot fire). Start the blocking part elsewhere (CompletableFuture.supplyAsync(...,"
                  + " executor)), or use execute(...) for blocking work.")
              .build());
        }
        return super.visitMethodInvocation(call, null);
      }
    }.scan(((LambdaExpressionTree) work).getBody(), null);
    return Description.NO_MATCH;
  }

  private static @Nullable String blocking(MethodInvocationTree call, VisitorState state) {
    MethodSymbol method = ASTHelpers.getSymbol(call);
    if (method == null) {
      return null;
    }
    String name = method.getSimpleName().toString();
    for (Map.Entry<String, Set<String>> entry : BLOCKING.entrySet()) {
      if (!entry.getValue().contains(name)) {
        continue;
      }
      Type declaring = method.owner.type;
      if (QuellTypes.isA(declaring, entry.getKey(), state) || overridesIn(method, entry.getKey(), state)) {
        String simple = entry.getKey().substring(entry.getKey().lastIndexOf('.') + 1);
        return simple + "." + name;
      }
    }
    return null;
  }

  /** Whether the method is, or overrides, one declared in {@code owner} (a Future's get on a subtype). */
  private static boolean overridesIn(MethodSymbol method, String owner, VisitorState state) {
    for (MethodSymbol overridden : ASTHelpers.findSuperMethods(method, state.getTypes())) {
      if (overridden.owner.getQualifiedName().contentEquals(owner)) {
        return true;
      }
    }
    return false;
  }
}
