package dev.kvmq.store.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names one store uses (tables, notification channel) and the SQL written with them. Names are
 * validated to plain lower-case identifiers, so they are safe to splice into SQL.
 */
final class Tables {

  /** The schema file shipped in the jar, written with the default names. */
  static final String SCHEMA_RESOURCE = "/dev/kvmq/store/postgres/schema-v5.sql";

  /**
   * The schema version this release creates and understands; its file upgrades versions 1, 2, 3 and
   * 4 to it in place.
   */
  static final int SCHEMA_VERSION = 5;

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");
  private static final Pattern DEFAULT_TABLE =
      Pattern.compile(
          "\\bkvmq_(kv|meta|versionstamp|schema_version|commit|key_parts|job_fields|jobs)\\b");
  private static final int MAX_SCHEMA = 20;
  private static final int MAX_PREFIX = 30;

  /** The savepoint a commit in the caller's transaction runs in. */
  static final String SAVEPOINT = "kvmq_commit";

  final String schema;
  final String prefix;
  final String kv;
  final String versionstamps;
  final String schemaVersion;
  final String channel;

  final String get;
  final String getMany;
  final String listAsc;
  final String listDesc;
  final String firstEntries;
  final String count;
  final String getPooled;
  final String getManyPooled;
  final String listAscPooled;
  final String listDescPooled;
  final String firstEntriesPooled;
  final String countPooled;
  final String checkReadPooled;
  final String getInCallers;
  final String getManyInCallers;
  final String listAscInCallers;
  final String listDescInCallers;
  final String firstEntriesInCallers;
  final String checkReadInCallers;
  final String countInCallers;
  final String lockFirst;
  final String lockFirstWithRecords;
  final String claimFirst;
  final String claimFirstWithRecords;
  final String checkRead;
  final String commit;
  final String commitAndEnd;
  final String notifyAndEnd;
  final String commitInCallersTransaction;
  final String readVersion;

  /** The first key of every advisory lock a commit takes: the same on every node. */
  final int lockSpace;

  Tables(String schema, String prefix) {
    this.schema = schema == null ? null : identifier("schema", schema, MAX_SCHEMA);
    this.prefix =
        identifier("table prefix", Objects.requireNonNull(prefix, "tablePrefix"), MAX_PREFIX);
    this.kv = qualified("kv");
    this.versionstamps = qualified("versionstamp");
    this.schemaVersion = qualified("schema_version");
    this.channel = (schema == null ? "" : schema + "_") + prefix + "_changes";

    String cols = "SELECT key, value, versionstamp FROM " + kv;
    get = cols + " WHERE key = ?";
    getMany = cols + " WHERE key = ANY (?)";
    listAsc = cols + " WHERE key >= ? AND key < ? ORDER BY key LIMIT ?";
    listDesc = cols + " WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT ?";
    // The first row of each range (lower and upper bounds as two arrays), one result row per
    // range in their order, with nulls where a range has none: one statement, one snapshot.
    firstEntries =
        "SELECT f.key, f.value, f.versionstamp FROM unnest(?::bytea[], ?::bytea[])"
            + " WITH ORDINALITY AS r(lo, hi, n) LEFT JOIN LATERAL ("
            + cols
            + " WHERE key >= r.lo AND key < r.hi ORDER BY key LIMIT 1) f ON true ORDER BY r.n";
    count = "SELECT count(*) FROM " + kv + " WHERE key >= ? AND key < ?";
    // The same reads on the store's own (pooled) connections, planned with enable_seqscan off
    // for the reason the claim's are (below). set_config(..., true) lasts until the end of the
    // transaction: here the implicit one of the message, which the read ends.
    String indexScans = "SELECT set_config('enable_seqscan', 'off', true); ";
    getPooled = indexScans + get;
    getManyPooled = indexScans + getMany;
    listAscPooled = indexScans + listAsc;
    listDescPooled = indexScans + listDesc;
    firstEntriesPooled = indexScans + firstEntries;
    countPooled = indexScans + count;
    // In the application's transaction (ConnectionStore) the setting would outlive the read, in
    // the application's own statements: so it is made in a savepoint, which is rolled back (a
    // rollback to a savepoint undoes the settings made after it) and released after the read,
    // all in one message. A read that fails fails the transaction, as any failed statement does.
    getInCallers = inSavepoint(get);
    getManyInCallers = inSavepoint(getMany);
    listAscInCallers = inSavepoint(listAsc);
    listDescInCallers = inSavepoint(listDesc);
    firstEntriesInCallers = inSavepoint(firstEntries);
    countInCallers = inSavepoint(count);
    // A claim's first statement: the first rows of the range that no other transaction holds.
    lockFirst = listAsc + " FOR UPDATE SKIP LOCKED";
    // The same, with the record each row points at by a planner's rule (prefix, then the
    // index key from a byte offset on): one round trip instead of two.
    lockFirstWithRecords =
        "SELECT i.key, i.value, i.versionstamp, r.key, r.value, r.versionstamp FROM ("
            + lockFirst
            + ") i LEFT JOIN "
            + kv
            + " r ON r.key = (?::bytea || substring(i.key FROM ?::int))"
            + " ORDER BY i.key";
    // A claim transaction's first message: the statements after it in the transaction (and the
    // commit function's, which sets it itself) are planned with enable_seqscan off. pgjdbc and
    // PostgreSQL keep a prepared statement's plan for the session; one made while the table was
    // small (a drained queue, after vacuum truncated it) reads the whole table for every claim
    // once a backlog has grown it, until autovacuum next updates the table's statistics. SET
    // LOCAL ends with the transaction: the connection goes back to the pool as it came.
    claimFirst = "SET LOCAL enable_seqscan TO off; " + lockFirst;
    claimFirstWithRecords = "SET LOCAL enable_seqscan TO off; " + lockFirstWithRecords;
    // One statement, one snapshot: the latest versionstamp and the checked keys together.
    checkRead =
        "SELECT s.last_value, k.key, k.versionstamp FROM "
            + versionstamps
            + " s LEFT JOIN "
            + kv
            + " k ON k.key = ANY (?)";
    checkReadPooled = indexScans + checkRead;
    checkReadInCallers = inSavepoint(checkRead);
    // Locks the keys first, then checks and writes: see schema-v5.sql.
    commit =
        "SELECT "
            + qualified("commit")
            + "(?, ?, ?::int4[], ?::bool[], ?::int4[], ?::bytea[], ?::int8[], ?::int4[],"
            + " ?::bytea[], ?::bytea[], ?, ?::text[], ?)";
    // The call and the COMMIT in one message (one round trip); the COMMIT runs only if the
    // call succeeded, as PostgreSQL skips the rest of a message after an error.
    commitAndEnd = commit + "; COMMIT";
    // In a transaction the caller holds (ConnectionStore): the call inside a savepoint, in one
    // message, so that a failed call can be undone without failing the caller's transaction.
    commitInCallersTransaction =
        "SAVEPOINT " + SAVEPOINT + "; " + commit + "; RELEASE SAVEPOINT " + SAVEPOINT;
    // Change notifications, apart from the commits (see Notifier): no flush to wait for.
    notifyAndEnd =
        "SET LOCAL synchronous_commit TO OFF; SELECT pg_notify(?, p) FROM unnest(?::text[]) AS p; COMMIT";
    readVersion = "SELECT max(version) FROM " + schemaVersion;
    lockSpace = kv.hashCode(); // String.hashCode is specified: every node computes the same
  }

