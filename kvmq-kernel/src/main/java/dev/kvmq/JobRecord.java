package dev.kvmq;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * A job as the kernel stores it: the source of truth under {@code [..., "job", id]}.
 *
 * <p>Immutable; changed copies come from {@link #draft()}. Encoded in a small versioned binary
 * format ({@link #encode()}, {@link #decode(byte[])}), so stored jobs do not depend on Java
 * serialization, class loaders or user classes: the payload is the user codec's bytes.
 */
final class JobRecord {

  /** Which index holds the job. */
  enum State {
    READY,
    DELAYED,
    LEASED,
    DEAD
  }

  private static final byte FORMAT_V1 = 1;

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
    };
  }

  /**
   * The record's bytes: format 1, the bytes {@link java.io.DataOutputStream} writes for these
   * fields in this order (strings in its modified UTF-8), written here straight into one array of
   * the exact size.
   */
  byte[] encode() {
    byte[] idBytes = modifiedUtf8(id);
    byte[] typeBytes = null;
    byte[] messageBytes = null;
    int size =
        1 + 2 + idBytes.length + 8 + 1 + 3 * 8 + 4 + 2 * 8 + 2 * 4 + 4 * 8 + 1 + 4 + payload.length;
    if (error != null) {
      typeBytes = modifiedUtf8(truncate(error.type()));
      messageBytes = modifiedUtf8(truncate(error.message()));
      size += 2 + typeBytes.length + 2 + messageBytes.length + 8;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.put(FORMAT_V1);
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
    return out.array();
  }

  static JobRecord decode(byte[] bytes) {
    try {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      byte format = in.get();
      if (format != FORMAT_V1) {
        throw new IllegalStateException(
            "unknown job record format "
                + format
                + ": written by a newer kvmq? This version reads format "
                + FORMAT_V1);
      }
      Draft d = new Draft();
      d.id = getUtf(in);
      d.priority = in.getDouble();
      d.state = State.values()[in.get()];
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
