package dev.kvmq.jakarta;

import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * The admin REST API, served only where the application maps it: it carries no {@code
 * ApplicationPath}, so a WAR with kvmq serves nothing at {@code /kvmq} (or anywhere) until its
 * {@code web.xml} maps this class by name (Jakarta REST's servlet-mapping of an {@code Application}
 * subclass):
 *
 * <pre>{@code
 * <servlet>
 *   <servlet-name>dev.kvmq.jakarta.KvmqRestApplication</servlet-name>
 * </servlet>
 * <servlet-mapping>
 *   <servlet-name>dev.kvmq.jakarta.KvmqRestApplication</servlet-name>
 *   <url-pattern>/kvmq/*</url-pattern>
 * </servlet-mapping>
 * }</pre>
 *
 * <p>Every endpoint requires the role {@code kvmq-admin}: protect {@code /kvmq/*} with a security
 * constraint in the same {@code web.xml} (HTTP Basic or what the application uses) and grant the
 * role as the application likes. The dashboard ({@link DashboardResource}) is at {@code
 * /kvmq/dashboard}, behind the same role. {@code kvmq.rest.enabled=false} turns a mapped API off
 * (404) without a new build.
 *
 * <p>kvmq's resources, its exception mapper and its request filter are registered here and nowhere
 * else: none carries {@code @Provider}, and a resource picked up by another application of the WAR
 * that relies on scanning answers 404 there. Cross-origin state changes are refused with 403 (see
 * {@code docs/jakarta.md}).
 */
public class KvmqRestApplication extends Application {

  /** Made by the container. */
  public KvmqRestApplication() {}

  /**
   * Only kvmq's own resources and providers: the resources, the exception mapper and the request
   * filter (scoping and cross-origin refusal).
   *
   * @return the classes of this application
   */
  @Override
  public Set<Class<?>> getClasses() {
    return Set.of(
        QueuesResource.class,
        DashboardResource.class,
        ProblemMapper.class,
        KvmqRequestFilter.class);
  }
}
