package dev.kvmq.it.support.secure;

import dev.kvmq.jakarta.KvmqBasicAuthentication;
import jakarta.enterprise.context.ApplicationScoped;

/** The recipe's mechanism: HTTP Basic that answers a malformed header with 401. */
@ApplicationScoped
public class SecureAuthentication extends KvmqBasicAuthentication {

  /** Made by CDI. */
  public SecureAuthentication() {
    super("kvmq-it");
  }
}
