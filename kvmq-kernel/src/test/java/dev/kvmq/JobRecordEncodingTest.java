package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvmq.testing.Seeds;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Job records are stored: their bytes must stay format 2, the bytes a {@link DataOutputStream}
 * writes for the fields in order followed by the tagged fields, whatever writes them; and format 1
 * records, written before the tagged fields existed, must still read.
 */
class JobRecordEncodingTest {

  /** Format 1 as first written, with DataOutputStream (the tagged fields are not in it). */
  static byte[] referenceV1(JobRecord r) throws IOException {
    return reference(r, 1);
  }

  /** Format 2 written with DataOutputStream: the reference. */
  static byte[] reference(JobRecord r) throws IOException {
    return reference(r, 2);
  }

  private static byte[] reference(JobRecord r, int format) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(format);
      out.writeUTF(r.id);
      out.writeDouble(r.priority);
      out.writeByte(r.state.ordinal());
      out.writeLong(r.delayUntil);
      out.writeLong(r.leaseUntil);
      out.writeLong(r.token);
      out.writeInt(r.attempt);
      out.writeLong(r.repeatCount);
      out.writeLong(r.repeatDelay);
      out.writeInt(r.retriesLeft);
      out.writeInt(r.retryLimit);
      out.writeLong(r.backoff.initial().toMillis());
      out.writeDouble(r.backoff.multiplier());
      out.writeLong(r.backoff.max().toMillis());
      out.writeDouble(r.backoff.jitter());
      out.writeBoolean(r.error != null);
      if (r.error != null) {
        out.writeUTF(JobRecord.truncate(r.error.type()));
        out.writeUTF(JobRecord.truncate(r.error.message()));
        out.writeLong(r.error.failedAt().toEpochMilli());
      }
      out.writeInt(r.payload.length);
      out.write(r.payload);
      if (format == 2) {
        int fields =
            (r.schedule != null ? 1 : 0)
                + (r.slot != -1 ? 1 : 0)
                + (r.traceContext.isEmpty() ? 0 : 1);
        out.writeShort(fields);
        if (r.schedule != null) {
          byte[] utf = utf(r.schedule);
          out.writeByte(1);
          out.writeInt(2 + utf.length);
          out.writeUTF(r.schedule);
        }
        if (r.slot != -1) {
          out.writeByte(2);
          out.writeInt(8);
          out.writeLong(r.slot);
        }
        if (!r.traceContext.isEmpty()) {
          ByteArrayOutputStream map = new ByteArrayOutputStream();
          try (DataOutputStream m = new DataOutputStream(map)) {
            m.writeShort(r.traceContext.size());
            for (Map.Entry<String, String> e : r.traceContext.entrySet()) {
              m.writeUTF(e.getKey());
              m.writeUTF(e.getValue());
            }
          }
          out.writeByte(3);
          out.writeInt(map.size());
          out.write(map.toByteArray());
        }
      }
    }
    return bytes.toByteArray();
  }

  /** writeUTF's bytes without its length. */
  private static byte[] utf(String s) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(s);
    }
    return Arrays.copyOfRange(bytes.toByteArray(), 2, bytes.size());
  }

  private static final String[] PIECES = {
    "a",
    "Z",
    "0",
    "\u0000",
    "\u007f",
    "\u0080",
    "é",
    "\u07ff",
    "\u0800",
    "€",
    "\uffff",
    "😀",
    "\ud800",
    "java.lang.IllegalStateException",
    " "
  };

  static String text(SplittableRandom r, int maxPieces) {
    StringBuilder b = new StringBuilder();
    int n = r.nextInt(maxPieces + 1);
    for (int i = 0; i < n; i++) {
      b.append(PIECES[r.nextInt(PIECES.length)]);
    }
    return b.toString();
  }

  static JobRecord random(SplittableRandom r) {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id =
        r.nextBoolean()
            ? Ulid.format(r.nextLong(1L << 48), r.nextLong(), r.nextLong())
            : text(r, 6);
    d.priority = r.nextInt(4) == 0 ? Double.NEGATIVE_INFINITY : r.nextDouble() * 200 - 100;
    d.state = JobRecord.State.values()[r.nextInt(JobRecord.State.values().length)];
    d.delayUntil = r.nextLong();
    d.leaseUntil = r.nextLong();
    d.token = r.nextLong();
    d.attempt = r.nextInt();
    d.repeatCount = r.nextLong();
    d.repeatDelay = r.nextLong();
    d.retriesLeft = r.nextInt();
    d.retryLimit = r.nextInt();
    long initial = r.nextLong(1_000_000);
    d.backoff =
        new Backoff(
            Duration.ofMillis(initial),
            1 + r.nextDouble() * 3,
            Duration.ofMillis(initial + r.nextLong(1_000_000)),
            r.nextDouble());
    if (r.nextBoolean()) {
      // long enough, sometimes, to be cut to 2,000 characters
      d.error =
          new JobError(
              text(r, 40),
              text(r, r.nextInt(5) == 0 ? 3_000 : 30),
              Instant.ofEpochMilli(r.nextLong(1L << 50)));
    }
    d.payload = new byte[r.nextInt(300)];
    r.nextBytes(d.payload);
    if (r.nextBoolean()) {
      d.schedule = text(r, 8);
    }
    if (r.nextBoolean()) {
      d.slot = r.nextLong();
    }
    if (r.nextBoolean()) {
      Map<String, String> context = new LinkedHashMap<>();
      for (int i = r.nextInt(4); i > 0; i--) {
        context.put(text(r, 5), text(r, 20));
      }
      d.traceContext = context;
    }
    return d.build();
  }

  @Test
  void encodeWritesFormatTwoExactlyAsDataOutputStreamDoes() {
    Seeds.forEach(
        "encodeWritesFormatTwoExactlyAsDataOutputStreamDoes",
        3_000,
        1,
        r -> {
          JobRecord record = random(r);
          try {
            assertThat(record.encode()).isEqualTo(reference(record));
          } catch (IOException e) {
            throw new AssertionError(e);
          }
        });
  }

  /** The attempts field as it was first written, with DataOutputStream. */
  private static byte[] referenceAttempts(java.util.List<Attempt> list) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeShort(list.size());
      for (Attempt a : list) {
        out.writeInt(a.number());
        out.writeLong(a.startedAt().toEpochMilli());
        out.writeLong(a.endedAt().map(Instant::toEpochMilli).orElse(-1L));
        out.writeUTF(a.node());
        out.writeBoolean(a.error().isPresent());
        if (a.error().isPresent()) {
          out.writeUTF(a.error().get().type());
          out.writeUTF(a.error().get().message());
          out.writeLong(a.error().get().failedAt().toEpochMilli());
        }
      }
    }
    return bytes.toByteArray();
  }

  @Test
  void attemptsEncodeExactlyAsDataOutputStreamDoesAndReadBack() {
    Seeds.forEach(
        "attemptsEncodeExactlyAsDataOutputStreamDoesAndReadBack",
        2_000,
        1,
        r -> {
          java.util.List<Attempt> attempts = new java.util.ArrayList<>();
          for (int i = r.nextInt(5); i > 0; i--) {
            attempts.add(
                new Attempt(
                    1 + r.nextInt(1_000),
                    Instant.ofEpochMilli(r.nextLong(1L << 50)),
                    r.nextBoolean()
                        ? java.util.Optional.empty()
                        : java.util.Optional.of(Instant.ofEpochMilli(r.nextLong(1L << 50))),
                    text(r, 6),
                    r.nextBoolean()
                        ? java.util.Optional.empty()
                        : java.util.Optional.of(
                            new JobError(
                                text(r, 4),
                                text(r, 30),
                                Instant.ofEpochMilli(r.nextLong(1L << 50))))));
          }
          try {
            assertThat(JobRecord.encodeAttempts(attempts)).isEqualTo(referenceAttempts(attempts));
          } catch (IOException e) {
            throw new AssertionError(e);
          }
          JobRecord.Draft d = random(r).draft();
          d.attempts = attempts;
          assertThat(JobRecord.decode(d.build().encode()).attempts).isEqualTo(attempts);
        });
  }

  @Test
  void decodeReadsBackEveryField() {
    Seeds.forEach(
        "decodeReadsBackEveryField",
        3_000,
        1,
        r -> {
          JobRecord record = random(r);
          JobRecord back = JobRecord.decode(record.encode());
          assertThat(back.encode()).isEqualTo(record.encode());
          assertThat(back.id).isEqualTo(record.id);
          assertThat(back.state).isEqualTo(record.state);
          assertThat(back.backoff).isEqualTo(record.backoff);
          assertThat(back.payload).isEqualTo(record.payload);
          if (record.error != null && record.error.message().length() <= 2_000) {
            assertThat(back.error).isEqualTo(record.error);
          }
          assertThat(back.schedule).isEqualTo(record.schedule);
          assertThat(back.slot).isEqualTo(record.slot);
          assertThat(back.traceContext).containsExactlyEntriesOf(record.traceContext);
        });
  }

  @Test
  void aFormatOneRecordReadsWithTheNewFieldsAtTheirDefaults() {
    Seeds.forEach(
        "aFormatOneRecordReadsWithTheNewFieldsAtTheirDefaults",
        1_000,
        1,
        r -> {
          JobRecord record = random(r);
          JobRecord back;
          try {
            back = JobRecord.decode(referenceV1(record));
          } catch (IOException e) {
            throw new AssertionError(e);
          }
          assertThat(back.schedule).isNull();
          assertThat(back.slot).isEqualTo(-1);
          assertThat(back.traceContext).isEmpty();
          JobRecord.Draft d = record.draft();
          d.schedule = null;
          d.slot = -1;
          d.traceContext = Map.of();
          assertThat(back.encode()).isEqualTo(d.build().encode());
        });
  }

  @Test
  void anUnknownFieldTagIsReportedByNumber() throws IOException {
    JobRecord.Draft d = new JobRecord.Draft();
    d.id = "01J00000000000000000000000";
    byte[] plain = d.build().encode();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    bytes.write(plain, 0, plain.length - 2);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeShort(1);
      out.writeByte(99);
      out.writeInt(0);
    }
    assertThatThrownBy(() -> JobRecord.decode(bytes.toByteArray()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("corrupt job record")
        .hasStackTraceContaining("unknown field tag 99");
  }

  @Test
  void aTruncatedOrUnknownRecordIsReportedAsCorrupt() throws IOException {
    SplittableRandom r = new SplittableRandom(7);
    byte[] whole = random(r).encode();
    for (int cut : new int[] {0, 1, 3, 20, whole.length - 1}) {
      byte[] part = Arrays.copyOf(whole, cut);
      assertThatThrownBy(() -> JobRecord.decode(part))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("corrupt job record (" + cut + " bytes)");
    }
    byte[] newer = whole.clone();
    newer[0] = 3;
    assertThatThrownBy(() -> JobRecord.decode(newer))
        .isInstanceOf(IllegalStateException.class)
        .hasStackTraceContaining("unknown job record format 3");
  }
}
