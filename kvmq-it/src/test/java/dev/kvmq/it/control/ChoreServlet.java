package dev.kvmq.it.control;

import jakarta.inject.Inject;
import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** {@code /chores?label=L}: the steps the handlers recorded for that job, comma-separated. */
@WebServlet("/chores")
public class ChoreServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Inject transient Chores chores;

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setContentType("text/plain");
    response.getWriter().print(String.join(",", chores.of(request.getParameter("label"))));
  }
}
