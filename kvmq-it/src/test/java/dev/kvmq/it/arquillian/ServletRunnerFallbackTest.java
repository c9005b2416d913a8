package dev.kvmq.it.arquillian;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.jboss.arquillian.container.spi.client.protocol.metadata.HTTPContext;
import org.jboss.arquillian.container.spi.client.protocol.metadata.ProtocolMetaData;
import org.jboss.arquillian.container.spi.client.protocol.metadata.Servlet;
import org.junit.jupiter.api.Test;

/** What {@link ServletRunnerFallback} does to what the Payara Micro connector reported. */
class ServletRunnerFallbackTest {

  @Test
  void aContextWithNoServletGetsTheTestServletAtTheWarsDefaultContextRoot() {
    HTTPContext context = new HTTPContext("127.0.0.1", 8123);
    ProtocolMetaData metaData = new ProtocolMetaData().addContext(context);

    assertThat(ServletRunnerFallback.addRunnerWhereNoServletIsListed(metaData, "runtime.war"))
        .isEqualTo(1);

    Servlet runner = context.getServletByName("ArquillianServletRunnerEE9");
    assertThat(runner).isNotNull();
    assertThat(runner.getBaseURI()).isEqualTo(URI.create("http://127.0.0.1:8123/runtime/"));
  }

  @Test
  void aContextThatListsServletsIsLeftAsTheConnectorReadIt() {
    HTTPContext context = new HTTPContext("127.0.0.1", 8123);
    context.add(new Servlet("ArquillianServletRunnerEE9", "/elsewhere"));
    context.add(new Servlet("default", "/elsewhere"));
    ProtocolMetaData metaData = new ProtocolMetaData().addContext(context);

    assertThat(ServletRunnerFallback.addRunnerWhereNoServletIsListed(metaData, "runtime.war"))
        .isZero();

    assertThat(context.getServlets()).hasSize(2);
    assertThat(context.getServletByName("ArquillianServletRunnerEE9").getContextRoot())
        .isEqualTo("/elsewhere");
  }
}
