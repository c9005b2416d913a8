package dev.kvmq.it.support.postgres;

import dev.kvmq.Job;
import dev.kvmq.JobContext;
import dev.kvmq.JobHandler;
import dev.kvmq.jakarta.QueueHandler;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The handler of {@code orders}: records that the order's job ran, as a row in {@code handled}
 * (once per order, however often it runs), outside any transaction.
 */
@ApplicationScoped
@QueueHandler(value = "orders", concurrency = 2)
public class OrderHandler implements JobHandler<PlacedOrder> {

  @Resource(lookup = OrderTransactions.APP_DATASOURCE)
  DataSource app;

  @Override
  public void handle(Job<PlacedOrder> job, JobContext<PlacedOrder> ctx) throws SQLException {
    try (Connection c = app.getConnection();
        PreparedStatement ps =
            c.prepareStatement("INSERT INTO handled (id) VALUES (?) ON CONFLICT DO NOTHING")) {
      ps.setString(1, job.state().id());
      ps.executeUpdate();
    }
  }
}
