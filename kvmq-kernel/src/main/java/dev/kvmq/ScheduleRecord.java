package dev.kvmq;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Arrays;

/**
 * A schedule as the kernel stores it under {@code [..., "schedule", name]}: its definition (as
 * bytes, so that a definition is compared by what is stored) and its running state: paused, the
 * next due slot, the latest slot and job it pushed.
 *
 * <p>Immutable. Encoded in a small versioned binary format: {@code [byte format = 1][int length]
 * [definition][byte paused][long nextDue][long lastSlot][UTF lastJobId]}, where the definition is
 * {@code [UTF name][byte spec kind]} then, for a cron spec, {@code [UTF expression][UTF zone]}, for
 * a fixed rate {@code [long every seconds][int nanos][long anchor seconds][int nanos]}; then {@code
 * [int length][state bytes][double priority][int retries][long backoff initial ms][double
 * multiplier][long max ms][double jitter][byte missed kind][int limit][byte overlap][long lateness
 * seconds][int nanos]}. Times are epoch milliseconds, {@code -1} for none; an empty job id is none.
 * Strings are {@link DataOutputStream#writeUTF}'s.
 */
final class ScheduleRecord {

  private static final byte FORMAT = 1;
  private static final byte CRON = 0;
  private static final byte FIXED_RATE = 1;

