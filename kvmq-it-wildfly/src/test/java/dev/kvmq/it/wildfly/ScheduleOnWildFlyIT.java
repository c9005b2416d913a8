package dev.kvmq.it.wildfly;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.it.support.Fact;
import dev.kvmq.it.support.Wait;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * An annotated schedule on WildFly (default {@code standalone.xml}, kvmq's default store under the
 * server's data directory), over a restart: {@link TickHandler}'s schedule every second runs each
 * slot once, its state decoded from the annotation's JSON; the first start says the schedule was
 * created, the second (same definition) says nothing about it; the slots missed while the server
 * was down each get a job (missed runs RUN_EACH): from the first slot to seconds after the restart,
 * no slot is missing and none has two jobs.
 */
class ScheduleOnWildFlyIT {

  private static final String CREATED =
      "kvmq: schedule \"every-second\" of queue \"ticks\" created";

  @Test
  void runsEachSlotOnceOverARestart() throws Exception {
    Instant stopped;
    Instant restarted;
    try (WildFlyServer server =
        WildFlyServer.start(
            "schedule",
            Wars.app().addClasses(Tick.class, TickHandler.class),
            UnaryOperator.identity(),
            Map.of())) {
      Wait.until(
          "three slots of every-second",
          Duration.ofSeconds(30),
          () -> jobsBySlot(server.journal()),
          slots -> slots.size() >= 3);
      assertThat(server.logText()).contains(CREATED);
      assertThat(server.journal().stream().filter(f -> f.kind().equals("tick")))
          .allSatisfy(
              f -> {
                assertThat(f.detail()).endsWith(",every-second,tick");
                assertThat(f.attempt()).isEqualTo(1);
              });

      server.stop();
      stopped = Instant.now();
      server.startAgain();
      restarted = Instant.now();

      Instant until = restarted.plusSeconds(5);
      Wait.until(
          "slots of every-second after the restart",
          Duration.ofSeconds(60),
          () -> jobsBySlot(server.journal()),
          slots -> !slots.isEmpty() && !slots.lastKey().isBefore(until));
      String log = server.logText();
      assertThat(log)
          .as("the same definition again writes nothing and says nothing")
          .doesNotContain(CREATED)
          .doesNotContain("\"every-second\" of queue \"ticks\" replaced");

      TreeMap<Instant, Set<String>> slots = jobsBySlot(server.journal());
      Instant first = slots.firstKey();
      Instant end = restarted.plusSeconds(3).truncatedTo(ChronoUnit.SECONDS);
      assertThat(Duration.between(stopped, restarted))
          .as("the server was down for some slots")
          .isGreaterThan(Duration.ofSeconds(1));
      for (Instant t = first; !t.isAfter(end); t = t.plusSeconds(1)) {
        assertThat(slots.get(t))
            .as("the jobs of slot %s (first %s, down %s to %s)", t, first, stopped, restarted)
            .isNotNull()
            .hasSize(1);
      }
      assertThat(slots.values())
          .as("no slot has two jobs")
          .allSatisfy(j -> assertThat(j).hasSize(1));
    }
  }

  /** The ids of the jobs that ran, by their slot. */
  private static TreeMap<Instant, Set<String>> jobsBySlot(List<Fact> journal) {
    TreeMap<Instant, Set<String>> slots = new TreeMap<>();
    for (Fact f : journal) {
      if (f.kind().equals("tick")) {
        Instant slot = Instant.ofEpochMilli(Long.parseLong(f.detail().split(",", 2)[0]));
        slots.computeIfAbsent(slot, s -> new TreeSet<>()).add(f.jobId());
      }
    }
    return slots;
  }
}
