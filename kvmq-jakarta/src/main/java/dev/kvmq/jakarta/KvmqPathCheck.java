package dev.kvmq.jakarta;

import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Says at a web application's start, in one WARNING, when its configuration asks for kvmq's admin
 * API ({@code kvmq.rest.enabled=true}) and its {@code web.xml} maps {@link KvmqRestApplication}
 * nowhere, so the API is not served (docs/jakarta.md, "Admin REST API"). It reads; it registers,
 * maps and changes nothing.
 *
 * <p>A {@link ServletContainerInitializer} because the servlets of {@code web.xml} are known to the
 * container before any CDI event with the {@code ServletContext} (Payara's start event carries
 * none). The container makes and calls it (listed in {@code META-INF/services}); an application
 * does not use it.
 */
public final class KvmqPathCheck implements ServletContainerInitializer {

  private static final System.Logger LOG = System.getLogger(KvmqRuntime.class.getName());

  /** Made by the servlet container. */
  public KvmqPathCheck() {}

  /**
   * Warns if the configuration asks for the admin API and nothing maps it; never throws.
   *
   * @param classes unused (no {@code HandlesTypes})
   * @param context the web application starting
   */
  @Override
  public void onStartup(Set<Class<?>> classes, ServletContext context) {
    try {
      ServletRegistration api = context.getServletRegistration(KvmqRestApplication.class.getName());
      Collection<String> mappings = api == null ? List.of() : api.getMappings();
      unmappedApi(KvmqConfig.load(), mappings)
          .ifPresent(m -> LOG.log(System.Logger.Level.WARNING, m));
    } catch (RuntimeException e) {
      // a configuration that can't be read here is reported by the deployment's own checks
      LOG.log(System.Logger.Level.DEBUG, "kvmq: the admin API's mapping was not checked", e);
    }
  }

  /**
   * What to warn of when the configuration asks for the admin API ({@code kvmq.rest.enabled=true})
   * and the application mapped it nowhere: until 2026-12-06 the property alone served it at {@code
   * /kvmq}; now nothing is served at a path the application did not give kvmq.
   *
   * @param mappings the URL patterns of {@link KvmqRestApplication}'s servlet, empty when none
   */
  static Optional<String> unmappedApi(KvmqConfig config, Collection<String> mappings) {
    if (!mappings.isEmpty() || !config.restEnabledExplicitly()) {
      return Optional.empty();
    }
    return Optional.of(
        "kvmq: kvmq.rest.enabled=true, but the admin API is mapped nowhere, so it is not served:"
            + " declare in web.xml a <servlet> of the servlet-name "
            + KvmqRestApplication.class.getName()
            + " and a <servlet-mapping> of it to the url-pattern /kvmq/* (docs/jakarta.md,"
            + " \"Admin REST API\")");
  }
}
