package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The admin API's event streams end with the application: a dashboard left open across a redeploy
 * used to keep the old deployment's stream, which never sent another event (seen on WildFly 39), so
 * it showed frozen counts and never reconnected.
 */
class KvmqRuntimeStreamsTest {

  @Test
  void stoppingTheApplicationClosesItsOpenEventStreamsAndRefusesNewOnes() {
    KvmqRuntime runtime = new KvmqRuntime();
    AtomicInteger open = new AtomicInteger();
    AutoCloseable first = open::decrementAndGet;
    AutoCloseable ended = open::decrementAndGet;
    assertThat(runtime.streamOpened(first)).isTrue();
    assertThat(runtime.streamOpened(ended)).isTrue();
    open.set(2);
    runtime.streamClosed(ended); // its client went away: not closed again
    open.decrementAndGet();

    runtime.shutdown();

    assertThat(open).as("the stream still open was closed, once").hasValue(0);
    assertThat(runtime.streamOpened(() -> {}))
        .as("no stream opens on a stopped application")
        .isFalse();
  }
}
