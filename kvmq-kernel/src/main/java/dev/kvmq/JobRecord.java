package dev.kvmq;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;

/**
 * A job as the kernel stores it: the source of truth under {@code [..., "job", id]}.
 *
 * <p>Immutable; changed copies come from {@link #draft()}. Encoded in a small versioned
 * binary format ({@link #encode()}, {@link #decode(byte[])}), so stored jobs do not depend
 * on Java serialization, class loaders or user classes: the payload is the user codec's
 * bytes.
 */
final class JobRecord {

  /** Which index holds the job. */
  enum State {
    READY, DELAYED, LEASED, DEAD
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

  byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(96 + payload.length);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FORMAT_V1);
      out.writeUTF(id);
      out.writeDouble(priority);
      out.writeByte(state.ordinal());
      out.writeLong(delayUntil);
      out.writeLong(leaseUntil);
      out.writeLong(token);
      out.writeInt(attempt);
      out.writeLong(repeatCount);
      out.writeLong(repeatDelay);
      out.writeInt(retriesLeft);
      out.writeInt(retryLimit);
      out.writeLong(backoff.initial().toMillis());
      out.writeDouble(backoff.multiplier());
      out.writeLong(backoff.max().toMillis());
      out.writeDouble(backoff.jitter());
      out.writeBoolean(error != null);
      if (error != null) {
        out.writeUTF(truncate(error.type()));
        out.writeUTF(truncate(error.message()));
        out.writeLong(error.failedAt().toEpochMilli());
      }
      out.writeInt(payload.length);
      out.write(payload);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static JobRecord decode(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      byte format = in.readByte();
      if (format != FORMAT_V1) {
        throw new IllegalStateException("unknown job record format " + format
            + ": written by a newer kvmq? This version reads format " + FORMAT_V1);
      }
      Draft d = new Draft();
      d.id = in.readUTF();
      d.priority = in.readDouble();
      d.state = State.values()[in.readByte()];
      d.delayUntil = in.readLong();
      d.leaseUntil = in.readLong();
      d.token = in.readLong();
      d.attempt = in.readInt();
      d.repeatCount = in.readLong();
      d.repeatDelay = in.readLong();
      d.retriesLeft = in.readInt();
      d.retryLimit = in.readInt();
      d.backoff = new Backoff(Duration.ofMillis(in.readLong()), in.readDouble(),
          Duration.ofMillis(in.readLong()), in.readDouble());
      if (in.readBoolean()) {
        d.error = new JobError(in.readUTF(), in.readUTF(), Instant.ofEpochMilli(in.readLong()));
      }
      d.payload = new byte[in.readInt()];
      in.readFully(d.payload);
      return d.build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("corrupt job record (" + bytes.length + " bytes)", e);
    }
  }

  /** Error texts are cut to 2,000 characters (at most 6,000 bytes): see {@link Queue#MAX_STATE_BYTES}. */
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
