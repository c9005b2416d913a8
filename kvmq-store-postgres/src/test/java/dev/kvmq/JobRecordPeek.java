package dev.kvmq;

/**
 * Test access to the kernel's job record format (package-private in the kernel): the crash
 * tests of this module read the fencing token of stored records. Tests only.
 */
public final class JobRecordPeek {

  private JobRecordPeek() {}

  /**
   * Reads the fencing token of an encoded job record.
   *
   * @param record the value of a {@code ["kvmq", queue, "job", id]} key
   * @return the record's token: the number of claims so far
   * @throws IllegalStateException if the bytes are not a job record
   */
  public static long token(byte[] record) {
    return JobRecord.decode(record).token;
  }
}
