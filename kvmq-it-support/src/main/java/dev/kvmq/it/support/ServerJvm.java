package dev.kvmq.it.support;

import java.util.Arrays;
import java.util.List;

/**
 * The JVM options of the servers the ITs start themselves: the system property {@code
 * kvmq.it.serverJvm}, which the IT modules' poms set from the parent pom's {@code it.serverJvm}
 * (and their {@code arquillian.xml} files pass to the servers Arquillian starts).
 */
public final class ServerJvm {

  private ServerJvm() {}

  /**
   * The options, split at whitespace.
   *
   * @return the options; empty if the property is unset or blank
   */
  public static List<String> options() {
    String value = System.getProperty("kvmq.it.serverJvm", "").strip();
    return value.isEmpty() ? List.of() : Arrays.asList(value.split("\\s+"));
  }

  /**
   * The options as one line, for a launcher's environment variable such as {@code JAVA_OPTS}.
   *
   * @return the options joined by spaces, or an empty string
   */
  public static String line() {
    return String.join(" ", options());
  }
}
