package dev.kvmq;

/**
 * Test access to the kernel's job record format (package-private in the kernel), shipped in the
 * kernel's test jar: the stores' crash tests read the fencing token of stored records
 * (kvmq-store-postgres's PostgresTenThousandJobsKillTest and JournalingStore). It lives here, in
 * the kernel's own package and test jar, so that no other module's tests add classes to the
 * kernel's package. Tests only.
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
