package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.InMemoryKvStore;
import dev.kvmq.store.Key;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The unique-key rules as pure functions (no clock, no worker): what a push of a taken or free key
 * plans, which commits release the key, the record's tagged fields 4 and 5, and the validation of
 * keys.
 */
class UniqueTransitionsTest {

  final QueueKeys keys = new QueueKeys("t");
  final long t0 = 1_000_000;
  final String a = Ulid.format(t0, 1, 2);
  final String b = Ulid.format(t0 + 10, 3, 4);
  final byte[] payload = {7};

  static JobOptions with(UniqueKey u) {
    return JobOptions.defaults().unique(u);
  }

  UniqueTransitions.Plan push(UniqueTransitions.KeyRead read, String id, JobOptions o, long now) {
    return UniqueTransitions.push(
        keys, read, id, payload, o, now, Map.of(), GroupBook.none(), false);
  }

  static boolean deletes(AtomicOperation op, Key key) {
    return op.mutations().stream().anyMatch(m -> m.isDelete() && m.key().equals(key));
  }

  @Test
  void aFreeKeyIsCheckedAbsentAndTakenInThePushsOperation() {
    UniqueTransitions.Plan plan =
        push(UniqueTransitions.KeyRead.free(), a, with(UniqueKey.whileWaiting("k")), t0);
    assertThat(plan).isInstanceOf(UniqueTransitions.Create.class);
    AtomicOperation op = ((UniqueTransitions.Create) plan).applied().operation();
    assertThat(op.checks())
        .anySatisfy(
            c -> {
              assertThat(c.key()).isEqualTo(keys.unique("k"));
              assertThat(c.expectsAbsent()).isTrue();
            });
    assertThat(op.mutations())
        .anySatisfy(
            m -> {
              assertThat(m.key()).isEqualTo(keys.unique("k"));
              assertThat(UniqueTransitions.Holder.decode(m.value()))
                  .isEqualTo(new UniqueTransitions.Holder(a, 0));
            });
    JobRecord r = ((UniqueTransitions.Create) plan).applied().record();
    assertThat(r.holdsUnique).isTrue();
    assertThat(r.unique).isEqualTo(UniqueKey.whileWaiting("k"));
  }

  @Test
  void twoPushesPlannedFromTheSameReadCommitOneJob() {
    try (InMemoryKvStore store = new InMemoryKvStore()) {
      JobOptions o = with(UniqueKey.whileWaitingOrRunning("k"));
      UniqueTransitions.Plan first = push(UniqueTransitions.KeyRead.free(), a, o, t0);
      UniqueTransitions.Plan second = push(UniqueTransitions.KeyRead.free(), b, o, t0);
      assertThat(store.commit(((UniqueTransitions.Create) first).applied().operation()).ok())
          .isTrue();
      assertThat(store.commit(((UniqueTransitions.Create) second).applied().operation()).ok())
          .as("the second push's absence check fails")
          .isFalse();
      assertThat(store.get(keys.job(b))).isEmpty();
    }
  }

  UniqueTransitions.KeyRead taken(JobRecord holder, long until) {
    return new UniqueTransitions.KeyRead(
        Optional.of(new UniqueTransitions.Holder(holder.id, until)),
        40,
        Optional.of(new Transitions.Read(holder, 41)),
        false);
  }

  JobRecord created(String id, JobOptions o, long now) {
    if (o.unique() == null) {
      return Transitions.push(keys, id, payload, o, now).record();
    }
    return ((UniqueTransitions.Create) push(UniqueTransitions.KeyRead.free(), id, o, now))
        .applied()
        .record();
  }

  @Test
  void aTakenKeyIsADuplicateOfItsHolderAndPlansNoCommit() {
    JobRecord holder = created(a, with(UniqueKey.whileWaiting("k")), t0);
    UniqueTransitions.Plan plan =
        push(taken(holder, 0), b, with(UniqueKey.whileWaiting("k")), t0 + 5);
    assertThat(plan).isEqualTo(new UniqueTransitions.Duplicate(a, Optional.of(holder)));
  }

