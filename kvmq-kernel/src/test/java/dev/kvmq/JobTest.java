package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.testing.Seeds;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A {@link Job} reads its values from the record it was made of when asked for them: each value is
 * the record's, in the public types, as {@code Job}'s Javadoc documents them, and two jobs are
 * equal exactly when those values (and the state and status) are.
 */
class JobTest {

  /** A random record with a ULID id and every optional field sometimes set. */
  private static JobRecord record(SplittableRandom r) {
    JobRecord.Draft d = JobRecordEncodingTest.random(r).draft();
    d.id = Ulid.format(r.nextLong(1L << 48), r.nextLong(), r.nextLong());
    if (r.nextBoolean()) {
      d.unique =
          r.nextBoolean()
              ? UniqueKey.whileWaiting("k" + r.nextInt(100))
              : UniqueKey.throttle("k" + r.nextInt(100), Duration.ofSeconds(1 + r.nextInt(60)));
      d.holdsUnique = r.nextBoolean();
    }
    if (r.nextBoolean()) {
      d.group = "g" + r.nextInt(100);
    }
    if (r.nextBoolean()) {
      d.timeoutMillis = r.nextLong(1, 1_000_000);
    }
    d.interruptOnCancel = r.nextBoolean();
    if (r.nextBoolean()) {
      d.cancelledAt = r.nextLong(1L << 50);
    }
    d.leaseExpiries = r.nextInt(6);
    if (r.nextBoolean()) {
      d.result = "r" + r.nextInt();
    }
    if (r.nextBoolean()) {
      d.attempts =
          List.of(
              new Attempt(
                  1,
                  Instant.ofEpochMilli(r.nextLong(1L << 50)),
                  Optional.empty(),
                  "n",
                  Optional.empty()));
    }
    if (r.nextBoolean()) {
      d.finishedAt = r.nextLong(1L << 50);
    }
    return d.build();
  }

