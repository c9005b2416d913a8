package dev.kvmq.demo;

import dev.kvmq.jakarta.KvmqBasicAuthentication;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The demo's authentication: HTTP Basic against {@link DemoIdentityStore}, with kvmq's mechanism,
 * which answers a malformed {@code Authorization} header with 401 (Payara's built-in Basic
 * mechanism answers 500 and logs a stack trace).
 */
@ApplicationScoped
public class DemoAuthentication extends KvmqBasicAuthentication {

  /** Made by CDI. */
  public DemoAuthentication() {
    super("kvmq demo");
  }
}
