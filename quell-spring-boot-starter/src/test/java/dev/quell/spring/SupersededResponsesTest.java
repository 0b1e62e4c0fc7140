package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CallRejectedException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Units of the HTTP integrations, with the transport replaced by a script: every response the caller will
 * not see is closed (RestClient) or released (WebClient); the one returned is left alone.
 */
class SupersededResponsesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class))
      .withPropertyValues("quell.defaults.backoff.kind=none", "quell.policies.inventory.attempts=3");

  /** A response that knows whether it was closed. */
  static final class Response implements ClientHttpResponse {
    final int status;
    final AtomicBoolean closed = new AtomicBoolean();

    Response(int status) {
      this.status = status;
    }

    @Override
    public HttpStatusCode getStatusCode() {
      return HttpStatusCode.valueOf(status);
    }

    @Override
    public String getStatusText() {
      return "";
    }

    @Override
    public void close() {
      closed.set(true);
    }

    @Override
    public InputStream getBody() {
      return new ByteArrayInputStream("body".getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public HttpHeaders getHeaders() {
      return new HttpHeaders();
    }
  }

  static HttpRequest get(String url) {
    Map<String, Object> attributes = new ConcurrentHashMap<>();
    attributes.put(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "inventory");
    HttpHeaders headers = new HttpHeaders();
    return new HttpRequest() {
      @Override
      public HttpMethod getMethod() {
        return HttpMethod.GET;
      }

      @Override
      public URI getURI() {
        return URI.create(url);
      }

      @Override
      public Map<String, Object> getAttributes() {
        return attributes;
      }

      @Override
      public HttpHeaders getHeaders() {
        return headers;
      }
    };
  }

  @Test
  void aRetried503IsClosedAndTheAnswerReturnedIsNot() {
    runner.run(context -> {
      QuellRestClientInterceptor interceptor = new QuellRestClientInterceptor(context.getBean(QuellPolicies.class));
      List<Response> sent = new ArrayList<>();
      List<String> markers = new ArrayList<>();
      ClientHttpResponse answer = interceptor.intercept(get("http://inventory.example:8080/stock/1"), new byte[0],
          (request, body) -> {
            markers.add(request.getHeaders().getFirst("X-Quell-Attempt"));
            Response r = new Response(sent.size() < 2 ? 503 : 200);
            sent.add(r);
            return r;
          });
      assertThat(answer).isSameAs(sent.get(2));
      assertThat(sent).extracting(r -> r.closed.get()).containsExactly(true, true, false);
      assertThat(markers).containsExactly("1/3", "2/3", "3/3");
    });
  }

  @Test
  void whenTheAttemptsRunOutTheLast503IsTheAnswerAndStaysOpen() {
    runner.run(context -> {
      QuellRestClientInterceptor interceptor = new QuellRestClientInterceptor(context.getBean(QuellPolicies.class));
      List<Response> sent = new ArrayList<>();
      ClientHttpResponse answer = interceptor.intercept(get("http://inventory.example/stock/2"), new byte[0], (request, body) -> {
        Response r = new Response(503);
        sent.add(r);
        return r;
      });
      assertThat(answer.getStatusCode().value()).isEqualTo(503);
      assertThat(sent).extracting(r -> r.closed.get()).containsExactly(true, true, false);
    });
  }

  @Test
  void aPostIsSentOnceUnlessItCarriesAnIdempotencyKey() {
    runner.run(context -> {
      QuellRestClientInterceptor interceptor = new QuellRestClientInterceptor(context.getBean(QuellPolicies.class));
      AtomicInteger sent = new AtomicInteger();
      HttpRequest post = new org.springframework.http.client.support.HttpRequestWrapper(get("http://inventory.example/orders")) {
        @Override
        public HttpMethod getMethod() {
          return HttpMethod.POST;
        }
      };
      ClientHttpResponse answer = interceptor.intercept(post, new byte[0], (request, body) -> {
        sent.incrementAndGet();
        return new Response(503);
      });
      assertThat(answer.getStatusCode().value()).isEqualTo(503);
      assertThat(sent).hasValue(1);
      post.getHeaders().set("Idempotency-Key", "order-7");
      interceptor.intercept(post, new byte[0], (request, body) -> {
        sent.incrementAndGet();
        return new Response(503);
      });
      assertThat(sent).hasValue(4);
    });
  }

  @Test
  void aTransportFailureComesOutUnchangedAndARefusalAsItself() {
    runner.withPropertyValues("quell.policies.inventory.budget.fraction=0.1", "quell.policies.inventory.budget.minimum-per-second=0")
        .run(context -> {
          QuellRestClientInterceptor interceptor = new QuellRestClientInterceptor(context.getBean(QuellPolicies.class));
          IOException reset = new IOException("connection reset");
          assertThatThrownBy(() -> interceptor.intercept(get("http://flaky.example/a"), new byte[0], (request, body) -> {
            throw reset;
          })).isInstanceOf(CallRejectedException.class).hasCause(reset); // one token: one retry, then refused
          assertThatThrownBy(() -> interceptor.intercept(get("http://other.example/a"), new byte[0], (request, body) -> {
            throw reset;
          })).isInstanceOf(CallRejectedException.class); // another host, another budget: it too funded one retry
        });
  }

  // --------------------------------------------------------------------------------------------- WebClient

  /** A WebClient response whose body records whether someone released it. */
  static ClientResponse response(HttpStatus status, List<String> released, String name) {
    DataBuffer buffer = DefaultDataBufferFactory.sharedInstance.wrap(name.getBytes(StandardCharsets.UTF_8));
    Flux<DataBuffer> body = Flux.just(buffer).doFinally(signal -> released.add(name));
    return ClientResponse.create(status).body(body).build();
  }

  @Test
  void aWebClientReleasesTheBodiesOfRetriedResponsesOnly() {
    runner.run(context -> {
      QuellWebClientFilter filter = new QuellWebClientFilter(context.getBean(QuellPolicies.class), "inventory");
      List<String> released = new CopyOnWriteArrayList<>();
      List<String> markers = new CopyOnWriteArrayList<>();
      AtomicInteger n = new AtomicInteger();
      ClientRequest request = ClientRequest.create(HttpMethod.GET, URI.create("http://inventory.example/stock/3")).build();
      ClientResponse answer = filter.filter(request, r -> {
        markers.add(r.headers().getFirst("X-Quell-Attempt"));
        int i = n.incrementAndGet();
        return Mono.just(response(i < 3 ? HttpStatus.BAD_GATEWAY : HttpStatus.OK, released, "response-" + i));
      }).block(Duration.ofSeconds(10));
      assertThat(answer.statusCode().value()).isEqualTo(200);
      assertThat(released).containsExactlyInAnyOrder("response-1", "response-2");
      assertThat(markers).containsExactly("1/3", "2/3", "3/3");
      assertThat(answer.bodyToMono(String.class).block(Duration.ofSeconds(10))).isEqualTo("response-3");
    });
  }

  @Test
  void aWebClientFailureComesOutOfTheMonoAsItIs() {
    runner.run(context -> {
      QuellWebClientFilter filter = new QuellWebClientFilter(context.getBean(QuellPolicies.class), "inventory");
      IOException reset = new IOException("connection reset");
      AtomicInteger n = new AtomicInteger();
      ClientRequest request = ClientRequest.create(HttpMethod.GET, URI.create("http://inventory.example/stock/4")).build();
      assertThatThrownBy(() -> filter.filter(request, r -> {
        n.incrementAndGet();
        return Mono.error(reset);
      }).block(Duration.ofSeconds(10))).hasCause(reset);
      assertThat(n).hasValue(3);
    });
  }
}
