package dev.kvmq.it.held;

import dev.kvmq.Job;
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
import java.io.PrintWriter;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

/**
 * {@code /receipts?op=...} on the EclipseStore store, where a push in a JTA transaction is held:
 *
 * <ul>
 *   <li>{@code place&id=ID&rollback=BOOL}: pushes in a transaction, then commits ({@code committed
 *       JOB-ID}) or rolls back ({@code rolled-back JOB-ID});
 *   <li>{@code open&id=ID}: pushes in a transaction, answers {@code held JOB-ID} and flushes, and
 *       keeps the transaction open until the process is killed;
 *   <li>{@code rollback-only&id=ID}: pushes in a transaction marked for rollback; answers the
 *       refusal's message;
 *   <li>{@code status&job=JOB-ID}: the job's status, or {@code absent};
 *   <li>{@code ran}: the receipts that ran in this process, sorted, comma-separated;
 *   <li>{@code counts}: the queue's counts; {@code ping}: {@code ok}.
 * </ul>
 */
@WebServlet("/receipts")
public class ReceiptServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Inject
  @QueueName("receipts")
  transient JobQueue<Receipt> receipts;

  @Resource transient UserTransaction ut;

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setContentType("text/plain");
    PrintWriter out = response.getWriter();
    String id = request.getParameter("id");
    String job = request.getParameter("job");
    try {
      switch (request.getParameter("op")) {
        case "ping" -> out.print("ok");
        case "ran" -> out.print(String.join(",", new TreeSet<>(ReceiptHandler.RAN)));
        case "counts" -> out.print(receipts.counts());
        case "status" ->
            out.print(receipts.job(job).map(j -> j.status().toString()).orElse("absent"));
        case "place" -> {
          ut.begin();
          String pushed = receipts.push(new Receipt(id)).orElseThrow().id();
          if (Boolean.parseBoolean(request.getParameter("rollback"))) {
            ut.rollback();
            out.print("rolled-back " + pushed);
          } else {
            ut.commit();
            out.print("committed " + pushed);
          }
        }
        case "open" -> {
          ut.setTransactionTimeout(3600);
          ut.begin();
          Job<Receipt> held = receipts.push(new Receipt(id)).orElseThrow();
          out.println("held " + held.id());
          out.flush();
          response.flushBuffer();
          new CountDownLatch(1).await(); // inside the transaction until the process is killed
        }
        case "rollback-only" -> {
          ut.begin();
          ut.setRollbackOnly();
          try {
            receipts.push(new Receipt(id));
            out.print("pushed");
          } catch (IllegalStateException e) {
            out.print("refused: " + e.getMessage());
          } finally {
            ut.rollback();
          }
        }
        default -> response.sendError(400, "unknown op");
      }
    } catch (Exception e) {
      response.sendError(500, e.toString());
    }
  }
}
