package dev.kvmq.it.arquillian;

import java.util.logging.Logger;
import org.jboss.arquillian.container.spi.client.protocol.metadata.HTTPContext;
import org.jboss.arquillian.container.spi.client.protocol.metadata.ProtocolMetaData;
import org.jboss.arquillian.container.spi.client.protocol.metadata.Servlet;
import org.jboss.arquillian.container.spi.event.container.AfterDeploy;
import org.jboss.arquillian.core.api.Instance;
import org.jboss.arquillian.core.api.annotation.Inject;
import org.jboss.arquillian.core.api.annotation.Observes;
import org.jboss.arquillian.core.spi.LoadableExtension;
import org.jboss.arquillian.protocol.servlet5.ServletMethodExecutor;

/**
 * Works around a race in the managed Payara Micro connector ({@code
 * arquillian-payara-micro-managed} 3.1): it reads a deployment's servlets from Payara Micro's log,
 * in a copy of the log taken as soon as the instance's configuration has appeared in it up to its
 * HTTPS port. When that copy ends before the list of deployed applications that follows, the
 * connector reports an HTTP context with no servlets, and every in-container test of the class
 * fails with "ArquillianServletRunnerEE9 not found" although the WAR is deployed (docs/servers.md).
 * After a deployment, this adds Arquillian's test servlet at the context root Payara Micro gives a
 * WAR deployed with {@code --deploy}, its file name without {@code .war}, to an HTTP context that
 * lists no servlet at all. A context that lists servlets is left as the connector read it.
 */
public final class ServletRunnerFallback implements LoadableExtension {

  private static final Logger LOG = Logger.getLogger(ServletRunnerFallback.class.getName());

  /** Registers the observer. */
  @Override
  public void register(ExtensionBuilder builder) {
    builder.observer(AfterDeployObserver.class);
  }

  /**
   * Adds the test servlet to each HTTP context of {@code metaData} that lists no servlet.
   *
   * @param metaData what the connector reported for a deployment
   * @param archiveName the deployed archive's file name, such as {@code runtime.war}
   * @return how many contexts it completed
   */
  static int addRunnerWhereNoServletIsListed(ProtocolMetaData metaData, String archiveName) {
    String contextRoot =
        "/"
            + (archiveName.endsWith(".war")
                ? archiveName.substring(0, archiveName.length() - ".war".length())
                : archiveName);
    int completed = 0;
    for (HTTPContext context : metaData.getContexts(HTTPContext.class)) {
      if (context.getServlets().isEmpty()) {
        context.add(new Servlet(ServletMethodExecutor.ARQUILLIAN_SERVLET_NAME, contextRoot));
        completed++;
      }
    }
    return completed;
  }

  /** Observes each deployment's end and completes what the connector reported. */
  public static final class AfterDeployObserver {
    @Inject private Instance<ProtocolMetaData> metaData;

    /**
     * Completes the deployment's HTTP contexts that list no servlet.
     *
     * @param event the deployment that ended
     */
    public void completeServlets(@Observes AfterDeploy event) {
      ProtocolMetaData m = metaData.get();
      if (m == null || event.getDeployment().getArchive() == null) {
        return;
      }
      String name = event.getDeployment().getArchive().getName();
      if (addRunnerWhereNoServletIsListed(m, name) > 0) {
        LOG.warning(
            "the Payara Micro connector listed no servlet for "
                + name
                + " (it read the log before the deployed applications): added "
                + ServletMethodExecutor.ARQUILLIAN_SERVLET_NAME
                + " at its default context root");
      }
    }
  }
}
