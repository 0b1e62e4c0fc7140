package dev.quell.example.spring;

/**
 * Pricing answered with a server error: worth another attempt (see {@code transient-exceptions} in
 * application.yml).
 */
public class PricingUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public PricingUnavailableException(String message) {
    super(message);
  }
}