  /**
   * Through a store that joins its caller's transaction, a new due job of a group with a key is
   * written delayed, due at its push, and its group's record is neither checked nor written: a
   * promotion admits it after the caller's commit. The key is taken as always.
   */
  @Test
  void aNewJobOfAGroupPushedInACallersTransactionIsLeftForAPromotionToAdmit() {
    JobOptions o = with(UniqueKey.whileWaiting("k")).group("g");
    java.util.function.Supplier<GroupBook> book =
        () ->
            GroupBook.of(
                keys,
                g -> 1,
                Map.of(
                    "g",
                    new GroupBook.Read(
                        "g", GroupBook.Counts.NONE, AtomicOperation.ABSENT, java.util.List.of())));
    UniqueTransitions.Plan plan =
        UniqueTransitions.push(
            keys, UniqueTransitions.KeyRead.free(), a, payload, o, t0, Map.of(), book.get(), true);

    Transitions.Applied applied = ((UniqueTransitions.Create) plan).applied();
    assertThat(applied.record().state).isEqualTo(JobRecord.State.DELAYED);
    assertThat(applied.record().delayUntil).as("due at its push").isEqualTo(t0);
    assertThat(applied.operation().checks())
        .extracting(AtomicOperation.Check::key)
        .doesNotContain(keys.group("g"))
        .contains(keys.unique("k"));
    assertThat(applied.operation().mutations())
        .extracting(AtomicOperation.Mutation::key)
        .doesNotContain(keys.group("g"))
        .contains(keys.indexOf(applied.record()), keys.unique("k"));
    UniqueTransitions.Plan now =
        UniqueTransitions.push(
            keys, UniqueTransitions.KeyRead.free(), a, payload, o, t0, Map.of(), book.get(), false);
    assertThat(((UniqueTransitions.Create) now).applied().operation().mutations())
        .as("outside a caller's transaction: admitted at once, its group's record written")
        .extracting(AtomicOperation.Mutation::key)
        .contains(keys.group("g"));
  }

  /**
   * A push that takes over a key whose throttle period ended reads the group of the key's last job,
   * which may still run. Through a store that joins its caller's transaction it must not admit that
   * group's parked jobs, though its limit has room: that would write the group's record, and its
   * lock would last until the caller's transaction ends.
   */
  @Test
  void aTakeOverInACallersTransactionAdmitsNoParkedJobOfTheLastHoldersGroup() {
    JobOptions o = with(UniqueKey.throttle("k", Duration.ofSeconds(10)));
    JobRecord.Draft l = created(a, o, t0).draft();
    l.group = "h";
    l.state = JobRecord.State.LEASED; // the last holder still runs
    JobRecord last = l.build();
    JobRecord.Draft p = created(b, JobOptions.defaults(), t0).draft();
    p.group = "h";
    p.parked = true;
    JobRecord parked = p.build();
    java.util.function.Supplier<GroupBook> book =
        () ->
            GroupBook.of(
                keys,
                g -> 2,
                Map.of(
                    "h",
                    new GroupBook.Read(
                        "h",
                        new GroupBook.Counts(1, 1, 0),
                        50,
                        java.util.List.of(new Transitions.Read(parked, 51)))));
    String c = Ulid.format(t0 + 20_000, 5, 6);
    long later = t0 + 20_000; // the throttle period is over

    UniqueTransitions.Plan joined =
        UniqueTransitions.push(
            keys, taken(last, t0 + 10_000), c, payload, o, later, Map.of(), book.get(), true);
    AtomicOperation op = ((UniqueTransitions.Create) joined).applied().operation();
    assertThat(op.checks()).extracting(AtomicOperation.Check::key).doesNotContain(keys.group("h"));
    assertThat(op.mutations())
        .extracting(AtomicOperation.Mutation::key)
        .doesNotContain(keys.group("h"), keys.job(b))
        .contains(keys.job(c), keys.unique("k"));

    UniqueTransitions.Plan alone =
        UniqueTransitions.push(
            keys, taken(last, t0 + 10_000), c, payload, o, later, Map.of(), book.get(), false);
    assertThat(((UniqueTransitions.Create) alone).applied().operation().mutations())
        .as("outside a caller's transaction the parked job is admitted, as after any commit")
        .extracting(AtomicOperation.Mutation::key)
        .contains(keys.group("h"), keys.job(b));
  }

  @Test
  void debounceGivesTheWaitingHolderThePushedStateAndDueTime() {
    JobOptions o =
        JobOptions.defaults()
            .delay(Duration.ofSeconds(10))
            .unique(UniqueKey.whileWaiting("k").debounce());
    JobRecord holder = created(a, o, t0);
    UniqueTransitions.Plan plan =
        UniqueTransitions.push(
            keys,
            taken(holder, 0),
            b,
            new byte[] {9},
            o,
            t0 + 4_000,
            Map.of(),
            GroupBook.none(),
            false);
    assertThat(plan).isInstanceOf(UniqueTransitions.Debounce.class);
    Transitions.Applied applied = ((UniqueTransitions.Debounce) plan).applied();
    JobRecord after = applied.record();
    assertThat(after.id).as("the holder keeps its id").isEqualTo(a);
    assertThat(after.payload).containsExactly(9);
    assertThat(after.delayUntil).as("due pushed back").isEqualTo(t0 + 14_000);
    assertThat(after.holdsUnique).isTrue();
    assertThat(applied.operation().checks())
        .extracting(AtomicOperation.Check::key)
        .contains(keys.job(a), keys.unique("k"));
    assertThat(deletes(applied.operation(), keys.indexOf(holder))).isTrue();
  }

