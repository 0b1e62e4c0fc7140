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
 * A retrying policy whose backoff makes the first retry wait at least as long as the whole deadline
 * (Kevlar's KEV015 for retry delays): the first attempt takes some time too, so the deadline has
 * passed before any retry can start, and the policy never retries. Only waits that are certain
 * count: a constant backoff, or an exponential one without jitter (or half of it with
 * {@code Jitter.EQUAL}); the default full jitter may draw any wait down to zero.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "The first retry waits at least as long as the deadline, so the policy never retries",
    severity = WARNING,
    linkType = CUSTOM,
    link = Docs.PAGE + "#quellbackoffbeyonddeadline")
public final class QuellBackoffBeyondDeadline extends BugChecker implements MethodInvocationTreeMatcher {
  private static final long serialVersionUID = 1L;

  @Override
  public Description matchMethodInvocation(MethodInvocationTree tree, VisitorState state) {
    if (!PolicyModel.isStep(tree) || !PolicyModel.isChainEnd(state.getPath())
        || Contexts.inTestOrMain(state.getPath(), state)) {
      return Description.NO_MATCH;
    }
    PolicyModel.Policy policy = PolicyModel.evaluate(tree, state);
    Duration wait = policy == null ? null : policy.firstWait;
    if (policy == null || wait == null || !waitsPastDeadline(policy)) {
      return Description.NO_MATCH;
    }
    // a chain that starts from a policy already so (a field of this file) was reported there
    ExpressionTree root = tree;
    while (PolicyModel.isStep(root) && ASTHelpers.getReceiver(root) != null) {
      root = ASTHelpers.getReceiver(root);
    }
    PolicyModel.Policy start = PolicyModel.evaluate(root, state);
    if (start != null && waitsPastDeadline(start) && !changesTiming(tree)) {
      return Description.NO_MATCH;
    }
    Duration deadline = policy.deadline.present().orElseThrow();
    return buildDescription(tree)
        .setMessage("The backoff " + policy.backoffSource + " makes the first retry wait at least "
            + Values.render(wait) + ", " + (wait.equals(deadline) ? "as long as" : "longer than")
            + " the deadline (" + Values.render(deadline) + "): the first attempt takes time too, so the deadline has"
            + " passed before any retry can start, and this policy of " + policy.attempts + " attempts never retries."
            + " Give the backoff a small share of the deadline, or lengthen the deadline.")
        .build();
  }

  private static boolean waitsPastDeadline(PolicyModel.Policy policy) {
    Optional<Duration> deadline = policy.deadline.present();
    return policy.retries() && deadline.isPresent() && policy.firstWait != null
        && !policy.firstWait.isZero() && policy.firstWait.compareTo(deadline.get()) >= 0;
  }

  private static boolean changesTiming(ExpressionTree end) {
    for (ExpressionTree e = end; e != null && PolicyModel.isStep(e); e = ASTHelpers.getReceiver(e)) {
      String name = ASTHelpers.getSymbol((MethodInvocationTree) e).getSimpleName().toString();
      if (name.contains("Deadline") || name.contains("Backoff") || name.equals("withAttempts") || name.equals("with")) {
        return true;
      }
    }
    return false;
  }
}