  private static String inSavepoint(String read) {
    return "SAVEPOINT kvmq_read; SET LOCAL enable_seqscan TO off; "
        + read
        + "; ROLLBACK TO SAVEPOINT kvmq_read; RELEASE SAVEPOINT kvmq_read";
  }

  /** The name that {@code LISTEN} takes: the channel, quoted (it is case-sensitive). */
  String listenStatement() {
    return "LISTEN \"" + channel + "\"";
  }

  /** A name for messages: the key-value table. */
  String describe() {
    return kv;
  }

  /**
   * The statements of the shipped schema file with this store's table names.
   *
   * @throws UncheckedIOException if the file can't be read from the jar
   */
  List<String> schemaStatements() {
    String sql;
    try (InputStream in = Tables.class.getResourceAsStream(SCHEMA_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "the schema file " + SCHEMA_RESOURCE + " is missing from the kvmq-store-postgres jar");
      }
      sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("can't read the schema file " + SCHEMA_RESOURCE, e);
    }
    StringBuilder code = new StringBuilder();
    for (String line : sql.split("\n")) {
      if (!line.strip().startsWith("--")) {
        code.append(line).append('\n');
      }
    }
    Matcher m = DEFAULT_TABLE.matcher(code);
    String renamed = m.replaceAll(r -> Matcher.quoteReplacement(qualified(r.group(1))));
    return split(renamed);
  }

  /** Splits SQL at semicolons outside dollar-quoted ({@code $$}) bodies. */
  static List<String> split(String sql) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean inBody = false;
    for (int i = 0; i < sql.length(); i++) {
      char ch = sql.charAt(i);
      if (ch == '$' && i + 1 < sql.length() && sql.charAt(i + 1) == '$') {
        inBody = !inBody;
        current.append("$$");
        i++;
      } else if (ch == ';' && !inBody) {
        if (!current.toString().isBlank()) {
          statements.add(current.toString().strip());
        }
        current.setLength(0);
      } else {
        current.append(ch);
      }
    }
    if (!current.toString().isBlank()) {
      statements.add(current.toString().strip());
    }
    return statements;
  }

  private String qualified(String table) {
    return (schema == null ? "" : schema + ".") + prefix + "_" + table;
  }

  private static String identifier(String what, String name, int maxLength) {
    if (!IDENTIFIER.matcher(name).matches() || name.length() > maxLength) {
      throw new IllegalArgumentException(
          "the "
              + what
              + " must be a lower-case SQL identifier"
              + " ([a-z_][a-z0-9_]*) of at most "
              + maxLength
              + " characters: '"
              + name
              + "'");
    }
    return name;
  }

  @Override
  public String toString() {
    return kv;
  }
}
