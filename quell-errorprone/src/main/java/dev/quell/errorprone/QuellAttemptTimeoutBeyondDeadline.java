package dev.quell.errorprone;

import static com.google.errorprone.BugPattern.LinkType.CUSTOM;
import static com.google.errorprone.BugPattern.SeverityLevel.WARNING;

import com.google.auto.service.AutoService;
import com.google.errorprone.BugPattern;
import com.google.errorprone.VisitorState;
import com.google.errorprone.bugpatterns.BugChecker;
import com.google.errorprone.bugpatterns.BugChecker.MethodInvocationTreeMatcher;
import com.google.errorprone.matchers.Description;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.TreePath;
import java.time.Duration;
import java.util.Optional;

/**
 * A policy whose attempt timeout, worked out from constants, is longer than its deadline. Each
 * attempt already ends at the deadline, so the timeout can never fire: a hung first attempt uses
 * the whole deadline and leaves no time for a retry. Judged on the finished policy (the end of a
 * chain of {@code with…} calls), so setting the two in either order is fine.
 */
@AutoService(BugChecker.class)
@BugPattern(
    summary = "The attempt timeout is longer than the deadline, so it can never fire and a hung attempt"
        + " leaves no time to retry",
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
    PolicyModel.Policy policy = PolicyModel.evaluate(tree, state);
    if (policy == null) {
      return Description.NO_MATCH;
    }
    Optional<Duration> deadline = policy.deadline.present();
    Optional<Duration> timeout = policy.attemptTimeout.present();
    if (deadline.isEmpty() || timeout.isEmpty() || timeout.get().compareTo(deadline.get()) <= 0) {
      return Description.NO_MATCH;
    }
    return buildDescription(tree)
        .setMessage("The attempt timeout (" + Values.render(timeout.get())
            + (policy.presetAttemptTimeout ? ", the preset's default" : "") + ") is longer than the deadline ("
            + Values.render(deadline.get()) + "), so it can never fire: each attempt already ends at the deadline,"
            + " and a hung first attempt uses all of it, leaving no time to retry. Give the attempt timeout a"
            + " share of the deadline (say a third), or set the two the other way round if they were swapped.")
        .build();
  }

}
