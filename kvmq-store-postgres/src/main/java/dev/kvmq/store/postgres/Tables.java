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
          "\\bkvmq_(kv|meta|versionstamp|schema_version|commit|key_parts|mutf8|job_fields|jobs)\\b");
  private static final int MAX_SCHEMA = 20;
  private static final int MAX_PREFIX = 30;

  /** The savepoint a commit in the caller's transaction runs in. */
  static final String SAVEPOINT = "kvmq_commit";

  final String schema;
  final String prefix;
  final String kv;
  final String versionstamps;
  final String schemaVersion;

  /**
   * The notification channel: {@code [<schema>_]<prefix>_changes}, named after the schema the table
   * is in ({@link #resolved}), so that every node that reaches the table shares it.
   */
  volatile String channel;

  final Read get;
  final Read getMany;
  final Read listAsc;
  final Read listDesc;
  final Read firstEntries;
  final Read count;
  final Read checkRead;
  final String lockFirst;
  final String lockFirstWithRecords;
  final String claimFirst;
  final String claimFirstWithRecords;
  final String commit;
  final String commitAndEnd;
  final String notifyAndEnd;
  final String commitInCallersTransaction;
  final String readVersion;

  /**
   * The first key of every advisory lock a commit takes: the same on every node that reaches the
   * table, however it names it ({@link #resolved}).
   */
  volatile int lockSpace;

  Tables(String schema, String prefix) {
    this.schema = schema == null ? null : identifier("schema", schema, MAX_SCHEMA);
    this.prefix =
        identifier("table prefix", Objects.requireNonNull(prefix, "tablePrefix"), MAX_PREFIX);
    this.kv = qualified("kv");
    this.versionstamps = qualified("versionstamp");
    this.schemaVersion = qualified("schema_version");
    this.channel = channelIn(this.schema == null ? "public" : this.schema);

    String cols = "SELECT key, value, versionstamp FROM " + kv;
    String listAscSql = cols + " WHERE key >= ? AND key < ? ORDER BY key LIMIT ?";
    get = Read.of(cols + " WHERE key = ?");
    getMany = Read.of(cols + " WHERE key = ANY (?)");
    listAsc = Read.of(listAscSql);
    listDesc = Read.of(cols + " WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT ?");
    // The first row of each range (lower and upper bounds as two arrays), one result row per
    // range in their order, with nulls where a range has none: one statement, one snapshot.
    firstEntries =
        Read.of(
            "SELECT f.key, f.value, f.versionstamp FROM unnest(?::bytea[], ?::bytea[])"
                + " WITH ORDINALITY AS r(lo, hi, n) LEFT JOIN LATERAL ("
                + cols
                + " WHERE key >= r.lo AND key < r.hi ORDER BY key LIMIT 1) f ON true ORDER BY r.n");
    count = Read.of("SELECT count(*) FROM " + kv + " WHERE key >= ? AND key < ?");
    // A claim's first statement: the first rows of the range that no other transaction holds.
    lockFirst = listAscSql + " FOR UPDATE SKIP LOCKED";
    // The same, with the record each row points at by a planner's rule (prefix, then the
    // index key from a byte offset on): one round trip instead of two.
    lockFirstWithRecords =
        "SELECT i.key, i.value, i.versionstamp, r.key, r.value, r.versionstamp FROM ("
            + lockFirst
            + ") i LEFT JOIN "
            + kv
            + " r ON r.key = (?::bytea || substring(i.key FROM ?::int))"
            + " ORDER BY i.key";
    // A claim transaction's first message: the statements after it in the transaction are
    // planned with enable_seqscan off (why: Read; the commit function sets it itself). SET LOCAL
    // ends with the transaction: the connection goes back to the pool as it came.
    claimFirst = "SET LOCAL enable_seqscan TO off; " + lockFirst;
    claimFirstWithRecords = "SET LOCAL enable_seqscan TO off; " + lockFirstWithRecords;
    // One statement, one snapshot: the latest versionstamp and the checked keys together.
    checkRead =
        Read.of(
            "SELECT s.last_value, k.key, k.versionstamp FROM "
                + versionstamps
                + " s LEFT JOIN "
                + kv
                + " k ON k.key = ANY (?)");
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
    lockSpace = lockSpaceIn(this.schema == null ? "public" : this.schema);
  }

  /**
   * Names the locks and the channel after the schema PostgreSQL found the table in ({@code
   * pg_namespace.nspname}): a node built with {@code schema("jobs")} and one whose search_path
   * starts with {@code jobs} reach the same table, and must take the same locks and hear each
   * other. A table in {@code public} keeps the names of a store built without a schema.
   */
  void resolved(String tableSchema) {
    lockSpace = lockSpaceIn(tableSchema);
    channel = channelIn(tableSchema);
  }

  private int lockSpaceIn(String tableSchema) {
    // String.hashCode is specified: every node computes the same
    return (tableSchema.equals("public") ? "" : tableSchema + ".")
        .concat(prefix + "_kv")
        .hashCode();
  }

  private String channelIn(String tableSchema) {
    String name = (tableSchema.equals("public") ? "" : tableSchema + "_") + prefix + "_changes";
    // a channel is an identifier: at most 63 bytes, or PostgreSQL cuts LISTEN's and refuses
    // pg_notify's
    return name.getBytes(StandardCharsets.UTF_8).length <= 63
        ? name
        : prefix + "_changes_" + Integer.toHexString(name.hashCode());
  }

  /**
   * A read in the three forms {@link Reads.Where} picks from. The plain statement runs in a claim's
   * transaction, which set {@code enable_seqscan} off itself. PostgreSQL and pgjdbc keep a prepared
   * statement's plan for the session, and one made while the table was small (a drained queue,
   * after vacuum truncated it) reads the whole table for every key once a backlog has grown it,
   * until autovacuum next updates the table's statistics; so the store's reads are planned with
   * {@code enable_seqscan} off, and the connection is left as it came. On a pooled connection in
   * auto-commit mode the read runs after {@code set_config(..., true)} in the same message, which
   * lasts until the end of the message's implicit transaction, which the read ends. In the
   * application's transaction ({@link ConnectionStore}) a setting would outlive the read, in the
   * application's own statements: so it is made in a savepoint that is rolled back (which undoes
   * the settings made after it) and released after the read, in one message; a read that fails
   * fails the transaction, as any failed statement does.
   *
   * @param plain the statement
   * @param pooled the statement for a pooled connection
   * @param inCallers the statement for the application's transaction
   */
  record Read(String plain, String pooled, String inCallers) {
    static Read of(String plain) {
      return new Read(
          plain,
          "SELECT set_config('enable_seqscan', 'off', true); " + plain,
          "SAVEPOINT kvmq_read; SET LOCAL enable_seqscan TO off; "
              + plain
              + "; ROLLBACK TO SAVEPOINT kvmq_read; RELEASE SAVEPOINT kvmq_read");
    }
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
