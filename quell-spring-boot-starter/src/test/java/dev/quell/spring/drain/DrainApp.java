package dev.quell.spring.drain;

import dev.quell.CallRejectedException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/** The application DrainingOnShutdownTest runs in a JVM of its own and stops with SIGTERM. */
@SpringBootApplication
public class DrainApp {
  public static void main(String[] args) {
    SpringApplication.run(DrainApp.class, args);
  }

  @RestController
  static class Proxy {
    private final RestClient rest;
    private final String downstream;

    Proxy(RestClient.Builder rest, @Value("${downstream.url}") String downstream) {
      this.rest = rest.build();
      this.downstream = downstream;
    }

    /** An inbound request that calls the dependency through the RestClient. */
    @GetMapping("/proxy")
    String proxy(@RequestParam String path) {
      return rest.get().uri(downstream + path).retrieve().body(String.class);
    }

    /** Starts a call to the dependency in the background and answers at once. */
    @GetMapping("/background")
    @ResponseStatus(HttpStatus.ACCEPTED)
    String background(@RequestParam String path) {
      Thread worker = new Thread(() -> {
        try {
          System.out.println("background call ended: " + rest.get().uri(downstream + path).retrieve().body(String.class));
        } catch (CallRejectedException e) {
          System.out.println("background call ended: " + e.reason() + " after " + e.attempts() + " attempts");
        }
      }, "background");
      worker.start();
      return "started";
    }
  }
}