  @Test
  void debounceLeavesARunningHolderAloneAndIsADuplicate() {
    JobOptions o = with(UniqueKey.whileWaitingOrRunning("k").debounce());
    JobRecord holder = created(a, o, t0);
    JobRecord running =
        ((Transitions.Applied)
                Transitions.claim(keys, new Transitions.Read(holder, 41), t0 + 1, 5_000))
            .record();
    assertThat(push(taken(running, 0), b, o, t0 + 2))
        .isEqualTo(new UniqueTransitions.Duplicate(a, Optional.of(running)));
  }

  @Test
  void aThrottleKeyIsTakenUntilItsPeriodEndsWhateverItsJobDoes() {
    JobOptions o = with(UniqueKey.throttle("k", Duration.ofSeconds(60)));
    JobRecord first = created(a, o, t0);
    assertThat(first.holdsUnique).as("held by time, not by the job").isFalse();
    UniqueTransitions.KeyRead gone =
        new UniqueTransitions.KeyRead(
            Optional.of(new UniqueTransitions.Holder(a, t0 + 60_000)), 40, Optional.empty(), false);
    assertThat(push(gone, b, o, t0 + 59_999))
        .as("its job finished, the period goes on")
        .isEqualTo(new UniqueTransitions.Duplicate(a, Optional.empty()));
    UniqueTransitions.Plan after = push(gone, b, o, t0 + 60_000);
    assertThat(after).isInstanceOf(UniqueTransitions.Create.class);
    AtomicOperation op = ((UniqueTransitions.Create) after).applied().operation();
    assertThat(op.checks())
        .anySatisfy(
            c -> {
              assertThat(c.key()).isEqualTo(keys.unique("k"));
              assertThat(c.versionstamp()).as("the entry taken over is checked").isEqualTo(40);
            });
  }

  @Test
  void anEntryWhoseJobIsGoneIsTakenOverCheckingTheJobAbsent() {
    UniqueTransitions.KeyRead stale =
        new UniqueTransitions.KeyRead(
            Optional.of(new UniqueTransitions.Holder(a, 0)), 40, Optional.empty(), false);
    UniqueTransitions.Plan plan = push(stale, b, with(UniqueKey.whileWaiting("k")), t0);
    AtomicOperation op = ((UniqueTransitions.Create) plan).applied().operation();
    assertThat(op.checks())
        .anySatisfy(
            c -> {
              assertThat(c.key()).isEqualTo(keys.job(a));
              assertThat(c.expectsAbsent()).isTrue();
            });
  }

  @Test
  void aWaitingKeyIsReleasedByTheClaimAndAWaitingOrRunningOneByTheCompletion() {
    JobRecord waiting = created(a, with(UniqueKey.whileWaiting("k")), t0);
    Transitions.Applied claim =
        (Transitions.Applied) Transitions.claim(keys, new Transitions.Read(waiting, 1), t0, 5_000);
    assertThat(deletes(claim.operation(), keys.unique("k"))).isTrue();
    assertThat(claim.record().holdsUnique).isFalse();
    Transitions.Plan complete =
        Transitions.complete(keys, new Transitions.Holding(claim.record(), 2, 1), t0, b);
    assertThat(deletes(((Transitions.Applied) complete).operation(), keys.unique("k")))
        .as("released already")
        .isFalse();

    JobRecord running = created(b, with(UniqueKey.whileWaitingOrRunning("r")), t0);
    Transitions.Applied claimed =
        (Transitions.Applied) Transitions.claim(keys, new Transitions.Read(running, 1), t0, 5_000);
    assertThat(deletes(claimed.operation(), keys.unique("r"))).isFalse();
    assertThat(claimed.record().holdsUnique).isTrue();
    Transitions.Plan done =
        Transitions.complete(keys, new Transitions.Holding(claimed.record(), 2, 1), t0, a);
    assertThat(deletes(((Transitions.Applied) done).operation(), keys.unique("r"))).isTrue();
  }

