package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.WARNING;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.google.errorprone.util.ASTHelpers;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MethodInvocationTree;
import java.time.Duration;
import java.util.Optional;

/**
 * A policy whose attempt timeout, worked out from constants, is as long as its deadline or longer
 * (Kevlar's KEV015 also says "reaches or exceeds"). Each attempt already ends at the deadline, so the
 * timeout never fires first: a hung first attempt uses the whole deadline and leaves no time for a
 * retry. Judged on the finished policy (the end of a
 * chain of {@code with…} calls), so setting the two in either order is fine.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "The attempt timeout is not shorter than the deadline, so it can never fire before the deadline"
        + " and a hung attempt leaves no time to retry",
    severity = WARNING,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellattempttimeoutbeyonddeadline")
public final class QuellAttemptTimeoutBeyondDeadline extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    if (!PolicyModel.isStep(tree) || !PolicyModel.isChainEnd(state.getPath())) {
      return Description.NO_MATCH;
    }
    if (Contexts.inTestOrMain(state.getPath(), state)) {
      return Description.NO_MATCH; // a test does this on purpose
    }
    PolicyModel.Policy policy = PolicyModel.evaluate(tree, state);
    if (policy == null) {
      return Description.NO_MATCH;
    }
    if (!timeoutBeyondDeadline(policy)) {
      return Description.NO_MATCH;
    }
    // a chain that starts from a policy already so (a field of this file) was reported there
    ExpressionTree root = tree;
    while (PolicyModel.isStep(root) && ASTHelpers.getReceiver(root) != null) {
      root = ASTHelpers.getReceiver(root);
    }
    PolicyModel.Policy start = PolicyModel.evaluate(root, state);
    if (start != null && timeoutBeyondDeadline(start) && !changesTiming(tree)) {
      return Description.NO_MATCH;
    }
    Duration deadline = policy.deadline.present().orElseThrow();
    Duration timeout = policy.attemptTimeout.present().orElseThrow();
    String compared = timeout.equals(deadline) ? "as long as" : "longer than";
    return buildDescription(tree)
        .setMessage("The attempt timeout (" + Values.render(timeout)
            + (policy.presetAttemptTimeout ? ", the preset's default" : "") + ") is " + compared + " the deadline ("
            + Values.render(deadline) + "), so it never fires before the deadline does: each attempt already ends at the deadline,"
            + " and a hung first attempt uses all of it, leaving no time to retry. Give the attempt timeout a"
            + " share of the deadline (say a third), or set the two the other way round if they were swapped.")
        .build();
  }

  private static boolean timeoutBeyondDeadline(PolicyModel.Policy policy) {
    Optional<Duration> deadline = policy.deadline.present();
    Optional<Duration> timeout = policy.attemptTimeout.present();
    return deadline.isPresent() && timeout.isPresent() && timeout.get().compareTo(deadline.get()) >= 0;
  }

  /** Whether a step of the chain sets the deadline or the attempt timeout. */
  private static boolean changesTiming(ExpressionTree end) {
    for (ExpressionTree e = end; e != null && PolicyModel.isStep(e); e = ASTHelpers.getReceiver(e)) {
      String name = ASTHelpers.getSymbol((MethodInvocationTree) e).getSimpleName().toString();
      if (name.contains("Deadline") || name.contains("AttemptTimeout") || name.equals("with")) {
        return true;
      }
    }
    return false;
  }
}
