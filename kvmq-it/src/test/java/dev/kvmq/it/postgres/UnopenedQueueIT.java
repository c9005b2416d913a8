package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.Codecs;
import dev.kvmq.Queue;
import dev.kvmq.it.AdminApi;
import dev.kvmq.it.OnPayara;
import dev.kvmq.it.Wars;
import dev.kvmq.it.dashboard.Browser;
import dev.kvmq.it.queue.TestUsers;
import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.postgres.OrderHandler;
import dev.kvmq.it.support.postgres.PgServer;
import dev.kvmq.it.support.postgres.PlacedOrder;
import dev.kvmq.store.postgres.PostgresKvStore;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.net.URI;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A queue whose jobs are in the store but that nothing in the application opens (its handler was
 * removed, or it was renamed; here: pushed by another process on the same PostgreSQL), seen through
 * the admin API on Payara: listed with {@code "opened": false} beside the application's own queue
 * ({@code "opened": true}), its jobs readable with their states as JSON (a state that is not JSON
 * shown as stored), deletable, and no push accepted (409, nothing written); in a real browser, the
 * dashboard marks it and shows those states.
 */
@OnPayara
class UnopenedQueueIT {

  /** The test WAR's name; its context root is the name without {@code .war}. */
  private static final String WAR = "kvmq-unopened.war";

  private static final String RETIRED = "retired-" + Long.toHexString(System.nanoTime());

