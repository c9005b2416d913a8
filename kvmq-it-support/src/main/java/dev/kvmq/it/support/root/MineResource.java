package dev.kvmq.it.support.root;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** The user's resource at {@code kvmq/mine}, under {@link RootApi}. */
@Path("kvmq/mine")
public class MineResource {

  /** Made by the JAX-RS runtime. */
  public MineResource() {}

  /**
   * @return {@code "mine"}
   */
  @GET
  @Produces(MediaType.TEXT_PLAIN)
  public String get() {
    return "mine";
  }
}
