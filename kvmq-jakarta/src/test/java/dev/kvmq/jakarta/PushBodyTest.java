package dev.kvmq.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.kvmq.Backoff;
import dev.kvmq.JobOptions;
import dev.kvmq.UniqueKey;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The REST push body speaks {@link JobOptions}: its names, every option, and 400s naming the field.
 */
class PushBodyTest {

  @Test
  void everyOptionOfJobOptionsByItsName() {
    JobOptions o =
        PushBody.options(
            json(
                """
        {"state": {}, "priority": 2.5, "delay": "PT5M", "repeatCount": 3, "repeatDelay": "PT1H",
         "retryCount": 4, "retryBackoff": {"kind": "exponential", "initial": "PT1S", "multiplier": 2,
         "max": "PT1M", "jitter": 0.2}}"""));

    assertThat(o)
        .isEqualTo(
            JobOptions.defaults()
                .priority(2.5)
                .delay(Duration.ofMinutes(5))
                .repeat(3, Duration.ofHours(1))
                .retry(
                    4, Backoff.exponential(Duration.ofSeconds(1), 2, Duration.ofMinutes(1), 0.2)));
  }

  /** docs/jakarta.md's example body is accepted (it once had a unique key with repeats). */
  @Test
  void theExampleBodyOfTheDocsIsAccepted() throws java.io.IOException {
    String doc =
        java.nio.file.Files.readString(
            java.nio.file.Path.of("..", "docs", "jakarta.md"),
            java.nio.charset.StandardCharsets.UTF_8);
    String section = doc.substring(doc.indexOf("### The push body"));
    String body =
        section.substring(
            section.indexOf("```json") + 7, section.indexOf("```", section.indexOf("```json") + 7));

    JobOptions o = PushBody.options(json(body));

    assertThat(o.group()).isEqualTo("customer-42");
    assertThat(o.unique()).isEqualTo(UniqueKey.whileWaiting("mail-42"));
    assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(o.retryCount()).isEqualTo(4);
    assertThat(o.interruptOnCancel()).isTrue();
  }

  @Test
  void defaultsDelayUntilForeverAndEachBackoffKind() {
    assertThat(PushBody.options(json("{\"state\": 1}"))).isEqualTo(JobOptions.defaults());
    assertThat(
            PushBody.options(
                json("{\"delayUntil\": \"2030-01-01T00:00:00Z\", \"repeatCount\": \"forever\"}")))
        .isEqualTo(
            JobOptions.defaults()
                .delayUntil(Instant.parse("2030-01-01T00:00:00Z"))
                .repeat(JobOptions.REPEAT_FOREVER, Duration.ZERO));
    assertThat(PushBody.options(json("{\"retryBackoff\": {\"kind\": \"none\"}}")).retryBackoff())
        .isEqualTo(Backoff.NONE);
    assertThat(
            PushBody.options(
                    json("{\"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT10S\"}}"))
                .retryBackoff())
        .isEqualTo(Backoff.fixed(Duration.ofSeconds(10)));
    assertThat(
            PushBody.options(
                    json(
                        "{\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 3, \"max\": \"PT9S\"}}"))
                .retryBackoff())
        .as("jitter defaults to 0")
        .isEqualTo(Backoff.exponential(Duration.ofSeconds(1), 3, Duration.ofSeconds(9), 0));
  }

  @Test
  void aTimeoutAndInterruptOnCancelAreTheJobsOwn() {
    assertThat(PushBody.options(json("{\"timeout\": \"PT30S\", \"interruptOnCancel\": true}")))
        .isEqualTo(JobOptions.defaults().timeout(Duration.ofSeconds(30)).interruptOnCancel(true));
    assertThat(PushBody.options(json("{\"timeout\": \"PT0.001S\"}")).timeout())
        .as("the shortest timeout")
        .isEqualTo(Duration.ofMillis(1));
    assertThat(PushBody.options(json("{\"timeout\": \"P36525D\"}")).timeout())
        .as("the longest timeout")
        .isEqualTo(JobOptions.MAX_TIMEOUT);
    JobOptions without = PushBody.options(json("{\"interruptOnCancel\": false}"));
    assertThat(without.interruptOnCancel()).isFalse();
    assertThat(without.timeout()).as("absent: the queue's default applies").isNull();
  }