  /** Why a definition or record can't be read. */
  static final class Unreadable extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Unreadable(String message, Throwable cause) {
      super(message, cause);
    }
  }

  final String name;

  /** The encoded definition: equal bytes, equal definitions. */
  final byte[] definition;

  final ScheduleSpec spec;
  final byte[] state;
  final JobOptions options;
  final MissedRuns missed;
  final Overlap overlap;
  final Duration lateness;
  final boolean paused;

  /** The next slot to fire (epoch ms), or -1 when paused or when the spec has no slot left. */
  final long nextDue;

  /** The slot of the latest job pushed (epoch ms), or -1. */
  final long lastSlot;

  /** The id of the latest job pushed, or null. */
  final String lastJobId;

  private ScheduleRecord(
      Def def, byte[] definition, boolean paused, long nextDue, long lastSlot, String lastJobId) {
    this.name = def.name;
    this.definition = definition;
    this.spec = def.spec;
    this.state = def.state;
    this.options = def.options;
    this.missed = def.missed;
    this.overlap = def.overlap;
    this.lateness = def.lateness;
    this.paused = paused;
    this.nextDue = nextDue;
    this.lastSlot = lastSlot;
    this.lastJobId = lastJobId;
  }

  /** The parts of a definition. */
  private record Def(
      String name,
      ScheduleSpec spec,
      byte[] state,
      JobOptions options,
      MissedRuns missed,
      Overlap overlap,
      Duration lateness) {}

  /**
   * A new record of a definition whose state is already encoded.
   *
   * @throws IllegalArgumentException if a string of the definition has no modified UTF-8 form of at
   *     most 65,535 bytes
   */
  static ScheduleRecord of(
      Schedule<?> s, byte[] state, boolean paused, long nextDue, long lastSlot, String lastJobId) {
    Def def =
        new Def(
            s.name(), s.spec(), state.clone(), s.options(), s.missed(), s.overlap(), s.lateness());
    return new ScheduleRecord(def, encodeDefinition(def), paused, nextDue, lastSlot, lastJobId);
  }

  /** This record with a new running state. */
  ScheduleRecord with(boolean paused, long nextDue, long lastSlot, String lastJobId) {
    return new ScheduleRecord(def(), definition, paused, nextDue, lastSlot, lastJobId);
  }

  /** Whether {@code other} has the same definition (byte for byte). */
  boolean sameDefinition(ScheduleRecord other) {
    return Arrays.equals(definition, other.definition);
  }

  private Def def() {
    return new Def(name, spec, state, options, missed, overlap, lateness);
  }

  /** The definition as a value, with the state decoded by {@code codec}. */
  <S> Schedule<S> schedule(Codec<S> codec) {
    return Schedule.builder(name, spec, codec.decode(state.clone()))
        .options(options)
        .missed(missed)
        .overlap(overlap)
        .lateness(lateness)
        .build();
  }

  byte[] encode() {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(definition.length + 64);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeByte(FORMAT);
      out.writeInt(definition.length);
      out.write(definition);
      out.writeBoolean(paused);
      out.writeLong(nextDue);
      out.writeLong(lastSlot);
      out.writeUTF(lastJobId == null ? "" : lastJobId);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
    }
  }

  /**
   * Decodes a stored record.
   *
   * @throws Unreadable if the bytes are not a schedule record this version reads
   */
  static ScheduleRecord decode(byte[] bytes) {
    try {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
      byte format = in.readByte();
      if (format != FORMAT) {
        throw new IllegalStateException(
            "unknown schedule record format "
                + format
                + ": written by a newer kvmq? This version reads format "
                + FORMAT);
      }
      int length = in.readInt();
      if (length < 0 || length > bytes.length) {
        throw new IllegalStateException("a definition of " + length + " bytes");
      }
      byte[] definition = in.readNBytes(length);
      if (definition.length != length) {
        throw new IllegalStateException("the definition is cut short");
      }
      Def def = decodeDefinition(definition);
      boolean paused = in.readBoolean();
      long nextDue = in.readLong();
      long lastSlot = in.readLong();
      String lastJobId = in.readUTF();
      if (in.available() != 0) {
        throw new IllegalStateException(in.available() + " bytes after the last field");
      }
      return new ScheduleRecord(
          def, definition, paused, nextDue, lastSlot, lastJobId.isEmpty() ? null : lastJobId);
    } catch (IOException | RuntimeException e) {
      throw new Unreadable("corrupt schedule record (" + bytes.length + " bytes)", e);
    }
  }

  private static byte[] encodeDefinition(Def d) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(d.state.length + 128);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeUTF(d.name);
      if (d.spec instanceof ScheduleSpec.Cron c) {
        out.writeByte(CRON);
        out.writeUTF(c.expression());
        out.writeUTF(c.zone().getId());
      } else {
        ScheduleSpec.FixedRate f = (ScheduleSpec.FixedRate) d.spec;
        out.writeByte(FIXED_RATE);
        out.writeLong(f.every().getSeconds());
        out.writeInt(f.every().getNano());
        out.writeLong(f.anchor().getEpochSecond());
        out.writeInt(f.anchor().getNano());
      }
      out.writeInt(d.state.length);
      out.write(d.state);
      JobOptions o = d.options;
      out.writeDouble(o.priority());
      out.writeInt(o.retryCount());
      Backoff b = o.retryBackoff();
      out.writeLong(b.initial().toMillis());
      out.writeDouble(b.multiplier());
      out.writeLong(b.max().toMillis());
      out.writeDouble(b.jitter());
      out.writeByte(d.missed.kind().ordinal());
      out.writeInt(d.missed.limit());
      out.writeByte(d.overlap.ordinal());
      out.writeLong(d.lateness.getSeconds());
      out.writeInt(d.lateness.getNano());
      out.flush();
      return bytes.toByteArray();
    } catch (java.io.UTFDataFormatException e) {
      throw new IllegalArgumentException(
          "schedule " + d.name + ": a text of its definition is over 65,535 bytes", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
    }
  }

  private static Def decodeDefinition(byte[] definition) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(definition));
    String name = in.readUTF();
    byte kind = in.readByte();
    ScheduleSpec spec =
        switch (kind) {
          case CRON -> ScheduleSpec.cron(in.readUTF(), ZoneId.of(in.readUTF()));
          case FIXED_RATE ->
              ScheduleSpec.fixedRate(
                  Duration.ofSeconds(in.readLong(), in.readInt()),
                  Instant.ofEpochSecond(in.readLong(), in.readInt()));
          default -> throw new IllegalStateException("unknown spec kind " + kind);
        };
    int stateLength = in.readInt();
    if (stateLength < 0 || stateLength > definition.length) {
      throw new IllegalStateException("a state of " + stateLength + " bytes");
    }
    byte[] state = in.readNBytes(stateLength);
    double priority = in.readDouble();
    int retries = in.readInt();
    Backoff backoff =
        new Backoff(
            Duration.ofMillis(in.readLong()),
            in.readDouble(),
            Duration.ofMillis(in.readLong()),
            in.readDouble());
    JobOptions options = JobOptions.defaults().priority(priority).retry(retries, backoff);
    MissedRuns.Kind missedKind = MissedRuns.Kind.values()[in.readByte()];
    int limit = in.readInt();
    MissedRuns missed =
        switch (missedKind) {
          case RUN_ONCE -> MissedRuns.runOnce();
          case SKIP -> MissedRuns.skip();
          case RUN_EACH -> MissedRuns.runEach(limit);
        };
    Overlap overlap = Overlap.values()[in.readByte()];
    Duration lateness = Duration.ofSeconds(in.readLong(), in.readInt());
    if (in.available() != 0) {
      throw new IllegalStateException(in.available() + " bytes after the definition");
    }
    return new Def(name, spec, state, options, missed, overlap, lateness);
  }

  @Override
  public String toString() {
    return "ScheduleRecord["
        + name
        + (paused ? " paused" : "")
        + " nextDue="
        + nextDue
        + " lastSlot="
        + lastSlot
        + " lastJobId="
        + lastJobId
        + "]";
  }
}