  @Deployment(testable = false)
  static WebArchive war() {
    String url = PgServer.start();
    String webXml =
        KvmqWars.SECURE_WEB_XML.replace(
            "</web-app>",
            PgServer.dataSource(
                    "java:app/jdbc/kvmq", PostgresTransactionalPushIT.SIMPLE, url, false)
                + PgServer.dataSource(
                    PostgresTransactionalPushIT.APP_DATASOURCE,
                    PostgresTransactionalPushIT.SIMPLE,
                    url,
                    true)
                + "</web-app>");
    return Wars.withKvmq(Wars.testWar(WAR))
        .addAsLibraries(Wars.jarOf(PostgresKvStore.class), Wars.jarOf(org.postgresql.Driver.class))
        .addClasses(TestUsers.class, PlacedOrder.class, OrderHandler.class)
        .addAsResource(
            new StringAsset(
                "kvmq.rest.enabled=true\n"
                    + "kvmq.store=postgres\n"
                    + "kvmq.postgres.datasource=java:app/jdbc/kvmq\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(webXml), "web.xml")
        .addAsWebInfResource(
            new StringAsset(KvmqWars.SECURE_GLASSFISH_WEB_XML), "glassfish-web.xml");
  }

  @ArquillianResource URL base;

  private final AdminApi api = new AdminApi();

  @Test
  void aQueueNothingOpensIsListedReadAndCleanedButNotPushedTo() throws Exception {
    PGSimpleDataSource source = new PGSimpleDataSource();
    source.setUrl(PgServer.start());
    source.setUser("postgres");
    source.setPassword("postgres");
    try (PostgresKvStore store = PostgresKvStore.builder(source).build()) {
      // another process pushes, with no handler in the application: two JSON states, one not
      Queue<String> elsewhere = Queue.builder(store, RETIRED, Codecs.utf8()).build();
      String first = elsewhere.push("{\"sku\":\"a-1\",\"qty\":2}").id();
      String second = elsewhere.push("[1,2,3]").id();
      String plain = elsewhere.push("plain text, not JSON").id();

      Map<String, JsonObject> listed =
          array(send("GET", "kvmq/queues", null, 200)).stream()
              .map(JsonValue::asJsonObject)
              .collect(Collectors.toMap(o -> o.getString("name"), Function.identity()));
      assertThat(listed).containsKeys(RETIRED, "orders");
      assertThat(listed.get(RETIRED).getBoolean("opened")).isFalse();
      assertThat(listed.get(RETIRED).getInt("waiting")).isEqualTo(3);
      assertThat(listed.get("orders").getBoolean("opened")).isTrue();
      assertThat(object(send("GET", "kvmq/queues/" + RETIRED, null, 200)).getBoolean("opened"))
          .isFalse();

      Map<String, JsonObject> jobs =
          array(send("GET", "kvmq/queues/" + RETIRED + "/jobs", null, 200)).stream()
              .map(JsonValue::asJsonObject)
              .collect(Collectors.toMap(o -> o.getString("id"), Function.identity()));
      assertThat(jobs).containsOnlyKeys(first, second, plain);
      assertThat(jobs.get(first).getJsonObject("state").getString("sku")).isEqualTo("a-1");
      assertThat(jobs.get(first).getJsonObject("state").getInt("qty")).isEqualTo(2);
      assertThat(jobs.get(second).getJsonArray("state")).hasSize(3);
      assertThat(jobs.get(plain).isNull("state")).isTrue();
      assertThat(jobs.get(plain).getJsonObject("undecodedState").getString("text"))
          .isEqualTo("plain text, not JSON");

      dashboardShows();

      String refused =
          send("POST", "kvmq/queues/" + RETIRED + "/jobs", "{\"state\":{\"sku\":\"b\"}}", 409);
      assertThat(refused).contains("not opened by this application", "nothing was pushed");
      assertThat(elsewhere.counts().waiting()).as("nothing pushed").isEqualTo(3);

      send("DELETE", "kvmq/queues/" + RETIRED + "/jobs/" + plain, null, 204);
      assertThat(elsewhere.job(plain)).as("deleted through the admin API").isEmpty();
      assertThat(object(send("GET", "kvmq/queues/" + RETIRED, null, 200)).getInt("waiting"))
          .isEqualTo(2);
      send("GET", "kvmq/queues/no-such-queue-" + RETIRED, null, 404);

      send("DELETE", "kvmq/queues/" + RETIRED + "/jobs?status=waiting", null, 200);
      assertThat(elsewhere.counts().waiting()).isZero();
    }
  }

  /**
   * In a real browser: the overview marks the queue "no handler here" (and not the application's
   * own), and the queue's page shows the JSON states and the stored text of the one that is not
   * JSON, with why as its tooltip.
   */
  private void dashboardShows() throws Exception {
    String root = "http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR);
    try (Browser browser = Browser.inWorkDirectory("unopened", "admin", TestUsers.PASSWORD)) {
      browser.driver.get(root + "kvmq/dashboard");
      WebElement retired =
          Wait.until(
              "the retired queue's row",
              () ->
                  browser.driver.findElement(
                      By.cssSelector("#queues tbody tr[data-queue='" + RETIRED + "'] th")),
              WebElement::isDisplayed);
      assertThat(retired.findElement(By.cssSelector(".unopened")).getText())
          .isEqualTo("no handler here");
      assertThat(
              browser.driver.findElements(
                  By.cssSelector("#queues tbody tr[data-queue='orders'] .unopened")))
          .as("the application's own queue is not marked")
          .isEmpty();

      retired.findElement(By.cssSelector("a")).click();
      Wait.until(
          "the queue's jobs",
          () ->
              browser.driver.findElements(By.cssSelector("#jobs tbody td code")).stream()
                  .map(e -> e.getAttribute("textContent"))
                  .toList(),
          t -> t.size() == 3);
      List<WebElement> codes = browser.driver.findElements(By.cssSelector("#jobs tbody td code"));
      assertThat(codes.stream().map(e -> e.getAttribute("textContent")))
          .containsExactlyInAnyOrder(
              "{\"sku\":\"a-1\",\"qty\":2}", "[1,2,3]", "plain text, not JSON");
      WebElement undecoded =
          codes.stream()
              .filter(e -> e.getAttribute("textContent").equals("plain text, not JSON"))
              .findFirst()
              .orElseThrow();
      assertThat(undecoded.getAttribute("title")).startsWith("Does not decode: ");
    }
  }

  private String send(String method, String path, String body, int expected) {
    URI root = URI.create("http://127.0.0.1:" + base.getPort() + Wars.contextPath(base, WAR));
    return api.send(method, root.resolve(path), body, expected);
  }

  private static JsonArray array(String json) {
    try (JsonReader r = Json.createReader(new StringReader(json))) {
      return r.readArray();
    }
  }

  private static JsonObject object(String json) {
    try (JsonReader r = Json.createReader(new StringReader(json))) {
      return r.readObject();
    }
  }
}
