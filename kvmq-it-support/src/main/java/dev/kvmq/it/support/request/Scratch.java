package dev.kvmq.it.support.request;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import java.util.UUID;

/**
 * A per-request bean, as applications have them (an audit context, an EntityManager's holder): each
 * instance has an id and tells the {@link Tally} when it is destroyed.
 */
@RequestScoped
public class Scratch {

  private final String id = "scratch-" + UUID.randomUUID();

  @Inject Tally tally;

  /** Made by CDI. */
  public Scratch() {}

  public String id() {
    return id;
  }

  @PreDestroy
  void destroyed() {
    tally.destroyed(id);
  }
}
