package dev.kvmq.it.support.app;

import dev.kvmq.Job;
import dev.kvmq.Worker;
import dev.kvmq.WorkerOptions;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/**
 * The tests' remote control, at {@code /control?op=...} (plain text answers): {@code push} ({@code
 * queue}, {@code label}, {@code mode}, {@code workMs}; answers the id), {@code job} ({@code queue},
 * {@code id}; answers {@code status|attempt|token} or {@code absent}), {@code counts}, {@code
 * pause}, {@code resume}, {@code open} (the {@link Gate}), {@code takeover} / {@code takeover-stop}
 * (a second worker on the {@code hold} queue, as another node would run), {@code ping} (answers an
 * id that is new with every deployment).
 */
@WebServlet("/control")
public class ControlServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  /** New with every deployment: this class is loaded again by the new class loader. */
  private static final String DEPLOYMENT = UUID.randomUUID().toString();

  private static Worker<Task> other;
  private static ScheduledExecutorService otherThreads;

  @Inject
  @QueueName("work")
  transient JobQueue<Task> work;

  @Inject
  @QueueName("hold")
  transient JobQueue<Task> hold;

  @Override
  protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    doGet(req, resp);
  }

  @Override
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String op = req.getParameter("op");
    JobQueue<Task> queue = "hold".equals(req.getParameter("queue")) ? hold : work;
    String answer;
    try {
      answer =
          switch (op == null ? "" : op) {
            case "ping" -> DEPLOYMENT;
            case "push" ->
                queue
                    .push(
                        new Task(
                            req.getParameter("label"),
                            req.getParameter("mode"),
                            Integer.parseInt(
                                Optional.ofNullable(req.getParameter("workMs")).orElse("0"))))
                    .map(Job::id)
                    .orElseThrow();
            case "job" ->
                queue
                    .job(req.getParameter("id"))
                    .map(j -> j.status() + "|" + j.attempt() + "|" + j.token())
                    .orElse("absent");
            case "counts" -> queue.counts() + "|paused=" + queue.isPaused();
            case "pause" -> {
              queue.pause();
              yield "paused";
            }
            case "resume" -> {
              queue.resume();
              yield "resumed";
            }
            case "open" -> {
              Gate.open();
              yield "open";
            }
            case "takeover" -> takeover();
            case "takeover-stop" -> takeoverStop();
            default -> throw new IllegalArgumentException("unknown op " + op);
          };
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      resp.setStatus(500);
      return;
    } catch (RuntimeException | NamingException e) {
      resp.setStatus(500);
      resp.setContentType("text/plain");
      resp.getWriter().write(e.toString());
      return;
    }
    resp.setContentType("text/plain");
    resp.getWriter().write(answer);
  }

  /**
   * Starts a second worker on the {@code hold} queue with its own threads, as a second node sharing
   * the store would: it reclaims jobs whose leases expired and runs them.
   */
  private synchronized String takeover() throws NamingException {
    if (other != null) {
      return "already";
    }
    ManagedThreadFactory threads =
        (ManagedThreadFactory) new InitialContext().lookup("java:comp/DefaultManagedThreadFactory");
    otherThreads = Executors.newScheduledThreadPool(2, threads);
    other =
        hold.queue()
            .worker(
                (job, ctx) -> Journal.add("takeover", job, ctx.attempt(), ctx.token(), "-"),
                new WorkerOptions(
                    1, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofMillis(200)),
                otherThreads);
    other.start();
    return "started";
  }

  private synchronized String takeoverStop() throws InterruptedException {
    if (other == null) {
      return "none";
    }
    boolean stopped = other.stop(Duration.ofSeconds(10));
    otherThreads.shutdown();
    other = null;
    return "stopped=" + stopped;
  }
}
