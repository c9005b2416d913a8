package dev.kvmq.it.smoke;

import jakarta.enterprise.context.ApplicationScoped;

/** A CDI bean of the smoke WAR: proves CDI injection works in the deployment. */
@ApplicationScoped
public class Greeter {

  /**
   * @param name who to greet
   * @return {@code "hello " + name}
   */
  public String greet(String name) {
    return "hello " + name;
  }
}
