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
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Job records are stored: their bytes must stay format 1, the bytes a {@link DataOutputStream}
 * writes for the fields in order, whatever writes them.
 */
class JobRecordEncodingTest {

  /** Format 1 as first written, with DataOutputStream: the reference. */
  static byte[] reference(JobRecord r) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(1);
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
    }
    return bytes.toByteArray();
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
    return d.build();
  }

  @Test
  void encodeWritesFormatOneExactlyAsDataOutputStreamDid() {
    Seeds.forEach(
        "encodeWritesFormatOneExactlyAsDataOutputStreamDid",
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
        });
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
    newer[0] = 2;
    assertThatThrownBy(() -> JobRecord.decode(newer))
        .isInstanceOf(IllegalStateException.class)
        .hasStackTraceContaining("unknown job record format 2");
  }
}
