package dev.kvmq.it.runtime;

import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Pushes jobs for the tests that run outside the server: {@code /push?queue=timed&jobs=6&ms=120} or
 * {@code /push?queue=nobody-handles-this&jobs=2}.
 */
@WebServlet("/push")
public class PushServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Inject
  @QueueName("timed")
  transient JobQueue<Bill> timed;

  @Inject
  @QueueName("nobody-handles-this")
  transient JobQueue<Bill> unhandled;

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    int jobs = Integer.parseInt(request.getParameter("jobs"));
    String ms = request.getParameter("ms");
    JobQueue<Bill> queue = "timed".equals(request.getParameter("queue")) ? timed : unhandled;
    for (int i = 0; i < jobs; i++) {
      queue.push(new Bill("pushed-" + i, i, ms == null ? 0 : Integer.parseInt(ms)));
    }
    response.setContentType("text/plain");
    response.getWriter().print(jobs);
  }
}
