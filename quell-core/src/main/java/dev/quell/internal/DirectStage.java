package dev.quell.internal;

import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * An attempt's stage that tells the asynchronous driver of its end itself. The driver would
 * otherwise hang a dependent stage on it ({@code handle}): two objects and three or four CAS per
 * attempt, which is most of what a simulated attempt costs beside the core. The simulator's
 * attempts implement it; the driver treats any other stage as before.
 */
@Internal
public interface DirectStage {

  /**
   * Has {@code callback} called exactly once, with the value and no failure or with no value and
   * the failure (as {@code handle} would see it: a {@code CompletionException} is passed as it is),
   * on the completing thread right after this stage completes; at once, on this thread, if it
   * already has. Called at most once per stage.
   */
  void whenDone(BiFunction<@Nullable Object, @Nullable Throwable, ?> callback);
}