  /** A record's time, or -1 for none, as the job's optional instant. */
  private static Optional<Instant> instantUnlessNone(long epochMillis) {
    return epochMillis == -1 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(epochMillis));
  }

  @Test
  void everyValueIsTheRecordsInItsPublicType() {
    Seeds.forEach(
        "everyValueIsTheRecordsInItsPublicType",
        2_000,
        1,
        r -> {
          JobRecord rec = record(r);
          long now = r.nextLong();
          Job<String> job = Job.of("q", rec, "s", now);
          assertThat(job.id()).isEqualTo(rec.id);
          assertThat(job.queue()).isEqualTo("q");
          assertThat(job.state()).isEqualTo("s");
          assertThat(job.undecodedState()).isEmpty();
          assertThat(job.priority()).isEqualTo(rec.priority);
          assertThat(job.createdAt()).isEqualTo(Instant.ofEpochMilli(Ulid.timestamp(rec.id)));
          assertThat(job.status()).isEqualTo(rec.statusAt(now));
          assertThat(job.delayUntil()).isEqualTo(Instant.ofEpochMilli(rec.delayUntil));
          assertThat(job.leaseUntil())
              .isEqualTo(
                  rec.state == JobRecord.State.LEASED
                      ? Optional.of(Instant.ofEpochMilli(rec.leaseUntil))
                      : Optional.empty());
          assertThat(job.repeatCount()).isEqualTo(rec.repeatCount);
          assertThat(job.repeatDelay()).isEqualTo(Duration.ofMillis(rec.repeatDelay));
          assertThat(job.retriesLeft()).isEqualTo(rec.retriesLeft);
          assertThat(job.retryLimit()).isEqualTo(rec.retryLimit);
          assertThat(job.retryBackoff()).isEqualTo(rec.backoff);
          assertThat(job.attempt()).isEqualTo(rec.attempt);
          assertThat(job.token()).isEqualTo(rec.token);
          assertThat(job.lastError()).isEqualTo(Optional.ofNullable(rec.error));
          assertThat(job.schedule()).isEqualTo(Optional.ofNullable(rec.schedule));
          assertThat(job.slot()).isEqualTo(instantUnlessNone(rec.slot));
          assertThat(job.unique()).isEqualTo(Optional.ofNullable(rec.unique));
          assertThat(job.holdsUniqueKey()).isEqualTo(rec.holdsUnique);
          assertThat(job.group()).isEqualTo(Optional.ofNullable(rec.group));
          assertThat(job.timeout())
              .isEqualTo(
                  rec.timeoutMillis == -1
                      ? Optional.empty()
                      : Optional.of(Duration.ofMillis(rec.timeoutMillis)));
          assertThat(job.interruptOnCancel()).isEqualTo(rec.interruptOnCancel);
          assertThat(job.cancelledAt()).isEqualTo(instantUnlessNone(rec.cancelledAt));
          assertThat(job.leaseExpiries()).isEqualTo(rec.leaseExpiries);
          assertThat(job.result()).isEqualTo(Optional.ofNullable(rec.result));
          assertThat(job.attempts()).isEqualTo(rec.attempts);
          assertThat(job.finishedAt()).isEqualTo(instantUnlessNone(rec.finishedAt));
          assertThat(job.toString()).contains(rec.id, "queue=q", "state=s");
        });
  }

  @Test
  void jobsOfTheSameRecordReadTwiceAreEqualAndAnyChangedValueMakesThemDiffer() {
    List<Consumer<JobRecord.Draft>> changes =
        List.of(
            d -> d.priority = d.priority == 1 ? 2 : 1,
            d -> d.attempt++,
            d -> d.token++,
            d -> d.retriesLeft++,
            d -> d.repeatCount++,
            d -> d.repeatDelay++,
            d -> d.delayUntil++,
            d -> d.group = d.group == null ? "other" : null,
            d -> d.result = d.result == null ? "done" : null,
            d -> d.finishedAt = d.finishedAt == -1 ? 5 : -1,
            d -> d.cancelledAt = d.cancelledAt == -1 ? 5 : -1,
            d -> d.timeoutMillis = d.timeoutMillis == -1 ? 5 : -1,
            d -> d.leaseExpiries++,
            d -> d.interruptOnCancel = !d.interruptOnCancel,
            d -> d.schedule = d.schedule == null ? "daily" : null);
    Seeds.forEach(
        "jobsOfTheSameRecordReadTwiceAreEqualAndAnyChangedValueMakesThemDiffer",
        500,
        1,
        r -> {
          JobRecord rec = JobRecord.decode(record(r).encode()); // as stored, then read twice
          long now = r.nextLong();
          Job<String> job = Job.of("q", rec, "s", now);
          Job<String> again = Job.of("q", JobRecord.decode(rec.encode()), "s", now);
          assertThat(again).isEqualTo(job).hasSameHashCodeAs(job);
          assertThat(Job.of("q", rec, "t", now)).isNotEqualTo(job);
          assertThat(Job.of("p", rec, "s", now)).isNotEqualTo(job);
          JobRecord.Draft changed = rec.draft();
          changes.get(r.nextInt(changes.size())).accept(changed);
          assertThat(Job.of("q", changed.build(), "s", now)).isNotEqualTo(job);
        });
  }

  /** The lease's end is a leased job's only: another state's stored lease time is not shown. */
  @Test
  void onlyALeasedJobShowsItsLeasesEnd() {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id = Ulid.format(1_000, 1, 2);
    d.leaseUntil = 9_000;
    JobRecord leased = d.state(JobRecord.State.LEASED).build();
    JobRecord ready = leased.draft().state(JobRecord.State.READY).build();
    assertThat(Job.of("q", leased, "s", 8_000).leaseUntil()).contains(Instant.ofEpochMilli(9_000));
    assertThat(Job.of("q", leased, "s", 8_000).status()).isEqualTo(JobStatus.PROCESSING);
    assertThat(Job.of("q", leased, "s", 9_000).status()).isEqualTo(JobStatus.WAITING);
    assertThat(Job.of("q", ready, "s", 8_000).leaseUntil()).isEmpty();
    assertThat(Job.of("q", leased, "s", 8_000)).isNotEqualTo(Job.of("q", leased, "s", 9_000));
  }
}
