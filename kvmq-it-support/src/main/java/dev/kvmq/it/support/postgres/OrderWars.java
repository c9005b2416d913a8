package dev.kvmq.it.support.postgres;

import dev.kvmq.it.support.KvmqWars;
import dev.kvmq.it.support.Wait;
import dev.kvmq.store.postgres.PostgresKvStore;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Fills the WARs of the transactional push ITs on PostgreSQL, on either server: the order
 * application ({@link OrderTransactions}, {@link OrderHandler}), kvmq's PostgreSQL store and the
 * driver, and the DataSources of a {@code web.xml}.
 */
public final class OrderWars {

  /** pgjdbc's local DataSource. */
  public static final String SIMPLE = "org.postgresql.ds.PGSimpleDataSource";

  /** pgjdbc's XA DataSource. */
  public static final String XA = "org.postgresql.xa.PGXADataSource";

  /** kvmq's own DataSource ({@code kvmq.postgres.datasource}), never transactional. */
  public static final String KVMQ_DATASOURCE = "java:app/jdbc/kvmq";

  /** The jobs' XA DataSource of {@link #xaWebXml}. */
  public static final String JOBS_DATASOURCE = "java:app/jdbc/jobs";

  private OrderWars() {}

  /**
   * A {@code web.xml} with kvmq's own DataSource and two XA ones: the application's ({@value
   * OrderTransactions#APP_DATASOURCE}) and the jobs' ({@value #JOBS_DATASOURCE}), two resources
   * that a transaction manager commits in two phases.
   *
   * @param url the JDBC URL ({@link PgServer#start()})
   * @return the descriptor
   */
  public static String xaWebXml(String url) {
    return PgServer.webXml(
        PgServer.dataSource(KVMQ_DATASOURCE, SIMPLE, url, false),
        PgServer.dataSource(OrderTransactions.APP_DATASOURCE, XA, url, true),
        PgServer.dataSource(JOBS_DATASOURCE, XA, url, true));
  }

  /**
   * Adds the order application on kvmq's PostgreSQL store: the store's and the driver's jars, the
   * queue {@code orders} and its handler (completed jobs not kept, so that the tests can count the
   * job records left; at most 2 jobs of a group at once), {@code jtaDataSource} as {@code
   * kvmq.postgres.jta-datasource}, and {@code webXml}. The caller adds kvmq itself ({@link
   * KvmqWars#withKvmq}) and AssertJ.
   *
   * @param war the archive
   * @param webXml its {@code web.xml}, defining {@value #KVMQ_DATASOURCE} and {@code jtaDataSource}
   * @param jtaDataSource the DataSource pushes in a transaction go through
   * @return the same archive
   * @throws IllegalStateException if a jar can't be found
   */
  public static WebArchive withOrders(WebArchive war, String webXml, String jtaDataSource) {
    return war.addAsLibraries(
            KvmqWars.jarOf(PostgresKvStore.class), KvmqWars.jarOf(org.postgresql.Driver.class))
        .addClasses(PlacedOrder.class, OrderHandler.class, OrderTransactions.class, Wait.class)
        .addAsResource(
            new StringAsset(
                "kvmq.store=postgres\n"
                    + "kvmq.postgres.datasource="
                    + KVMQ_DATASOURCE
                    + "\n"
                    + "kvmq.postgres.jta-datasource="
                    + jtaDataSource
                    + "\n"
                    + "kvmq.queue.orders.keep-completed=none\n"
                    + "kvmq.queue.orders.group-limit=2\n"),
            "META-INF/microprofile-config.properties")
        .addAsWebInfResource(new StringAsset(webXml), "web.xml");
  }
}
