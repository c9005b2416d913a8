package dev.kvmq.bench.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

class StealTest {

  @Test
  void theTotalIsTheFirstEightFieldsAndTheStealTheEighth() {
    // user nice system idle iowait irq softirq steal guest guest_nice: guest is within user
    long[] cpu = QueueBenchChild.Steal.parse("cpu  600 10 200 3000 50 0 40 100 300 0");
    assertThat(cpu).containsExactly(4000, 100);
  }

  @Test
  void aLineWithoutStealHasNone() {
    long[] cpu = QueueBenchChild.Steal.parse("cpu  600 10 200 3000 50 0 40");
    assertThat(cpu).containsExactly(3900, 0);
  }

  @Test
  @EnabledOnOs(OS.LINUX) // /proc/stat
  void thisMachinesLineReadsAsSomeTimeWithStealWithinIt() {
    long[] cpu = QueueBenchChild.Steal.read();
    assertThat(cpu[0]).isPositive();
    assertThat(cpu[1]).isBetween(0L, cpu[0]);
  }
}
