package dev.kvmq.it.support.app;

import jakarta.enterprise.context.ApplicationScoped;

/** A CDI bean injected into the handlers, to show that injection works there. */
@ApplicationScoped
public class Greeter {

  /**
   * @return a fixed greeting
   */
  public String greet() {
    return "hello";
  }
}
