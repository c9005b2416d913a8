package dev.kvmq;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A job as the kernel stores it: the source of truth under {@code [..., "job", id]}.
 *
 * <p>Immutable; changed copies come from {@link #draft()}. Encoded in a small versioned binary
 * format ({@link #encode()}, {@link #decode(byte[])}), so stored jobs do not depend on Java
 * serialization, class loaders or user classes: the payload is the user codec's bytes.
 *
 * <p>Format 2 is format 1 followed by tagged optional fields: a {@code short} count, then per field
 * a tag byte, an {@code int} length and that many bytes. A field at its default is not written. A
 * new field takes a new tag; a tag this version does not know is an error naming it (a record
 * written by a newer kvmq is never read half). Format 1 records (no tagged fields) still decode.
 */
final class JobRecord {

  /** Which index holds the job. */
  enum State {
    READY,
    DELAYED,
    LEASED,
    DEAD,
    /**
     * Written in an application's transaction that has not ended yet: in the held index, run by no
     * worker until released (appended: the record stores the ordinal).
     */
    HELD,
    /**
     * Cancelled by an operator: in the cancelled index (at {@link #cancelledAt}), run by no worker
     * again, kept until deleted or pruned (appended: the record stores the ordinal).
     */
    CANCELLED,
    /**
     * Completed and kept for the queue's retention, in the completed index at its finish time
     * (appended: the record stores the ordinal).
     */
    COMPLETED
  }

  private static final byte FORMAT_V1 = 1;
  private static final byte FORMAT_V2 = 2;

  /** {@link State#values()}, read once: a record's state is stored as its ordinal. */
  private static final State[] STATES = State.values();

  /** Tag of {@link #schedule}: a short length and modified UTF-8, as {@code writeUTF}. */
  private static final byte TAG_SCHEDULE = 1;

  /** Tag of {@link #slot}: a long. */
  private static final byte TAG_SLOT = 2;

  /** Tag of {@link #traceContext}: a short count, then modified UTF-8 key and value pairs. */
  private static final byte TAG_TRACE_CONTEXT = 3;

  /**
   * Tag of {@link #group} and {@link #parked}: a byte (1 parked, 0 not), then the group as a short
   * length and modified UTF-8.
   */
  private static final byte TAG_GROUP = 6;

  /** Tag of {@link #unique}'s key: a short length and modified UTF-8. */
  private static final byte TAG_UNIQUE_KEY = 4;

  /**
   * Tag of {@link #unique}'s scope and mode and of {@link #holdsUnique}: a byte (the scope's
   * ordinal), a byte of flags (1: held, 2: debounced), a long (the period in ms).
   */
  private static final byte TAG_UNIQUE_SCOPE = 5;

  /**
   * Tag of {@link #timeoutMillis} and {@link #interruptOnCancel}: a long (the timeout, -1 for the
   * queue's default) and a byte (1 to interrupt).
   */
  private static final byte TAG_RUN_LIMITS = 7;

  /** Tag of {@link #cancelledAt}: a long. */
  private static final byte TAG_CANCELLED_AT = 8;

  /** Tag of {@link #leaseExpiries}: an int. */
  private static final byte TAG_LEASE_EXPIRIES = 9;

  /** Tag of {@link #result}: UTF-8 bytes, the field's length. */
  private static final byte TAG_RESULT = 10;

  /**
   * Tag of {@link #attempts}: a short count, then per attempt an int number, long start, long end
   * (-1: none), UTF node, and a flag byte followed by the error's UTF type, UTF message and long
   * time.
   */
  private static final byte TAG_ATTEMPTS = 11;

  /** Tag of {@link #finishedAt}: a long. */
  private static final byte TAG_FINISHED_AT = 12;

  /** The longest error message or type an attempt keeps, in characters. */
  static final int ATTEMPT_TEXT_CHARS = 200;

  final String id;
  final double priority;
  final State state;
  final long delayUntil;
  final long leaseUntil;
  final long token;
  final int attempt;
  final long repeatCount;
  final long repeatDelay;
  final int retriesLeft;
  final int retryLimit;
  final Backoff backoff;
  final JobError error;
  final byte[] payload;

  /** The name of the schedule that pushed the job, or null. */
  final String schedule;

  /** The schedule slot (epoch ms) the job runs for, or -1 when it has none. */
  final long slot;

  /** The pusher's trace context (W3C carrier fields), empty when none; unmodifiable. */
  final Map<String, String> traceContext;

  /** The unique key the job was pushed with, or null. */
  final UniqueKey unique;

  /**
   * Whether the job holds {@link #unique}'s index entry now: its commits that end the key's scope
   * delete the entry (an entry and the record that holds it are written in the same commits).
   * Always false for a {@link UniqueKey.Scope#PERIOD} key, whose entry is held by time.
   */
  final boolean holdsUnique;

  /** The job's group, or null (docs/flow-control.md, "Groups"). */
  final String group;

  /**
   * True for a {@link State#READY} job of a group with no free slot: it waits in the group's parked
   * index, not in the ready index, until a commit that frees a slot of its group admits it.
   */
  final boolean parked;

  /** How long one run may take (ms), or -1 for the queue's default. */
  final long timeoutMillis;

  /** Whether the handler's thread is interrupted when the job is cancelled or times out. */
  final boolean interruptOnCancel;

  /** When the job was cancelled (epoch ms), or -1 when it was not. */
  final long cancelledAt;

  /** How many times the job's lease expired and it was reclaimed. */
  final int leaseExpiries;

  /** The result its handler set, or null. */
  final String result;

  /** The latest attempts, oldest first, {@link Attempt#KEPT} at most; unmodifiable. */
  final java.util.List<Attempt> attempts;

  /** When the job ended for good (completed or dead; epoch ms), or -1. */
  final long finishedAt;

  private JobRecord(Draft d) {
    this.id = d.id;
    this.priority = d.priority;
    this.state = d.state;
    this.delayUntil = d.delayUntil;
    this.leaseUntil = d.leaseUntil;
    this.token = d.token;
    this.attempt = d.attempt;
    this.repeatCount = d.repeatCount;
    this.repeatDelay = d.repeatDelay;
    this.retriesLeft = d.retriesLeft;
    this.retryLimit = d.retryLimit;
    this.backoff = d.backoff;
    this.error = d.error;
    this.payload = d.payload;
    this.schedule = d.schedule;
    this.slot = d.slot;
    this.traceContext = d.traceContext.isEmpty() ? Map.of() : copyOrdered(d.traceContext);
    this.unique = d.unique;
    this.holdsUnique = d.holdsUnique;
    this.group = d.group;
    this.parked = d.parked;
    if (parked && (group == null || state != State.READY)) {
      throw new IllegalStateException(
          "only a ready job of a group can be parked: " + state + ", group " + group);
    }
    this.timeoutMillis = d.timeoutMillis;
    this.interruptOnCancel = d.interruptOnCancel;
    this.cancelledAt = d.cancelledAt;
    this.leaseExpiries = d.leaseExpiries;
    this.result = d.result;
    this.attempts = java.util.List.copyOf(d.attempts);
    this.finishedAt = d.finishedAt;
  }

  private static Map<String, String> copyOrdered(Map<String, String> m) {
    return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(m));
  }

  /** A mutable copy to derive the next record from. */
  Draft draft() {
    return new Draft(this);
  }

  /** When the job was first pushed: the time of its ULID. */
  long createdAt() {
    return Ulid.timestamp(id);
  }

  /** The status a reader sees at {@code now}, as the seed defines it. */
  JobStatus statusAt(long now) {
    return switch (state) {
      case DEAD -> JobStatus.DEAD;
      case LEASED -> leaseUntil > now ? JobStatus.PROCESSING : JobStatus.WAITING;
      case DELAYED -> delayUntil > now ? JobStatus.DELAYED : JobStatus.WAITING;
      case READY -> JobStatus.WAITING;
      case HELD -> JobStatus.HELD;
      case CANCELLED -> JobStatus.CANCELLED;
      case COMPLETED -> JobStatus.COMPLETED;
    };
  }

  /**
   * The record's bytes: format 2, the bytes {@link java.io.DataOutputStream} writes for these
   * fields in this order (strings in its modified UTF-8), then the tagged fields, written here
   * straight into one array of the exact size.
   */
  byte[] encode() {
    byte[] idBytes = modifiedUtf8(id);
    byte[] scheduleBytes = schedule == null ? null : modifiedUtf8(schedule);
    byte[] traceBytes = traceContext.isEmpty() ? null : encodeMap(traceContext);
    byte[] resultBytes = result == null ? null : result.getBytes(StandardCharsets.UTF_8);
    byte[] attemptBytes = attempts.isEmpty() ? null : encodeAttempts(attempts);
    int tagged = 2;
    short fields = 0;
    if (resultBytes != null) {
      tagged += 5 + resultBytes.length;
      fields++;
    }
    if (attemptBytes != null) {
      tagged += 5 + attemptBytes.length;
      fields++;
    }
    if (finishedAt != -1) {
      tagged += 5 + 8;
      fields++;
    }
    if (scheduleBytes != null) {
      tagged += 5 + 2 + scheduleBytes.length;
      fields++;
    }
    if (slot != -1) {
      tagged += 5 + 8;
      fields++;
    }
    if (traceBytes != null) {
      tagged += 5 + traceBytes.length;
      fields++;
    }
    byte[] groupBytes = group == null ? null : modifiedUtf8(group);
    if (groupBytes != null) {
      tagged += 5 + 1 + 2 + groupBytes.length;
      fields++;
    }
    byte[] uniqueBytes = unique == null ? null : modifiedUtf8(unique.key());
    if (uniqueBytes != null) {
      tagged += 5 + 2 + uniqueBytes.length + 5 + 1 + 1 + 8;
      fields += 2;
    }
    boolean runLimits = timeoutMillis != -1 || interruptOnCancel;
    if (runLimits) {
      tagged += 5 + 9;
      fields++;
    }
    if (cancelledAt != -1) {
      tagged += 5 + 8;
      fields++;
    }
    if (leaseExpiries != 0) {
      tagged += 5 + 4;
      fields++;
    }
    byte[] typeBytes = null;
    byte[] messageBytes = null;
    int size =
        1
            + 2
            + idBytes.length
            + 8
            + 1
            + 3 * 8
            + 4
            + 2 * 8
            + 2 * 4
            + 4 * 8
            + 1
            + 4
            + payload.length
            + tagged;
    if (error != null) {
      typeBytes = modifiedUtf8(truncate(error.type()));
      messageBytes = modifiedUtf8(truncate(error.message()));
      size += 2 + typeBytes.length + 2 + messageBytes.length + 8;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.put(FORMAT_V2);
    putUtf(out, idBytes);
    out.putDouble(priority);
    out.put((byte) state.ordinal());
    out.putLong(delayUntil);
    out.putLong(leaseUntil);
    out.putLong(token);
    out.putInt(attempt);
    out.putLong(repeatCount);
    out.putLong(repeatDelay);
    out.putInt(retriesLeft);
    out.putInt(retryLimit);
    out.putLong(backoff.initial().toMillis());
    out.putDouble(backoff.multiplier());
    out.putLong(backoff.max().toMillis());
    out.putDouble(backoff.jitter());
    out.put((byte) (error != null ? 1 : 0));
    if (error != null) {
      putUtf(out, typeBytes);
      putUtf(out, messageBytes);
      out.putLong(error.failedAt().toEpochMilli());
    }
    out.putInt(payload.length);
    out.put(payload);
    out.putShort(fields);
    if (scheduleBytes != null) {
      out.put(TAG_SCHEDULE).putInt(2 + scheduleBytes.length);
      putUtf(out, scheduleBytes);
    }
    if (slot != -1) {
      out.put(TAG_SLOT).putInt(8).putLong(slot);
    }
    if (traceBytes != null) {
      out.put(TAG_TRACE_CONTEXT).putInt(traceBytes.length).put(traceBytes);
    }
    if (groupBytes != null) {
      out.put(TAG_GROUP).putInt(1 + 2 + groupBytes.length).put((byte) (parked ? 1 : 0));
      putUtf(out, groupBytes);
    }
    if (uniqueBytes != null) {
      out.put(TAG_UNIQUE_KEY).putInt(2 + uniqueBytes.length);
      putUtf(out, uniqueBytes);
      out.put(TAG_UNIQUE_SCOPE).putInt(1 + 1 + 8);
      out.put((byte) unique.scope().ordinal());
      out.put((byte) ((holdsUnique ? 1 : 0) | (unique.debounced() ? 2 : 0)));
      out.putLong(unique.period().toMillis());
    }
    if (runLimits) {
      out.put(TAG_RUN_LIMITS).putInt(9).putLong(timeoutMillis);
      out.put((byte) (interruptOnCancel ? 1 : 0));
    }
    if (cancelledAt != -1) {
      out.put(TAG_CANCELLED_AT).putInt(8).putLong(cancelledAt);
    }
    if (leaseExpiries != 0) {
      out.put(TAG_LEASE_EXPIRIES).putInt(4).putInt(leaseExpiries);
    }
    if (resultBytes != null) {
      out.put(TAG_RESULT).putInt(resultBytes.length).put(resultBytes);
    }
    if (attemptBytes != null) {
      out.put(TAG_ATTEMPTS).putInt(attemptBytes.length).put(attemptBytes);
    }
    if (finishedAt != -1) {
      out.put(TAG_FINISHED_AT).putInt(8).putLong(finishedAt);
    }
    return out.array();
  }

  private static byte[] encodeMap(Map<String, String> m) {
    if (m.size() > Short.MAX_VALUE) {
      throw new IllegalStateException("a map of " + m.size() + " entries in a job record");
    }
    byte[][] parts = new byte[m.size() * 2][];
    int size = 2;
    int i = 0;
    for (Map.Entry<String, String> e : m.entrySet()) {
      parts[i] = modifiedUtf8(e.getKey());
      parts[i + 1] = modifiedUtf8(e.getValue());
      size += 4 + parts[i].length + parts[i + 1].length;
      i += 2;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putShort((short) m.size());
    for (byte[] part : parts) {
      putUtf(out, part);
    }
    return out.array();
  }

  /**
   * The attempts as {@link java.io.DataOutputStream} writes them (a short count; per attempt its
   * number, start, end or -1, node in {@code writeUTF}'s form, and its error if any), into an array
   * of the exact size: a claim writes them for every job it takes.
   */
  static byte[] encodeAttempts(java.util.List<Attempt> list) {
    int n = list.size();
    byte[][] utf = new byte[3 * n][];
    int size = 2;
    for (int i = 0; i < n; i++) {
      Attempt a = list.get(i);
      utf[3 * i] = modifiedUtf8(a.node());
      size += 4 + 8 + 8 + 2 + utf[3 * i].length + 1;
      if (a.error().isPresent()) {
        JobError e = a.error().get();
        utf[3 * i + 1] = modifiedUtf8(e.type());
        utf[3 * i + 2] = modifiedUtf8(e.message());
        size += 2 + utf[3 * i + 1].length + 2 + utf[3 * i + 2].length + 8;
      }
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putShort((short) n);
    for (int i = 0; i < n; i++) {
      Attempt a = list.get(i);
      out.putInt(a.number());
      out.putLong(a.startedAt().toEpochMilli());
      out.putLong(a.endedAt().map(Instant::toEpochMilli).orElse(-1L));
      putUtf(out, utf[3 * i]);
      out.put((byte) (a.error().isPresent() ? 1 : 0));
      if (a.error().isPresent()) {
        putUtf(out, utf[3 * i + 1]);
        putUtf(out, utf[3 * i + 2]);
        out.putLong(a.error().get().failedAt().toEpochMilli());
      }
    }
    return out.array();
  }

  private static java.util.List<Attempt> decodeAttempts(ByteBuffer in) throws IOException {
    int n = in.getShort();
    Attempt[] list = new Attempt[n]; // List.of takes it as it is; the record's copyOf then too
    for (int i = 0; i < n; i++) {
      int number = in.getInt();
      Instant start = Instant.ofEpochMilli(in.getLong());
      long end = in.getLong();
      String node = getUtf(in);
      JobError error = null;
      if (in.get() != 0) {
        error = new JobError(getUtf(in), getUtf(in), Instant.ofEpochMilli(in.getLong()));
      }
      list[i] =
          new Attempt(
              number,
              start,
              end == -1
                  ? java.util.Optional.empty()
                  : java.util.Optional.of(Instant.ofEpochMilli(end)),
              node,
              java.util.Optional.ofNullable(error));
    }
    return java.util.List.of(list);
  }

  private static void decodeTagged(ByteBuffer in, Draft d) throws IOException {
    String uniqueKey = null;
    UniqueKey.Scope uniqueScope = null;
    byte uniqueFlags = 0;
    long uniquePeriod = 0;
    int fields = in.getShort();
    for (int f = 0; f < fields; f++) {
      byte tag = in.get();
      int length = in.getInt();
      int end = in.position() + length;
      switch (tag) {
        case TAG_SCHEDULE -> d.schedule = getUtf(in);
        case TAG_SLOT -> d.slot = in.getLong();
        case TAG_TRACE_CONTEXT -> {
          int n = in.getShort();
          Map<String, String> m = new LinkedHashMap<>();
          for (int i = 0; i < n; i++) {
            m.put(getUtf(in), getUtf(in));
          }
          d.traceContext = m;
        }
        case TAG_GROUP -> {
          d.parked = in.get() == 1;
          d.group = getUtf(in);
        }
        case TAG_UNIQUE_KEY -> uniqueKey = getUtf(in);
        case TAG_UNIQUE_SCOPE -> {
          uniqueScope = UniqueKey.Scope.values()[in.get()];
          uniqueFlags = in.get();
          uniquePeriod = in.getLong();
        }
        case TAG_RUN_LIMITS -> {
          d.timeoutMillis = in.getLong();
          d.interruptOnCancel = in.get() != 0;
        }
        case TAG_CANCELLED_AT -> d.cancelledAt = in.getLong();
        case TAG_LEASE_EXPIRIES -> d.leaseExpiries = in.getInt();
        case TAG_RESULT -> {
          byte[] b = new byte[length];
          in.get(b);
          d.result = new String(b, StandardCharsets.UTF_8);
        }
        case TAG_ATTEMPTS -> d.attempts = decodeAttempts(in);
        case TAG_FINISHED_AT -> d.finishedAt = in.getLong();
        default ->
            throw new IllegalStateException(
                "unknown field tag " + tag + " in a job record: written by a newer kvmq?");
      }
      if (in.position() != end) {
        throw new IllegalStateException("field tag " + tag + " is not " + length + " bytes long");
      }
    }
    if (in.hasRemaining()) {
      throw new IllegalStateException(in.remaining() + " bytes after the last field");
    }
    if ((uniqueKey == null) != (uniqueScope == null)) {
      throw new IllegalStateException("a unique key without its scope, or a scope without a key");
    }
    if (uniqueKey != null) {
      d.unique =
          new UniqueKey(
              uniqueKey, uniqueScope, Duration.ofMillis(uniquePeriod), (uniqueFlags & 2) != 0);
      d.holdsUnique = (uniqueFlags & 1) != 0;
    }
  }

  static JobRecord decode(byte[] bytes) {
    try {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      byte format = in.get();
      if (format != FORMAT_V1 && format != FORMAT_V2) {
        throw new IllegalStateException(
            "unknown job record format "
                + format
                + ": written by a newer kvmq? This version reads formats "
                + FORMAT_V1
                + " and "
                + FORMAT_V2);
      }
      Draft d = new Draft();
      d.id = getUtf(in);
      d.priority = in.getDouble();
      d.state = STATES[in.get()];
      d.delayUntil = in.getLong();
      d.leaseUntil = in.getLong();
      d.token = in.getLong();
      d.attempt = in.getInt();
      d.repeatCount = in.getLong();
      d.repeatDelay = in.getLong();
      d.retriesLeft = in.getInt();
      d.retryLimit = in.getInt();
      d.backoff =
          new Backoff(
              Duration.ofMillis(in.getLong()),
              in.getDouble(),
              Duration.ofMillis(in.getLong()),
              in.getDouble());
      if (in.get() != 0) {
        d.error = new JobError(getUtf(in), getUtf(in), Instant.ofEpochMilli(in.getLong()));
      }
      d.payload = new byte[in.getInt()];
      in.get(d.payload);
      if (format == FORMAT_V2) {
        decodeTagged(in, d);
      }
      return d.build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("corrupt job record (" + bytes.length + " bytes)", e);
    }
  }

  /** {@link java.io.DataOutput#writeUTF}'s encoding of {@code s}, without its length. */
  static byte[] modifiedUtf8(String s) {
    int n = s.length();
    int length = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      length += c >= 0x0001 && c <= 0x007F ? 1 : c <= 0x07FF ? 2 : 3;
    }
    if (length > 0xFFFF) {
      throw new IllegalStateException(
          "a string of " + length + " bytes in a job record; 65,535 at most");
    }
    byte[] out = new byte[length];
    int j = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x0001 && c <= 0x007F) {
        out[j++] = (byte) c;
      } else if (c <= 0x07FF) {
        out[j++] = (byte) (0xC0 | ((c >> 6) & 0x1F));
        out[j++] = (byte) (0x80 | (c & 0x3F));
      } else {
        out[j++] = (byte) (0xE0 | ((c >> 12) & 0x0F));
        out[j++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        out[j++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return out;
  }

  private static void putUtf(ByteBuffer out, byte[] utf) {
    out.putShort((short) utf.length);
    out.put(utf);
  }

  /**
   * Reads what {@link java.io.DataOutput#writeUTF} wrote; ASCII (ids, most errors) without a
   * stream.
   */
  private static String getUtf(ByteBuffer in) throws IOException {
    int length = Short.toUnsignedInt(in.getShort());
    int start = in.position();
    byte[] array = in.array();
    boolean ascii = true;
    for (int i = start; i < start + length && ascii; i++) {
      ascii = array[i] > 0; // 1 to 0x7F: one byte per char; 0 never appears alone in this encoding
    }
    String s;
    if (ascii && start + length <= array.length) {
      s = new String(array, start, length, StandardCharsets.ISO_8859_1);
    } else {
      s = new DataInputStream(new ByteArrayInputStream(array, start - 2, length + 2)).readUTF();
    }
    in.position(start + length);
    return s;
  }

  /**
   * Error texts are cut to 2,000 characters (at most 6,000 bytes): see {@link
   * Queue#MAX_STATE_BYTES}.
   */
  static String truncate(String s) {
    return s.length() <= 2000 ? s : s.substring(0, 2000) + "...";
  }

  @Override
  public String toString() {
    return "JobRecord[" + id + " " + state + " token=" + token + " attempt=" + attempt + "]";
  }

  /** The fields of a record being derived. */
  static final class Draft {
    String id;
    double priority;
    State state = State.READY;
    long delayUntil;
    long leaseUntil;
    long token;
    int attempt;
    long repeatCount;
    long repeatDelay;
    int retriesLeft;
    int retryLimit;
    Backoff backoff = Backoff.NONE;
    JobError error;
    byte[] payload = new byte[0];
    String schedule;
    long slot = -1;
    Map<String, String> traceContext = Map.of();
    UniqueKey unique;
    boolean holdsUnique;
    String group;
    boolean parked;
    long timeoutMillis = -1;
    boolean interruptOnCancel;
    long cancelledAt = -1;
    int leaseExpiries;
    String result;
    java.util.List<Attempt> attempts = java.util.List.of();
    long finishedAt = -1;

    Draft() {}

    private Draft(JobRecord r) {
      id = r.id;
      priority = r.priority;
      state = r.state;
      delayUntil = r.delayUntil;
      leaseUntil = r.leaseUntil;
      token = r.token;
      attempt = r.attempt;
      repeatCount = r.repeatCount;
      repeatDelay = r.repeatDelay;
      retriesLeft = r.retriesLeft;
      retryLimit = r.retryLimit;
      backoff = r.backoff;
      error = r.error;
      payload = r.payload;
      schedule = r.schedule;
      slot = r.slot;
      traceContext = r.traceContext;
      unique = r.unique;
      holdsUnique = r.holdsUnique;
      group = r.group;
      parked = r.parked;
      timeoutMillis = r.timeoutMillis;
      interruptOnCancel = r.interruptOnCancel;
      cancelledAt = r.cancelledAt;
      leaseExpiries = r.leaseExpiries;
      result = r.result;
      attempts = r.attempts;
      finishedAt = r.finishedAt;
    }

    Draft state(State s) {
      state = s;
      return this;
    }

    Draft leaseUntil(long t) {
      leaseUntil = t;
      return this;
    }

    JobRecord build() {
      return new JobRecord(this);
    }
  }
}
