package dev.kvmq.it.support.secure;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

/** The user's own resource at {@code /api/user}: its answers and errors are the user's. */
@Path("user")
@Produces(MediaType.TEXT_PLAIN)
public class UserResource {

  /** Made by the container. */
  public UserResource() {}

  private static final System.Logger LOG = System.getLogger(UserResource.class.getName());

  /**
   * @return {@code hello}: the application is up
   */
  @GET
  @Path("hello")
  public String hello() {
    return "hello";
  }

  /**
   * Fails as a bug of the user's would.
   *
   * @return never
   * @throws IllegalStateException always
   */
  @GET
  @Path("boom")
  public String boom() {
    throw new IllegalStateException("the user's own failure");
  }

  /**
   * Writes a line to the server log, so that a test knows the log has caught up.
   *
   * @param id the marker's id
   * @return the marker
   */
  @GET
  @Path("mark")
  public String mark(@QueryParam("id") String id) {
    String line = "kvmq-it mark " + id;
    LOG.log(System.Logger.Level.INFO, line);
    return line;
  }
}
