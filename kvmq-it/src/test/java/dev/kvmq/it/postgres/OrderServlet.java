package dev.kvmq.it.postgres;

import dev.kvmq.it.support.postgres.PlacedOrder;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.transaction.UserTransaction;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * {@code /orders?op=place&id=ID&rollback=BOOL}: in one JTA transaction, inserts the order's row and
 * pushes its job, then commits (answers {@code committed JOB-ID}) or rolls back (answers {@code
 * rolled-back}). {@code op=ping} answers {@code ok} once the application runs.
 */
@WebServlet("/orders")
public class OrderServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Inject
  @QueueName("orders")
  transient JobQueue<PlacedOrder> orders;

  @Resource(lookup = PostgresTransactionalPushIT.APP_DATASOURCE)
  transient DataSource app;

  @Resource transient UserTransaction ut;

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setContentType("text/plain");
    if ("ping".equals(request.getParameter("op"))) {
      response.getWriter().print("ok");
      return;
    }
    String id = request.getParameter("id");
    boolean rollback = Boolean.parseBoolean(request.getParameter("rollback"));
    try {
      ut.begin();
      try (Connection c = app.getConnection();
          PreparedStatement ps = c.prepareStatement("INSERT INTO orders (id) VALUES (?)")) {
        ps.setString(1, id);
        ps.executeUpdate();
      }
      String job = orders.push(new PlacedOrder(id)).orElseThrow().id();
      if (rollback) {
        ut.rollback();
        response.getWriter().print("rolled-back");
      } else {
        ut.commit();
        response.getWriter().print("committed " + job);
      }
    } catch (Exception e) {
      try {
        ut.rollback();
      } catch (Exception again) {
        e.addSuppressed(again);
      }
      response.sendError(500, e.toString());
    }
  }
}