  @Test
  void theMillisecondFieldsStillWork() {
    assertThat(
            PushBody.options(
                json(
                    "{\"delayMs\": 1500, \"repeatCount\": 1, \"repeatDelayMs\": 20, "
                        + "\"retryCount\": 2, \"retryDelayMs\": 10}")))
        .isEqualTo(
            JobOptions.defaults()
                .delay(Duration.ofMillis(1500))
                .repeat(1, Duration.ofMillis(20))
                .retry(2, Backoff.fixed(Duration.ofMillis(10))));
  }

  @Test
  void aJobsBackoffIsWrittenAsThePushBodyTakesIt() {
    for (Backoff b :
        new Backoff[] {
          Backoff.NONE,
          Backoff.fixed(Duration.ofSeconds(3)),
          Backoff.exponential(Duration.ofMillis(100), 1.5, Duration.ofSeconds(30), 0.5)
        }) {
      JsonObject body =
          Json.createObjectBuilder().add("retryBackoff", PushBody.backoffJson(b)).build();
      assertThat(PushBody.options(body).retryBackoff()).isEqualTo(b);
    }
  }

  @ParameterizedTest(name = "{0} -> field {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"retryCount\": -1}                                    | retryCount",
        "{\"retryCount\": 2147483648}                            | retryCount",
        "{\"retryCount\": 1.5}                                   | retryCount",
        "{\"retryCount\": \"3\"}                                 | retryCount",
        "{\"retryCount\": 1e2000}                                | retryCount",
        "{\"repeatCount\": -1}                                   | repeatCount",
        "{\"repeatCount\": \"always\"}                           | repeatCount",
        "{\"repeatCount\": 99999999999999999999}                 | repeatCount",
        "{\"priority\": 1e400}                                   | priority",
        "{\"priority\": -1e400}                                  | priority",
        "{\"priority\": \"NaN\"}                                 | priority",
        "{\"delay\": \"PT-1S\"}                                  | delay",
        "{\"delay\": 1000}                                       | delay",
        "{\"delay\": \"PT99999999999999S\"}                      | delay",
        "{\"delay\": \"soon\"}                                   | delay",
        "{\"delayMs\": 9223372036854775807}                      | delayMs",
        "{\"delayUntil\": \"+1000000000-01-01T00:00:00Z\"}       | delayUntil",
        "{\"delayUntil\": \"tomorrow\"}                          | delayUntil",
        "{\"delay\": \"PT1S\", \"delayUntil\": \"2030-01-01T00:00:00Z\"} | delayUntil",
        "{\"delay\": \"PT1S\", \"delayMs\": 5}                   | delayMs",
        "{\"repeatDelay\": \"PT1S\", \"repeatDelayMs\": 5}       | repeatDelayMs",
        "{\"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT1S\"}, \"retryDelayMs\": 5} | retryDelayMs",
        "{\"retryBackoff\": \"fixed\"}                           | retryBackoff",
        "{\"retryBackoff\": {}}                                  | retryBackoff.kind",
        "{\"retryBackoff\": {\"kind\": \"linear\"}}              | retryBackoff.kind",
        "{\"retryBackoff\": {\"kind\": \"fixed\"}}               | retryBackoff.delay",
        "{\"retryBackoff\": {\"kind\": \"fixed\", \"delay\": \"PT1S\", \"max\": \"PT2S\"}} | retryBackoff.max",
        "{\"retryBackoff\": {\"kind\": \"none\", \"delay\": \"PT1S\"}} | retryBackoff.delay",
        "{\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 0.5, \"max\": \"PT1M\"}} | retryBackoff.multiplier",
        "{\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1M\", \"multiplier\": 2, \"max\": \"PT1S\"}} | retryBackoff.max",
        "{\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 2, \"max\": \"PT1M\", \"jitter\": 2}} | retryBackoff.jitter",
        "{\"retryBackoff\": {\"kind\": \"exponential\", \"initial\": \"PT1S\", \"multiplier\": 2}} | retryBackoff.max",
        "{\"retries\": 3}                                        | retries",
        "{\"group\": \"\"}                                        | group",
        "{\"group\": 42}                                        | group",
        "{\"group\": null}                                      | group",
        "{\"unique\": \"k\"}                                      | unique",
        "{\"unique\": {\"scope\": \"waiting\"}}                   | unique.key",
        "{\"unique\": {\"key\": \"\", \"scope\": \"waiting\"}}      | unique.key",
        "{\"unique\": {\"key\": 7, \"scope\": \"waiting\"}}       | unique.key",
        "{\"unique\": {\"key\": \"k\"}}                           | unique.scope",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"running\"}}     | unique.scope",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"WAITING\"}}     | unique.scope",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"period\"}}      | unique.period",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"period\", \"period\": \"PT0S\"}} | unique.period",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"period\", \"period\": \"often\"}} | unique.period",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"waiting\", \"period\": \"PT1M\"}} | unique.period",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"waiting\", \"debounce\": \"yes\"}} | unique.debounce",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"waiting\", \"ttl\": 1}} | unique.ttl",
        "{\"unique\": {\"key\": \"k\", \"scope\": \"waiting\"}, \"repeatCount\": 2} | unique",
        "{\"timeout\": \"PT0S\"}                                 | timeout",
        "{\"timeout\": \"PT0.0005S\"}                            | timeout",
        "{\"timeout\": \"PT-1S\"}                                | timeout",
        "{\"timeout\": \"P36526D\"}                              | timeout",
        "{\"timeout\": \"PT9223372036854775807S\"}               | timeout",
        "{\"timeout\": 30000}                                    | timeout",
        "{\"timeout\": \"soon\"}                                 | timeout",
        "{\"timeout\": null}                                     | timeout",
        "{\"interruptOnCancel\": \"true\"}                       | interruptOnCancel",
        "{\"interruptOnCancel\": 1}                              | interruptOnCancel",
        "{\"interruptOnCancel\": null}                           | interruptOnCancel",
      })
  void badInputIsRefusedNamingTheField(String body, String field) {
    PushBody.Refused e =
        catchThrowableOfType(PushBody.Refused.class, () -> PushBody.options(json(body)));

    assertThat(e).as(body).isNotNull();
    assertThat(e.field).isEqualTo(field);
    assertThat(e.getMessage()).contains(field);
  }

  @Test
  void aGroupAndAUniqueKeyOfEachScope() {
    assertThat(PushBody.options(json("{\"group\": \"customer-42\"}")))
        .isEqualTo(JobOptions.defaults().group("customer-42"));
    assertThat(
            PushBody.options(json("{\"unique\": {\"key\": \"sync-1\", \"scope\": \"waiting\"}}"))
                .unique())
        .isEqualTo(UniqueKey.whileWaiting("sync-1"));
    assertThat(
            PushBody.options(
                    json(
                        "{\"unique\": {\"key\": \"sync-1\", \"scope\": \"waiting-or-running\","
                            + " \"debounce\": true}}"))
                .unique())
        .isEqualTo(UniqueKey.whileWaitingOrRunning("sync-1").debounce());
    JobOptions both =
        PushBody.options(
            json(
                "{\"unique\": {\"key\": \"r\", \"scope\": \"period\", \"period\": \"PT10M\"},"
                    + " \"group\": \"g\", \"priority\": 3}"));
    assertThat(both)
        .isEqualTo(
            JobOptions.defaults()
                .priority(3)
                .unique(UniqueKey.throttle("r", Duration.ofMinutes(10)))
                .group("g"));
  }

  @Test
  void tooLongAKeyOrGroupIsRefusedSayingTheLimit() {
    String key = "k".repeat(UniqueKey.MAX_KEY_LENGTH + 1);
    PushBody.Refused e =
        catchThrowableOfType(
            PushBody.Refused.class,
            () ->
                PushBody.options(
                    json("{\"unique\": {\"key\": \"" + key + "\", \"scope\": \"waiting\"}}")));
    assertThat(e.field).isEqualTo("unique.key");
    assertThat(e.getMessage()).contains(String.valueOf(UniqueKey.MAX_KEY_LENGTH));
    String group = "g".repeat(JobOptions.MAX_GROUP_LENGTH + 1);
    e =
        catchThrowableOfType(
            PushBody.Refused.class, () -> PushBody.options(json("{\"group\": \"" + group + "\"}")));
    assertThat(e.field).isEqualTo("group");
    assertThat(e.getMessage()).contains(String.valueOf(JobOptions.MAX_GROUP_LENGTH));
  }

  @Test
  void aUniqueKeyIsWrittenAsThePushBodyTakesIt() {
    for (UniqueKey u :
        new UniqueKey[] {
          UniqueKey.whileWaiting("a"),
          UniqueKey.whileWaitingOrRunning("b").debounce(),
          UniqueKey.throttle("c", Duration.ofSeconds(90))
        }) {
      JsonObject body = Json.createObjectBuilder().add("unique", PushBody.uniqueJson(u)).build();
      assertThat(PushBody.options(body).unique()).isEqualTo(u);
    }
  }

  static JsonObject json(String s) {
    try (JsonReader r = Json.createReader(new StringReader(s))) {
      return r.readObject();
    }
  }
}
