package dev.kvmq;

import dev.kvmq.store.AtomicOperation;
import dev.kvmq.store.Key;
import dev.kvmq.store.KvEntry;
import dev.kvmq.store.KvStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads what a {@link GroupBook} needs before a plan: each group's record and, when some of its
 * jobs are parked, the first {@link GroupBook#HEADS} of them. Two reads per group at most, each
 * bounded; the plan's check of the record's versionstamp makes them one consistent view (every
 * change of a group's parked index rewrites its record).
 */
final class GroupReads {

  private GroupReads() {}

  /** The groups of {@code records} (nulls and jobs of no group left out). */
  static Set<String> groupsOf(Collection<JobRecord> records) {
    Set<String> groups = new LinkedHashSet<>();
    for (JobRecord r : records) {
      if (r != null && r.group != null) {
        groups.add(r.group);
      }
    }
    return groups;
  }

  /** Reads {@code groups} and makes the book of one operation over them. */
  static GroupBook book(
      KvStore store, QueueKeys keys, GroupBook.Limits limits, Set<String> groups) {
    if (groups.isEmpty()) {
      return GroupBook.none();
    }
    return GroupBook.of(keys, limits, read(store, keys, groups));
  }

  /** The book of an operation on {@code r} alone. */
  static GroupBook book(KvStore store, QueueKeys keys, GroupBook.Limits limits, JobRecord r) {
    return r.group == null ? GroupBook.none() : book(store, keys, limits, Set.of(r.group));
  }

  static Map<String, GroupBook.Read> read(KvStore store, QueueKeys keys, Set<String> groups) {
    List<String> names = new ArrayList<>(groups);
    List<Key> recordKeys = new ArrayList<>(names.size());
    for (String g : names) {
      recordKeys.add(keys.group(g));
    }
    List<Optional<KvEntry>> records = store.getMany(recordKeys);
    Map<String, GroupBook.Read> reads = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      String g = names.get(i);
      Optional<KvEntry> e = records.get(i);
      GroupBook.Counts counts =
          e.map(x -> GroupBook.Counts.decode(x.value())).orElse(GroupBook.Counts.NONE);
      long vs = e.map(KvEntry::versionstamp).orElse(AtomicOperation.ABSENT);
      List<Transitions.Read> heads = List.of();
      if (counts.parked() > 0) {
        heads = heads(store, keys, g);
      }
      reads.put(g, new GroupBook.Read(g, counts, vs, heads));
    }
    return reads;
  }

  private static List<Transitions.Read> heads(KvStore store, QueueKeys keys, String group) {
    List<KvEntry> index = store.list(keys.parked(group), GroupBook.HEADS, false);
    if (index.isEmpty()) {
      return List.of();
    }
    List<Key> jobKeys = new ArrayList<>(index.size());
    for (KvEntry e : index) {
      jobKeys.add(keys.job(QueueKeys.idOf(e.key())));
    }
    List<Transitions.Read> heads = new ArrayList<>(index.size());
    for (Optional<KvEntry> e : store.getMany(jobKeys)) {
      if (e.isPresent()) {
        try {
          heads.add(
              new Transitions.Read(JobRecord.decode(e.get().value()), e.get().versionstamp()));
        } catch (IllegalStateException unreadable) {
          // left parked: an unreadable record is no job to admit
        }
      }
    }
    return heads;
  }
}
