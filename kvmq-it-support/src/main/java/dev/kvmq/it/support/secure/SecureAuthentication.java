package dev.kvmq.it.support.secure;

import jakarta.enterprise.context.ApplicationScoped;

import dev.kvmq.jakarta.KvmqBasicAuthentication;

/** The recipe's mechanism: HTTP Basic that answers a malformed header with 401. */
@ApplicationScoped
public class SecureAuthentication extends KvmqBasicAuthentication {

    /** Made by CDI. */
    public SecureAuthentication() {
        super("kvmq-it");
    }
}
