package dev.kvmq.bench.queue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The versions of kvmq and of the peers this build of kvmq-bench runs (from its pom). */
final class Versions {

  private static final Properties VERSIONS = load();

  private Versions() {}

  /** The version of {@code name} (kvmq, db-scheduler, jobrunr, quartz, hikaricp). */
  static String of(String name) {
    String v = VERSIONS.getProperty(name);
    if (v == null || v.startsWith("${")) {
      throw new IllegalStateException(
          "no version of " + name + " in versions.properties: build kvmq-bench with Maven");
    }
    return v;
  }

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = Versions.class.getResourceAsStream("versions.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }
}
