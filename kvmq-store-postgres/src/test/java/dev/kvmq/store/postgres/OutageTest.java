package dev.kvmq.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.UndeclaredThrowableException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * What an outage's log line says of its failure. Payara's connection proxy ({@code
 * ConnectionHolder40}) threw an {@link UndeclaredThrowableException} around the driver's exception:
 * the listener's WARNING said "failed: null", with the cause only in the stack trace.
 */
class OutageTest {

  @Test
  void aFailureWithAMessageIsItsMessage() {
    assertThat(Outage.describe(new SQLException("connection refused", "08001")))
        .isEqualTo("connection refused");
  }

  @Test
  void aProxysWrapperWithoutAMessageIsDescribedByTheCauseThatHasOne() {
    SQLException driver = new SQLException("This connection has been closed.", "08003");
    Exception proxy = new UndeclaredThrowableException(new RuntimeException(driver));

    assertThat(Outage.describe(proxy))
        .isEqualTo(
            "java.lang.RuntimeException: java.sql.SQLException: This connection has been closed.");
    assertThat(Outage.describe(new UndeclaredThrowableException(driver)))
        .isEqualTo("java.sql.SQLException: This connection has been closed. [SQLState 08003]");
  }

  @Test
  void aFailureWithNoMessageAnywhereIsItsType() {
    assertThat(Outage.describe(new UndeclaredThrowableException(new IllegalStateException())))
        .isEqualTo("java.lang.reflect.UndeclaredThrowableException");
  }
}
