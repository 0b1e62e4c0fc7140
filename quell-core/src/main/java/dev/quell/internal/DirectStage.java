package dev.quell.internal;

import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * An attempt's stage that tells the asynchronous driver of its end itself. The driver would
 * otherwise hang a dependent stage on it ({@code handle}): two objects and three or four CAS per
 * attempt, which is most of what a simulated attempt costs beside the core. The simulator's
 * attempts and quell-kotlin's implement it; the driver treats any other stage as before.
 *
 * <p>A stage that implements it is also its own module's alone: when it answered with a value
 * inside {@code start} and the call ends on that value, the driver hands the stage itself to the
 * caller as the call's future instead of a new completed one.
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

  /**
   * The failure this stage completed with, as {@link #whenDone} would tell it, once it has
   * completed exceptionally; asked instead of {@code whenDone} for a stage that failed inside
   * {@code start}. The default asks {@code whenDone}; a stage that keeps its failure returns it.
   */
  default @Nullable Throwable failedWith() {
    @Nullable Throwable[] told = new Throwable[1];
    whenDone((value, failure) -> told[0] = failure);
    return told[0];
  }
}
