package dev.kvmq.it.smoke;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

/**
 * The harness itself: a trivial WAR (a CDI bean behind a JAX-RS resource) deploys to Payara Micro,
 * a test runs inside the server with injection, and one runs outside over HTTP.
 */
@OnPayara
class SmokeIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "smoke.war";

  @Deployment
  static WebArchive war() {
    return Wars.testWar(WAR).addClasses(Greeter.class, HelloResource.class, SmokeApplication.class);
  }

  @Inject Greeter greeter;

  @ArquillianResource URL base;

  @Test
  void runsInsideTheServerWithCdi() {
    assertThat(greeter).as("injected into the test inside Payara").isNotNull();
    assertThat(greeter.greet("cdi")).isEqualTo("hello cdi");
  }

  @Test
  @RunAsClient
  void answersOverHttp() throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(Wars.root(base, WAR) + "api/hello?name=kvmq"))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hello kvmq");
  }
}
