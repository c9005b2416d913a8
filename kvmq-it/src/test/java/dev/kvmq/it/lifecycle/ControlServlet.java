package dev.kvmq.it.lifecycle;

import java.io.IOException;
import java.util.Optional;
import java.util.UUID;

import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.kvmq.Job;
import dev.kvmq.jakarta.JobQueue;
import dev.kvmq.jakarta.QueueName;

/**
 * The test's remote control, at {@code /control?op=...} (plain text answers): {@code ping}
 * (answers an id that is new with every deployment), {@code push} ({@code label},
 * {@code mode}, {@code workMs}; answers the job's id), {@code job} ({@code id}; answers
 * {@code status|attempt|token} or {@code absent}), {@code counts}.
 */
@WebServlet("/control")
public class ControlServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** New with every deployment: this class is loaded again by the new class loader. */
    private static final String DEPLOYMENT = UUID.randomUUID().toString();

    @Inject
    @QueueName("work")
    transient JobQueue<Task> work;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String op = Optional.ofNullable(req.getParameter("op")).orElse("");
        String answer;
        try {
            answer = switch (op) {
                case "ping" -> DEPLOYMENT;
                case "push" -> work.push(new Task(req.getParameter("label"), req.getParameter("mode"),
                        Integer.parseInt(Optional.ofNullable(req.getParameter("workMs")).orElse("0"))))
                        .map(Job::id).orElseThrow();
                case "job" -> work.job(req.getParameter("id"))
                        .map(j -> j.status() + "|" + j.attempt() + "|" + j.token()).orElse("absent");
                case "counts" -> work.counts().toString();
                default -> throw new IllegalArgumentException("unknown op " + op);
            };
        } catch (RuntimeException e) {
            resp.setStatus(500);
            resp.setContentType("text/plain");
            resp.getWriter().write(e.toString());
            return;
        }
        resp.setContentType("text/plain");
        resp.getWriter().write(answer);
    }
}
