package dev.kvmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvmq.testing.Seeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The control fields of a job record (tags 7 to 9: timeout and interrupt, cancelledAt, lease
 * expiries) round-trip, are written only when set, and a record without them encodes and decodes
 * exactly as before.
 */
class ControlRecordEncodingTest {

  @Test
  void controlFieldsRoundTripAndAreWrittenOnlyWhenSet() {
    Seeds.forEach(
        "controlFieldsRoundTripAndAreWrittenOnlyWhenSet",
        2_000,
        1,
        r -> {
          JobRecord.Draft d = JobRecordEncodingTest.random(r).draft();
          boolean limits = r.nextBoolean();
          if (limits) {
            d.timeoutMillis = r.nextBoolean() ? -1 : r.nextLong(1, Long.MAX_VALUE);
            d.interruptOnCancel = d.timeoutMillis == -1 || r.nextBoolean();
          }
          boolean cancelled = r.nextBoolean();
          if (cancelled) {
            d.cancelledAt = r.nextLong(0, Long.MAX_VALUE);
          }
          boolean expired = r.nextBoolean();
          if (expired) {
            d.leaseExpiries = r.nextInt(1, Integer.MAX_VALUE);
          }
          JobRecord record = d.build();
          byte[] bytes = record.encode();
          JobRecord back = JobRecord.decode(bytes);
          assertThat(back.timeoutMillis).isEqualTo(record.timeoutMillis);
          assertThat(back.interruptOnCancel).isEqualTo(record.interruptOnCancel);
          assertThat(back.cancelledAt).isEqualTo(record.cancelledAt);
          assertThat(back.leaseExpiries).isEqualTo(record.leaseExpiries);
          assertThat(back.encode()).isEqualTo(bytes);
          List<Integer> tags = tagsOf(bytes, record);
          assertThat(tags.contains(7)).isEqualTo(limits);
          assertThat(tags.contains(8)).isEqualTo(cancelled);
          assertThat(tags.contains(9)).isEqualTo(expired);
        });
  }

  @Test
  void aRecordWithoutControlFieldsIsTheFormatTwoItWasBefore() throws IOException {
    Seeds.forEach(
        "aRecordWithoutControlFieldsIsTheFormatTwoItWasBefore",
        500,
        1,
        r -> {
          JobRecord record = JobRecordEncodingTest.random(r);
          try {
            assertThat(record.encode()).isEqualTo(JobRecordEncodingTest.reference(record));
          } catch (IOException e) {
            throw new AssertionError(e);
          }
          JobRecord back = JobRecord.decode(record.encode());
          assertThat(back.timeoutMillis).isEqualTo(-1);
          assertThat(back.interruptOnCancel).isFalse();
          assertThat(back.cancelledAt).isEqualTo(-1);
          assertThat(back.leaseExpiries).isZero();
        });
  }

  /** The tags of the tagged fields of {@code bytes}, found after the record's fixed part. */
  private static List<Integer> tagsOf(byte[] bytes, JobRecord record) {
    JobRecord.Draft plain = record.draft();
    plain.timeoutMillis = -1;
    plain.interruptOnCancel = false;
    plain.cancelledAt = -1;
    plain.leaseExpiries = 0;
    plain.schedule = null;
    plain.slot = -1;
    plain.traceContext = java.util.Map.of();
    int fixed = plain.build().encode().length - 2; // less the field count
    ByteBuffer in = ByteBuffer.wrap(bytes, fixed, bytes.length - fixed);
    List<Integer> tags = new ArrayList<>();
    for (int n = in.getShort(); n > 0; n--) {
      tags.add((int) in.get());
      int length = in.getInt();
      in.position(in.position() + length);
    }
    return tags;
  }
}
