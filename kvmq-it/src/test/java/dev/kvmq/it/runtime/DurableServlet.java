package dev.kvmq.it.runtime;

import dev.kvmq.JobOptions;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;

/**
 * For {@link DataDirectoryIT}: {@code ?op=delay} pushes a job due in an hour and answers its id;
 * {@code ?op=status&id=} answers its status, or {@code none}; {@code ?op=unhandled} pushes a job to
 * a queue that no handler of this WAR takes; {@code ?op=frozen} pushes a job of group {@code
 * frozen}, due now, and answers its id.
 */
@WebServlet("/durable")
public class DurableServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Inject
  @QueueName("later")
  transient JobQueue<Bill> later;

  @Inject
  @QueueName("nobody-handles-this")
  transient JobQueue<Bill> unhandled;

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    String answer =
        switch (request.getParameter("op")) {
          case "delay" ->
              later
                  .push(new Bill("later", 1, 0), JobOptions.defaults().delay(Duration.ofHours(1)))
                  .orElseThrow()
                  .id();
          case "status" ->
              later.job(request.getParameter("id")).map(j -> j.status().name()).orElse("none");
          case "unhandled" -> unhandled.push(new Bill("nobody", 1, 0)).orElseThrow().id();
          case "frozen" ->
              later
                  .push(new Bill("frozen", 1, 0), JobOptions.defaults().group("frozen"))
                  .orElseThrow()
                  .id();
          default -> "?";
        };
    response.setContentType("text/plain");
    response.getWriter().print(answer);
  }
}
