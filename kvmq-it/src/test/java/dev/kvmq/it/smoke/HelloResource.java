package dev.kvmq.it.smoke;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

/** {@code GET /api/hello?name=x} answers {@code hello x} through the {@link Greeter} bean. */
@Path("hello")
@RequestScoped
public class HelloResource {

  @Inject Greeter greeter;

  /**
   * @param name who to greet
   * @return the greeting
   */
  @GET
  @Produces(MediaType.TEXT_PLAIN)
  public String hello(@QueryParam("name") String name) {
    return greeter.greet(name);
  }
}
