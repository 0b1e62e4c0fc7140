package app.grpc;

import app.support.Friends;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.Verdict;
import dev.quell.grpc.GrpcClassifier;
import dev.quell.grpc.ResilienceInterceptor;
import io.grpc.Status;
import java.time.Duration;

/**
 * GrpcClassifier.with(...) and ResilienceInterceptor.withDeadlineSlack(...) check their arguments with
 * the core's Problems (dev.quell.internal): the calls issue 19 saw throw IllegalAccessError.
 */
public final class Main {
  public static void main(String[] args) {
    Friends.check("dev.quell.grpc", GrpcClassifier.class);
    GrpcClassifier classifier = GrpcClassifier.DEFAULT.with(Status.Code.RESOURCE_EXHAUSTED, Verdict.Kind.PERMANENT);
    ResilienceInterceptor interceptor = ResilienceInterceptor.of(Resilience.DEFAULT.withName("inventory"))
        .withClassifier(classifier)
        .withDeadlineSlack(Duration.ofMillis(5));
    String refused;
    try {
      interceptor.withDeadlineSlack(Duration.ofMillis(-1));
      refused = "nothing";
    } catch (ResilienceConfigurationException e) {
      refused = "a negative slack";
    }
    System.out.println("quell-grpc on the module path: RESOURCE_EXHAUSTED is "
        + interceptor.classifier().kindOf(Status.Code.RESOURCE_EXHAUSTED) + ", slack "
        + interceptor.deadlineSlack().toMillis() + " ms, refused " + refused);
  }
}
