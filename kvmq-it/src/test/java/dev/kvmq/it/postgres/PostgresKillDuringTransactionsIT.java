package dev.kvmq.it.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.Payaras;
import dev.kvmq.it.support.ServerProcess;
import dev.kvmq.it.support.Wait;
import dev.kvmq.it.support.postgres.PgServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The crash test for a push in the application's transaction, on Payara Micro 6 with
 * PostgreSQL: two clients place orders without pause (a row and its job in one JTA transaction, a
 * third rolled back at random) while Payara is killed with SIGKILL at a random moment, then started
 * again on the same database. Afterwards every order row has exactly one job that ran (its {@code
 * handled} row) and no job ran without its row; every order the server said it committed exists,
 * none it said it rolled back does; no job is left.
 *
 * <p>Payara is started as a process, so that it can be killed.
 */
@Tag("payara")
class PostgresKillDuringTransactionsIT {

  private static final String PREFIX = "kill-";

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void rowsAndJobsMatchOneToOneAfterASigkillAndEveryJobRuns() throws Exception {
    String url = PgServer.start();
    PgServer.execute(
        "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY);"
            + " CREATE TABLE IF NOT EXISTS handled (id text PRIMARY KEY)");
    Path work = Payaras.work("pg-kill");
    Path war = work.resolve("orders.war");
    PostgresTransactionalPushIT.war("orders.war", url)
        .addClass(OrderServlet.class)
        .as(ZipExporter.class)
        .exportTo(war.toFile(), true);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    String run = "seed " + seed;

    Set<String> saidCommitted = ConcurrentHashMap.newKeySet();
    Set<String> saidRolledBack = ConcurrentHashMap.newKeySet();
    AtomicInteger next = new AtomicInteger();
    int port = ServerProcess.freePort();
    try (ServerProcess payara = Payaras.start(work, war, port, Map.of(), "payara-1.log")) {
      awaitPing(payara, port);
      int killAfter = 30 + random.nextInt(60);
      List<Thread> clients = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        Random own = new Random(random.nextLong());
        Thread client =
            new Thread(
                () -> placeUntilFailure(port, own, next, saidCommitted, saidRolledBack),
                "client-" + t);
        client.start();
        clients.add(client);
      }
      Wait.until(
          "the clients placed " + killAfter + " orders (" + run + ")",
          Duration.ofMinutes(2),
          () -> saidCommitted.size() + saidRolledBack.size() >= killAfter);
      payara.kill();
      for (Thread client : clients) {
        client.join(Duration.ofSeconds(60).toMillis());
        assertThat(client.isAlive()).as("a client still runs after the kill").isFalse();
      }
    }
    assertThat(saidCommitted).as("commits before the kill (%s)", run).isNotEmpty();
    int rowsAtKill = orders().size();
    int ranAtKill = handled().size();

    int port2 = ServerProcess.freePort();
    try (ServerProcess payara = Payaras.start(work, war, port2, Map.of(), "payara-2.log")) {
      awaitPing(payara, port2);
      Wait.until(
          "every order's job ran and none is left (" + run + ")",
          Duration.ofMinutes(2),
          () -> {
            payara.assertAlive();
            return orders().equals(handled()) && jobsLeft() == 0;
          });
      Set<String> orders = orders();
      assertThat(orders)
          .as("orders the server said it committed (%s)", run)
          .containsAll(saidCommitted);
      assertThat(orders)
          .as("orders it said it rolled back (%s)", run)
          .doesNotContainAnyElementsOf(saidRolledBack);
      assertThat(handled()).as("jobs that ran, one per order row (%s)", run).isEqualTo(orders);
      System.out.printf(
          "pg kill test (%s): %d orders sent, %d said committed, %d said rolled back;"
              + " at the kill %d rows, %d of their jobs had run; after the restart %d rows and"
              + " as many jobs ran%n",
          run,
          next.get(),
          saidCommitted.size(),
          saidRolledBack.size(),
          rowsAtKill,
          ranAtKill,
          orders.size());
      assertThat(payara.stop(Duration.ofSeconds(60))).as("Payara stopped").isTrue();
    }
  }

  /** Places orders until a request fails (the server was killed). */
  private void placeUntilFailure(
      int port, Random random, AtomicInteger next, Set<String> committed, Set<String> rolledBack) {
    while (true) {
      String id = PREFIX + next.getAndIncrement();
      boolean rollback = random.nextInt(3) == 0;
      HttpResponse<String> r;
      try {
        r =
            http.send(
                request(port, "op=place&id=" + id + "&rollback=" + rollback),
                HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        return; // the kill: the outcome of this order is unknown, and the check covers it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (r.statusCode() != 200) {
        return; // dying server
      }
      if (r.body().startsWith("committed ")) {
        committed.add(id);
      } else if (r.body().equals("rolled-back")) {
        rolledBack.add(id);
      } else {
        return;
      }
    }
  }

  private static Set<String> orders() {
    return PgServer.strings("SELECT id FROM orders WHERE id LIKE '" + PREFIX + "%'");
  }

  private static Set<String> handled() {
    return PgServer.strings("SELECT id FROM handled WHERE id LIKE '" + PREFIX + "%'");
  }

  private static long jobsLeft() {
    return PgServer.query(
        "SELECT count(*) FROM kvmq_kv WHERE position(convert_to('"
            + PREFIX
            + "', 'UTF8') in value) > 0");
  }

  private void awaitPing(ServerProcess payara, int port) {
    Wait.until(
        "the application to answer",
        Duration.ofMinutes(2),
        () -> {
          payara.assertAlive();
          HttpResponse<String> r =
              http.send(request(port, "op=ping"), HttpResponse.BodyHandlers.ofString());
          return r.statusCode() == 200 && r.body().equals("ok");
        });
  }

  private static HttpRequest request(int port, String query) {
    return HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/orders/orders?" + query))
        .timeout(Duration.ofSeconds(30))
        .GET()
        .build();
  }
}
