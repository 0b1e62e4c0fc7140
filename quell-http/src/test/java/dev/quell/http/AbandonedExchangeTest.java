package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.Resilience;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;

/**
 * The one window the JDK's blocking {@code send} leaves open: an interrupt (an attempt timeout, the
 * caller) that lands just as the answer's headers arrive. The JDK's {@code send} then throws and drops
 * the response, body and all; a streaming body would hold its connection with nobody to close it. A
 * stand-in {@code HttpClient} (a unit: the real race cannot be timed from a test) makes the answer
 * arrive and then throws the interrupt, as the JDK does in that window.
 */
class AbandonedExchangeTest {

  @Test
  void aStreamingBodyThatArrivedAsSendWasInterruptedIsClosed() throws Exception {
    AtomicBoolean released = new AtomicBoolean();
    ResilientHttpClient client = ResilientHttpClient.of(new InterruptedAsTheAnswerArrives(released), Resilience.HTTP);

    Throwable thrown = catchThrowable(() -> client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/x")).build(), BodyHandlers.ofInputStream()));

    assertThat(thrown).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).as("the interrupt flag is kept, as for every Quell call").isTrue();
    assertThat(released).as("the body's stream was closed, cancelling its subscription").isTrue();
    assertThat(client.abandonedExchanges()).isEqualTo(1);
  }

  @Test
  void aCallInterruptedBeforeAnyAnswerHasNothingToCloseAndIsCounted() throws Exception {
    ResilientHttpClient client = ResilientHttpClient.of(new InterruptedAsTheAnswerArrives(null), Resilience.HTTP);

    Throwable thrown = catchThrowable(() -> client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/x")).build(), BodyHandlers.ofString()));

    assertThat(thrown).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isTrue();
    assertThat(client.abandonedExchanges()).isEqualTo(1);
  }

  /** Its {@code send} makes the answer arrive (when {@code released} is given), then throws as if interrupted. */
  private static final class InterruptedAsTheAnswerArrives extends HttpClient {
    private final AtomicBoolean released;

    InterruptedAsTheAnswerArrives(AtomicBoolean released) {
      this.released = released;
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws InterruptedException {
      if (released != null) {
        HttpResponse.BodySubscriber<T> subscriber = handler.apply(new HttpResponse.ResponseInfo() {
          @Override public int statusCode() { return 200; }
          @Override public HttpHeaders headers() { return HttpHeaders.of(Map.of(), (a, b) -> true); }
          @Override public Version version() { return Version.HTTP_1_1; }
        });
        subscriber.onSubscribe(new Flow.Subscription() {
          @Override public void request(long n) {}
          @Override public void cancel() { released.set(true); }
        });
        subscriber.onNext(List.of(ByteBuffer.wrap(new byte[] {'o', 'k'})));
      }
      throw new InterruptedException("interrupted as the answer arrived");
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
      throw new UnsupportedOperationException();
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
        HttpResponse.PushPromiseHandler<T> push) {
      throw new UnsupportedOperationException();
    }

    @Override public Optional<CookieHandler> cookieHandler() { return Optional.empty(); }
    @Override public Optional<Duration> connectTimeout() { return Optional.empty(); }
    @Override public Redirect followRedirects() { return Redirect.NEVER; }
    @Override public Optional<ProxySelector> proxy() { return Optional.empty(); }
    @Override public SSLContext sslContext() { throw new UnsupportedOperationException(); }
    @Override public SSLParameters sslParameters() { return new SSLParameters(); }
    @Override public Optional<Authenticator> authenticator() { return Optional.empty(); }
    @Override public Version version() { return Version.HTTP_1_1; }
    @Override public Optional<Executor> executor() { return Optional.empty(); }
  }
}
