package dev.quell.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.AttemptTimeoutException;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.StopReason;
import dev.quell.http.internal.Failures.Refusals;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The one mapping from a call's failure to what an HTTP client throws, for every client. */
class FailuresTest {
  private final CallRejectedException refused =
      new CallRejectedException("budget refused", StopReason.BUDGET_EXHAUSTED, 2, Duration.ofSeconds(1), null);
  private final DeadlineExceededException late = new DeadlineExceededException("deadline", 2, Duration.ofMillis(800), null);
  private final AttemptTimeoutException slow = new AttemptTimeoutException(Duration.ofMillis(300));

  @ParameterizedTest
  @EnumSource(Refusals.class)
  void anIOExceptionIsReturnedUnchanged(Refusals refusals) {
    IOException reset = new IOException("reset");
    assertThat(Failures.asIOException(reset, refusals)).isSameAs(reset);
  }

  @ParameterizedTest
  @EnumSource(Refusals.class)
  void anInterruptBecomesAnInterruptedIOExceptionCausedByIt(Refusals refusals) {
    InterruptedException interrupt = new InterruptedException("stop");
    assertThat(Failures.asIOException(interrupt, refusals)).isInstanceOf(InterruptedIOException.class).hasCause(interrupt);
  }

  @ParameterizedTest
  @EnumSource(Refusals.class)
  void anUncheckedFailureIsThrownAsItIs(Refusals refusals) {
    IllegalStateException bug = new IllegalStateException("bug");
    assertThat(catchThrowable(() -> Failures.asIOException(bug, refusals))).isSameAs(bug);
  }

  @ParameterizedTest
  @EnumSource(Refusals.class)
  void anotherCheckedFailureIsWrapped(Refusals refusals) {
    TimeoutException other = new TimeoutException("other");
    assertThat(Failures.asIOException(other, refusals)).isExactlyInstanceOf(IOException.class).hasCause(other);
  }

  @Test
  void unchangedRefusalsAreThrownAsThemselves() {
    assertThat(catchThrowable(() -> Failures.asIOException(refused, Refusals.UNCHANGED))).isSameAs(refused);
    assertThat(catchThrowable(() -> Failures.asIOException(late, Refusals.UNCHANGED))).isSameAs(late);
    assertThat(catchThrowable(() -> Failures.asIOException(slow, Refusals.UNCHANGED))).isSameAs(slow);
  }

  @Test
  void wrappedARefusalIsAnIOExceptionCausedByItAndATimeoutASocketTimeoutException() {
    assertThat(Failures.asIOException(refused, Refusals.AS_IO_EXCEPTION)).isExactlyInstanceOf(IOException.class)
        .hasCause(refused).hasMessage(refused.getMessage());
    assertThat(Failures.asIOException(late, Refusals.AS_IO_EXCEPTION)).isInstanceOf(SocketTimeoutException.class).hasCause(late);
    assertThat(Failures.asIOException(slow, Refusals.AS_IO_EXCEPTION)).isInstanceOf(SocketTimeoutException.class).hasCause(slow);
  }

  @Test
  void forJavaNetHttpAnInterruptIsThrownAsItIs() {
    InterruptedException interrupt = new InterruptedException("stop");
    assertThat(catchThrowable(() -> Failures.asIOExceptionOrInterrupt(interrupt))).isSameAs(interrupt);
    assertThat(catchThrowable(() -> Failures.asIOExceptionOrInterrupt(refused))).isSameAs(refused);
  }
}