  @Test
  void aDeadLetterAndADeleteReleaseTheKeyAndARetryKeepsIt() {
    JobOptions o =
        JobOptions.defaults().retry(1, Backoff.NONE).unique(UniqueKey.whileWaitingOrRunning("k"));
    JobRecord r = created(a, o, t0);
    JobRecord leased =
        ((Transitions.Applied) Transitions.claim(keys, new Transitions.Read(r, 1), t0, 5_000))
            .record();
    JobError e = new JobError("E", "boom", Instant.ofEpochMilli(t0));
    Transitions.Applied retry =
        (Transitions.Applied)
            Transitions.fail(keys, new Transitions.Holding(leased, 2, 1), t0, e, 0.5);
    assertThat(deletes(retry.operation(), keys.unique("k"))).isFalse();
    assertThat(retry.record().holdsUnique).isTrue();
    JobRecord again =
        ((Transitions.Applied)
                Transitions.claim(keys, new Transitions.Read(retry.record(), 3), t0 + 2_000, 5_000))
            .record();
    Transitions.Applied dead =
        (Transitions.Applied)
            Transitions.fail(keys, new Transitions.Holding(again, 4, 2), t0 + 2_000, e, 0.5);
    assertThat(dead.record().state).isEqualTo(JobRecord.State.DEAD);
    assertThat(deletes(dead.operation(), keys.unique("k"))).isTrue();
    assertThat(dead.record().holdsUnique).isFalse();
    Transitions.Applied delete =
        (Transitions.Applied) Transitions.delete(keys, new Transitions.Read(dead.record(), 5), t0);
    assertThat(deletes(delete.operation(), keys.unique("k"))).as("released already").isFalse();

    JobRecord waiting = created(b, with(UniqueKey.whileWaiting("w")), t0);
    Transitions.Applied deleted =
        (Transitions.Applied) Transitions.delete(keys, new Transitions.Read(waiting, 1), t0);
    assertThat(deletes(deleted.operation(), keys.unique("w"))).isTrue();
  }

  @Test
  void releaseUniqueDeletesTheEntryOfAHolderOnly() {
    AtomicOperation.Builder op = AtomicOperation.builder();
    Transitions.releaseUnique(op, keys, created(a, with(UniqueKey.whileWaiting("k")), t0));
    assertThat(deletes(op.build(), keys.unique("k"))).isTrue();
    AtomicOperation.Builder none = AtomicOperation.builder();
    Transitions.releaseUnique(none, keys, created(b, JobOptions.defaults(), t0));
    Transitions.releaseUnique(
        none, keys, created(b, with(UniqueKey.throttle("t", Duration.ofSeconds(1))), t0));
    assertThat(none.build().mutations()).isEmpty();
  }

  @Test
  void theRecordKeepsItsKeyScopeModeAndHoldInTaggedFields() {
    UniqueKey u = UniqueKey.throttle("ключ-k", Duration.ofMillis(1234)).debounce();
    JobRecord r = created(a, with(u), t0);
    JobRecord back = JobRecord.decode(r.encode());
    assertThat(back.unique).isEqualTo(u);
    assertThat(back.holdsUnique).isFalse();
    JobRecord held = created(b, with(UniqueKey.whileWaitingOrRunning("k")), t0);
    assertThat(JobRecord.decode(held.encode()).holdsUnique).isTrue();
    JobRecord plain = created(b, JobOptions.defaults(), t0);
    assertThat(JobRecord.decode(plain.encode()).unique).isNull();
    assertThat(plain.encode().length)
        .as("a record without a key is as long as before")
        .isLessThan(held.encode().length);
  }

  @Test
  void keysAreValidatedWithClearErrors() {
    assertThatThrownBy(() -> UniqueKey.whileWaiting(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> UniqueKey.whileWaiting("x".repeat(257)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 256 characters")
        .hasMessageContaining("has 257");
    assertThat(UniqueKey.whileWaiting("x".repeat(256)).key()).hasSize(256);
    assertThatThrownBy(() -> UniqueKey.whileWaiting("bad\uD800"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("UTF-8");
    assertThatThrownBy(() -> UniqueKey.throttle("k", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1 ms");
    assertThatThrownBy(
            () -> new UniqueKey("k", UniqueKey.Scope.WAITING, Duration.ofSeconds(1), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("scope PERIOD only");
    assertThatThrownBy(
            () ->
                JobOptions.defaults().unique(UniqueKey.whileWaiting("k")).repeat(1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("repeating job can't have a unique key");
    assertThatThrownBy(() -> UniqueKey.whileWaiting(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void theLongestKeyInTheLongestQueueNameFitsAKey() {
    QueueKeys longest = new QueueKeys("\u4e00".repeat(200));
    Key k = longest.unique("\u4e00".repeat(UniqueKey.MAX_KEY_LENGTH));
    assertThat(k.encoded().length).isLessThanOrEqualTo(dev.kvmq.store.KvStore.MAX_KEY_BYTES);
  }
}
