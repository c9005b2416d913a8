package dev.kvmq.it.schedule;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** The runs that {@link TickHandler} wrote, read on the test's side. */
record Runs(List<Run> all) {

  /**
   * One handler call.
   *
   * @param slot the job's slot
   * @param jobId the job
   * @param schedule the schedule that pushed it
   * @param label its state's label
   * @param node the server that ran it
   */
  record Run(Instant slot, String jobId, String schedule, String label, String node) {}

  static Runs read(Path file) throws IOException {
    List<Run> runs = new ArrayList<>();
    if (Files.exists(file)) {
      for (String line : Files.readAllLines(file)) {
        String[] f = line.split(" ");
        if (f.length == 5 && !f[0].equals("-")) {
          runs.add(new Run(Instant.ofEpochMilli(Long.parseLong(f[0])), f[1], f[2], f[3], f[4]));
        }
      }
    }
    return new Runs(runs);
  }

  /** The distinct job ids per slot of one schedule. */
  Map<Instant, Set<String>> jobsBySlot(String schedule) {
    Map<Instant, Set<String>> m = new TreeMap<>();
    for (Run r : all) {
      if (r.schedule().equals(schedule)) {
        m.computeIfAbsent(r.slot(), s -> new TreeSet<>()).add(r.jobId());
      }
    }
    return m;
  }

  /** The latest slot of one schedule, or the epoch if none. */
  Instant lastSlot(String schedule) {
    return all.stream()
        .filter(r -> r.schedule().equals(schedule))
        .map(Run::slot)
        .max(Instant::compareTo)
        .orElse(Instant.EPOCH);
  }

  /** Whether some run of this schedule has a slot at or after {@code t}. */
  boolean reached(String schedule, Instant t) {
    return !lastSlot(schedule).isBefore(t);
  }
}
