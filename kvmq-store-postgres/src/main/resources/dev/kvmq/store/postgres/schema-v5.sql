-- kvmq PostgreSQL store: schema version 5 (PostgreSQL 14 or newer).
--
-- PostgresKvStore runs this file itself on first use unless it was built with
-- createSchema(false); teams that manage migrations run it with their own tool instead.
-- Every statement is idempotent, and the file also upgrades a version-1, 2, 3 or 4 schema
-- in place: each step is written so that it does nothing where it was done already.
-- The names here are the defaults (table prefix "kvmq", no schema): for another prefix,
-- replace "kvmq_" in the names; for a schema, qualify them. The store does exactly that
-- substitution when it runs the file.
--
-- kvmq_kv: one row per key. "key" is Key.encoded(), an order-preserving encoding, and
-- bytea compares bytewise, so the primary key's order is the key order (no collation).
-- "versionstamp" is the versionstamp of the commit that last wrote the row. A queue churns
-- this table (every job is inserted, updated and deleted), so it ships with room on each
-- page for updates in place (fillfactor) and with autovacuum settings of its own, which
-- vacuum it after a number of dead rows rather than a fraction of the table (see below).
--
-- kvmq_versionstamp: the sequence that versionstamps come from. A commit takes its numbers
-- after it holds a lock on every key it checks or writes (see kvmq_commit), so a key's
-- versionstamps increase in the order its writes commit, and every commit's versionstamp
-- is greater than those of all commits that finished before it started.
--
-- kvmq_schema_version: one row per schema version installed, so later releases can
-- migrate. The store refuses to run against a newer version than it knows.
--
-- kvmq_commit(...): one writing transaction's work in one round trip. See its comment.
--
-- kvmq_jobs: a view of every job (queue, id, state, status, priority, due, attempt, lease
-- until, ...) decoded from the bytes, for operators; kvmq_key_parts and kvmq_job_fields are
-- the functions it decodes with. Read-only: change jobs through kvmq, never by hand.
--
-- Version 1 serialized every commit through one counter row (kvmq_meta). Upgrading drops
-- that row's table and the version-1 function, so that a node still running version 1
-- fails loudly instead of committing beside this scheme: upgrade every node together.
-- Version 2 -> 3 adds the table settings, the view and its functions, nothing that the
-- commits of version 2 use.
-- Version 3 -> 4 changes which advisory locks a commit takes (the keys of one job share one
-- lock; a key that is only checked is locked shared): a node of version 2 or 3 would lock the
-- same keys differently, and their commits could then interleave. So the upgrade drops the
-- commit function of versions 2 and 3 (a running node of those versions fails its next commit
-- loudly, and writes nothing), and such a node refuses to start on version 4: stop the nodes
-- of the older version, upgrade, start the new ones. Jobs that an old node held stay in the
-- table and run again when their leases expire.
-- Version 4 -> 5 replaces the commit function with one of the same arguments, locks and results
-- that plans its statements with enable_seqscan off (see the function's comment): a node of
-- version 4 that is still running commits through it unchanged, and a node of version 4 refuses
-- to start on version 5, so upgrade the nodes as they restart.

CREATE TABLE IF NOT EXISTS kvmq_kv (
  key          bytea  PRIMARY KEY,
  value        bytea  NOT NULL,
  versionstamp bigint NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS kvmq_versionstamp AS bigint MINVALUE 1;

CREATE TABLE IF NOT EXISTS kvmq_schema_version (
  version      integer     PRIMARY KEY,
  installed_at timestamptz NOT NULL DEFAULT now()
);

-- From version 1: versionstamps continue after the counter row's.
DO $$
BEGIN
  IF to_regclass('kvmq_meta') IS NOT NULL THEN
    PERFORM setval('kvmq_versionstamp', greatest(m.versionstamp, 1), m.versionstamp > 0)
      FROM kvmq_meta m WHERE m.id = 1;
    DROP FUNCTION IF EXISTS kvmq_commit(integer, integer[], bytea[], bigint[], integer[], bytea[], bytea[], text, text[]);
    DROP TABLE kvmq_meta;
  END IF;
END
$$;

-- Version 3: a queue churns rows. fillfactor leaves 30% of each heap page free when rows are
-- inserted, so that a job record's update (claim, renewal, retry) can stay on its page as a
-- heap-only tuple (no new index entry). Autovacuum normally waits for dead rows to reach 20%
-- of the table; a queue's table is small when it is drained and huge while it has a
-- backlog, so here it waits for 1,000 dead (or inserted) rows plus 1% of the table, and
-- (since version 4) vacuums it without the cost delay that throttles autovacuum by default
-- (2 ms per 200 pages): a churn of 4,000 jobs a second outran the throttled vacuum. Applies
-- to pages written from now on; ALTER TABLE ... SET takes a lock that reads and writes do
-- not wait for. Set once: on a new table, or one of version 1 or 2. A DBA may change them
-- afterwards, and running this file again (or upgrading) leaves the DBA's settings alone;
-- a version-3 table gets only version 4's cost delay, unless the DBA set one.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM kvmq_schema_version WHERE version >= 3) THEN
    ALTER TABLE kvmq_kv SET (
      fillfactor = 70,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_insert_threshold = 1000,
      autovacuum_vacuum_insert_scale_factor = 0.01,
      autovacuum_analyze_threshold = 1000,
      autovacuum_analyze_scale_factor = 0.02,
      autovacuum_vacuum_cost_delay = 0
    );
  ELSIF NOT EXISTS (SELECT 1 FROM kvmq_schema_version WHERE version >= 4)
      AND NOT EXISTS (SELECT 1 FROM pg_class t, unnest(t.reloptions) o
                       WHERE t.oid = to_regclass('kvmq_kv')
                         AND o LIKE 'autovacuum\_vacuum\_cost\_delay=%') THEN
    ALTER TABLE kvmq_kv SET (autovacuum_vacuum_cost_delay = 0);
  END IF;
END
$$;

-- Version 4: the commit function of versions 2 and 3 goes (see above); its successor below
-- takes one more argument, lock_shared.
DROP FUNCTION IF EXISTS kvmq_commit(integer, integer, integer[], integer[], bytea[], bigint[], integer[], bytea[], bytea[], text, text[]);

INSERT INTO kvmq_schema_version (version) VALUES (3), (4), (5) ON CONFLICT (version) DO NOTHING;

-- Applies a batch of atomic operations, in order, each with its own checks, and returns
-- one number per operation: its versionstamp if it applied (for an operation without
-- mutations, the latest versionstamp), 0 if a check failed. The caller commits.
--   op_count                      number of operations (1..op_count)
--   lock_space, lock_keys         the advisory locks to take: (lock_space, k) for every k,
--                                 one per lock key of the keys the batch checks or writes
--                                 (a hash of it: KeyLocks in the jar), sorted and distinct;
--                                 NULL for a batch too large for key locks, which takes
--                                 (lock_space, 0) exclusively
--   lock_shared                   per lock key: true to take it shared (the batch only
--                                 checks its keys), false exclusively (it writes one)
--   check_op, check_key, check_vs every check: its operation, key, expected versionstamp
--                                 (0 = absent); sorted by operation
--   mut_op, mut_key, mut_value    every mutation: its operation, key, value (NULL =
--                                 delete); sorted by operation
--   channel, payloads             NOTIFY'd when anything was written
--   disjoint                      true if no operation writes a key that another one of
--                                 the batch checks or writes (the caller knows): then
--                                 every check sees the state before the batch, whatever
--                                 the order, so the checks are one statement, and the
--                                 deletes and the upserts one each, instead of a
--                                 statement per check and per mutation
-- Unqualified names in the body resolve in the search_path the function was created
-- with (SET ... FROM CURRENT), whatever the caller's is.
-- enable_seqscan is off in the function (and only there): its statements look keys up by
-- the primary key, and PL/pgSQL keeps a statement's plan for the session. A plan made while
-- the table was small (a drained queue, after vacuum truncated it) would scan the whole table
-- for every key once a backlog has grown it, until autovacuum next updates the table's
-- statistics; with the setting the index is used whatever the statistics said (version 5).
-- The locks come first, in one order for every caller (so callers can't deadlock on them),
-- and last until the end of the transaction: every later statement of this VOLATILE
-- function takes a fresh snapshot that sees every commit that held one of these keys
-- before, so checks are exact, and the versionstamps taken after the locks increase in
-- each key's commit order. Commits on disjoint keys do not wait for each other, nor do
-- commits that only check a key they share (a shared lock); a commit that writes it waits
-- for them, and they for it. Every caller takes (lock_space, 0) shared, so a batch that
-- takes it exclusively waits for them all. That needs READ COMMITTED: under REPEATABLE READ the snapshot would be older
-- than the locks, so the function refuses to run there.
CREATE OR REPLACE FUNCTION kvmq_commit(
    op_count   integer,
    lock_space integer,
    lock_keys  integer[],
    lock_shared boolean[],
    check_op   integer[],
    check_key  bytea[],
    check_vs   bigint[],
    mut_op     integer[],
    mut_key    bytea[],
    mut_value  bytea[],
    channel    text,
    payloads   text[],
    disjoint   boolean)
  RETURNS bigint[]
  LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT
  SET enable_seqscan = off
AS $$
DECLARE
  vs       bigint := 0;
  results  bigint[] := array_fill(0::bigint, ARRAY[op_count]);
  c        integer := 1;
  m        integer := 1;
  n_checks integer := coalesce(cardinality(check_op), 0);
  n_muts   integer := coalesce(cardinality(mut_op), 0);
  holds    boolean;
  actual   bigint;
  wrote    boolean := false;
  i        integer;
  failed   integer[];
  sets     boolean := false;
  deletes  boolean := false;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'kvmq commits need READ COMMITTED isolation (PostgreSQL''s default), not %',
      current_setting('transaction_isolation') USING ERRCODE = '55000';
  END IF;
  IF lock_keys IS NULL THEN
    PERFORM pg_advisory_xact_lock(lock_space, 0);
  ELSE
    PERFORM pg_advisory_xact_lock_shared(lock_space, 0);
    FOR i IN 1..coalesce(cardinality(lock_keys), 0) LOOP
      IF lock_shared[i] THEN
        PERFORM pg_advisory_xact_lock_shared(lock_space, lock_keys[i]);
      ELSE
        PERFORM pg_advisory_xact_lock(lock_space, lock_keys[i]);
      END IF;
    END LOOP;
  END IF;
  IF disjoint AND n_checks > 0 THEN
    -- every check at once: a lookup by the primary key per check (a join could scan the table)
    SELECT array_agg(DISTINCT u.op) INTO failed
      FROM unnest(check_op, check_key, check_vs) AS u(op, key, vs)
     WHERE coalesce((SELECT t.versionstamp FROM kvmq_kv t WHERE t.key = u.key), 0) <> u.vs;
  END IF;
  FOR op IN 1..op_count LOOP
    holds := failed IS NULL OR NOT (op = ANY (failed));
    WHILE NOT disjoint AND c <= n_checks AND check_op[c] = op LOOP
      IF holds THEN
        SELECT t.versionstamp INTO actual FROM kvmq_kv t WHERE t.key = check_key[c];
        IF coalesce(actual, 0) <> check_vs[c] THEN
          holds := false;
        END IF;
      END IF;
      c := c + 1;
    END LOOP;
    IF NOT holds THEN
      results[op] := 0;
      WHILE m <= n_muts AND mut_op[m] = op LOOP
        m := m + 1;
      END LOOP;
    ELSIF m > n_muts OR mut_op[m] <> op THEN
      IF vs = 0 THEN
        SELECT s.last_value INTO vs FROM kvmq_versionstamp s;
        results[op] := greatest(vs, 1);
        vs := 0;
      ELSE
        results[op] := vs;
      END IF;
    ELSE
      vs := nextval('kvmq_versionstamp');
      WHILE m <= n_muts AND mut_op[m] = op LOOP
        IF disjoint THEN -- written below, all at once
          deletes := deletes OR mut_value[m] IS NULL;
          sets := sets OR mut_value[m] IS NOT NULL;
        ELSIF mut_value[m] IS NULL THEN
          DELETE FROM kvmq_kv t WHERE t.key = mut_key[m];
        ELSE
          INSERT INTO kvmq_kv AS t (key, value, versionstamp) VALUES (mut_key[m], mut_value[m], vs)
            ON CONFLICT (key) DO UPDATE SET value = excluded.value, versionstamp = excluded.versionstamp;
        END IF;
        m := m + 1;
      END LOOP;
      results[op] := vs;
      wrote := true;
    END IF;
  END LOOP;
  IF deletes THEN
    DELETE FROM kvmq_kv t
     WHERE t.key = ANY (ARRAY(SELECT u.key
                                FROM unnest(mut_op, mut_key, mut_value) AS u(op, key, value)
                               WHERE u.value IS NULL AND results[u.op] > 0));
  END IF;
  IF sets THEN
    INSERT INTO kvmq_kv AS t (key, value, versionstamp)
      SELECT u.key, u.value, results[u.op]
        FROM unnest(mut_op, mut_key, mut_value) AS u(op, key, value)
       WHERE u.value IS NOT NULL AND results[u.op] > 0
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, versionstamp = excluded.versionstamp;
  END IF;
  IF wrote THEN
    PERFORM pg_notify(channel, p) FROM unnest(payloads) AS p;
  END IF;
  RETURN results;
END
$$;


-- The parts of a key (Key.encoded(), see the kernel's Key) as text: strings as they are,
-- longs in decimal, booleans as true/false, byte arrays (and strings that contain a NUL,
-- which text can't hold) as '\x' and hex. NULL if the bytes are not a key encoding.
CREATE OR REPLACE FUNCTION kvmq_key_parts(key bytea)
  RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  parts text[] := '{}';
  n     integer := length(key);
  i     integer := 0;
  tag   integer;
  b     integer;
  start integer;
  raw   bytea;
BEGIN
  WHILE i < n LOOP
    tag := get_byte(key, i);
    i := i + 1;
    IF tag = 1 OR tag = 2 THEN
      raw := ''::bytea;
      start := i;
      LOOP
        IF i >= n THEN
          RETURN NULL;
        END IF;
        b := get_byte(key, i);
        IF b <> 0 THEN
          i := i + 1;
        ELSIF i + 1 < n AND get_byte(key, i + 1) = 255 THEN
          raw := raw || substring(key FROM start + 1 FOR i - start + 1); -- with the NUL
          i := i + 2;
          start := i;
        ELSE
          raw := raw || substring(key FROM start + 1 FOR i - start);
          i := i + 1;
          EXIT;
        END IF;
      END LOOP;
      IF tag = 2 AND position('\x00'::bytea IN raw) = 0 THEN
        parts := parts || convert_from(raw, 'UTF8');
      ELSE
        parts := parts || ('\x' || encode(raw, 'hex'));
      END IF;
    ELSIF tag = 3 THEN
      IF i + 8 > n THEN
        RETURN NULL;
      END IF;
      parts := parts || ((('x' || encode(substring(key FROM i + 1 FOR 8), 'hex'))::bit(64)::bigint
                          # (-9223372036854775807 - 1))::text);
      i := i + 8;
    ELSIF tag = 4 THEN
      parts := parts || 'false'::text;
    ELSIF tag = 5 THEN
      parts := parts || 'true'::text;
    ELSE
      RETURN NULL;
    END IF;
  END LOOP;
  RETURN parts;
END
$$;

-- The fields of a job record (the kernel's JobRecord, formats 1 and 2) that an operator
-- asks about; all NULL if the bytes are not such a record. Times are epoch milliseconds.
-- The text of a string of a record: Java's modified UTF-8 (DataOutput.writeUTF), which is
-- UTF-8 but for a NUL (C0 80, here U+FFFD: a text can't hold a NUL) and a character beyond
-- the BMP (a surrogate pair, 3 bytes each, here the character's 4 bytes); an unpaired
-- surrogate is U+FFFD too. NULL only if the result does not convert to the database's
-- encoding.
CREATE OR REPLACE FUNCTION kvmq_mutf8(bytes bytea) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  n       integer := length(bytes);
  i       integer := 0;
  run     integer := 0;  -- where the plain bytes not yet copied start
  b       integer;
  hi      integer;
  lo      integer;
  cp      integer;
  utf8    bytea := ''::bytea;
  four    bytea;
BEGIN
  BEGIN
    RETURN convert_from(bytes, 'UTF8');  -- the usual case
  EXCEPTION WHEN OTHERS THEN
    NULL;                                -- decoded below
  END;
  WHILE i < n LOOP
    b := get_byte(bytes, i);
    IF b = 192 AND i + 1 < n AND get_byte(bytes, i + 1) = 128 THEN
      utf8 := utf8 || substring(bytes FROM run + 1 FOR i - run) || '\xefbfbd'::bytea;
      i := i + 2;
      run := i;
    ELSIF b = 237 AND i + 2 < n AND (get_byte(bytes, i + 1) & 224) = 160 THEN
      -- a surrogate (ED A0-BF xx): a high one followed by a low one is one character
      utf8 := utf8 || substring(bytes FROM run + 1 FOR i - run);
      hi := 53248 | ((get_byte(bytes, i + 1) & 63) << 6) | (get_byte(bytes, i + 2) & 63);
      IF hi < 56320 AND i + 5 < n AND get_byte(bytes, i + 3) = 237
         AND (get_byte(bytes, i + 4) & 240) = 176 THEN
        lo := 53248 | ((get_byte(bytes, i + 4) & 63) << 6) | (get_byte(bytes, i + 5) & 63);
        cp := 65536 + ((hi - 55296) << 10) + (lo - 56320);
        four := '\x00000000'::bytea;
        four := set_byte(four, 0, 240 | (cp >> 18));
        four := set_byte(four, 1, 128 | ((cp >> 12) & 63));
        four := set_byte(four, 2, 128 | ((cp >> 6) & 63));
        four := set_byte(four, 3, 128 | (cp & 63));
        utf8 := utf8 || four;
        i := i + 6;
      ELSE
        utf8 := utf8 || '\xefbfbd'::bytea;
        i := i + 3;
      END IF;
      run := i;
    ELSE
      i := i + 1;
    END IF;
  END LOOP;
  utf8 := utf8 || substring(bytes FROM run + 1);
  RETURN convert_from(utf8, 'UTF8');
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$$;

-- state is the record's state ordinal: 0 ready, 1 delayed, 2 leased, 3 dead, 4 held,
-- 5 cancelled, 6 completed.
CREATE OR REPLACE FUNCTION kvmq_job_fields(
    bytes           bytea,
    OUT id          text,
    OUT priority    double precision,
    OUT state       integer,
    OUT delay_until bigint,
    OUT lease_until bigint,
    OUT token       bigint,
    OUT attempt     integer,
    OUT error_type  text,
    OUT error_message text,
    OUT failed_at   bigint)
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  n       integer := length(bytes);
  p       integer;
  bits    bigint;
  e       integer;
  m       bigint;
  len     integer;
BEGIN
  IF n < 3 OR get_byte(bytes, 0) NOT IN (1, 2) THEN
    RETURN;
  END IF;
  len := get_byte(bytes, 1) * 256 + get_byte(bytes, 2);
  p := 3 + len; -- after the id: priority, state, delayUntil, leaseUntil, token, attempt, ...
  IF n < p + 37 THEN
    RETURN;
  END IF;
  id := convert_from(substring(bytes FROM 4 FOR len), 'UTF8');
  bits := ('x' || encode(substring(bytes FROM p + 1 FOR 8), 'hex'))::bit(64)::bigint;
  e := ((bits >> 52) & 2047)::integer;
  m := bits & 4503599627370495;
  IF e = 2047 THEN
    priority := CASE WHEN m <> 0 THEN 'NaN' ELSE 'Infinity' END; -- the sign follows
  ELSIF e = 0 THEN
    priority := m * power(2::double precision, -1074);
  ELSE
    priority := (m + 4503599627370496) * power(2::double precision, e - 1075);
  END IF;
  IF bits < 0 THEN
    priority := -priority;
  END IF;
  state := get_byte(bytes, p + 8);
  delay_until := ('x' || encode(substring(bytes FROM p + 10 FOR 8), 'hex'))::bit(64)::bigint;
  lease_until := ('x' || encode(substring(bytes FROM p + 18 FOR 8), 'hex'))::bit(64)::bigint;
  token := ('x' || encode(substring(bytes FROM p + 26 FOR 8), 'hex'))::bit(64)::bigint;
  attempt := ('x' || encode(substring(bytes FROM p + 34 FOR 4), 'hex'))::bit(32)::integer;
  -- then repeatCount, repeatDelay (8 each), retriesLeft, retryLimit (4 each), the backoff
  -- (4 x 8), and the error flag: at p + 37 + 16 + 8 + 32 = p + 93
  p := p + 93;
  IF n > p AND get_byte(bytes, p) = 1 THEN
    len := get_byte(bytes, p + 1) * 256 + get_byte(bytes, p + 2);
    error_type := kvmq_mutf8(substring(bytes FROM p + 4 FOR len));
    p := p + 3 + len;
    len := get_byte(bytes, p) * 256 + get_byte(bytes, p + 1);
    error_message := kvmq_mutf8(substring(bytes FROM p + 3 FOR len));
    p := p + 2 + len;
    failed_at := ('x' || encode(substring(bytes FROM p + 1 FOR 8), 'hex'))::bit(64)::bigint;
  END IF;
END
$$;

-- Every job of every queue, one row per job, decoded from its record:
--   queue, id        the queue's name and the job's id
--   state            where the job is: ready, delayed, leased, dead, held, cancelled,
--                    completed (or 'state N' for a state this version does not know)
--   status           what kvmq reports for it at the database's now(), as Queue.get does:
--                    waiting, delayed, processing, dead, held, cancelled, completed (the
--                    nodes compare with their own clocks; keep them in sync with the
--                    database's)
--   priority         higher runs first
--   due              when it became (or becomes) due: the time it was pushed for, its retry
--                    or repeat time; NULL if it has none
--   attempt          how many times it has been started
--   lease_until      while leased: when its lease expires unless renewed
--   token            the fencing token of its latest lease
--   error_type, error_message, failed_at   the last failure, if any
-- It reads every row of kvmq_kv under the "kvmq" prefix: for a big table, filter on
-- queue and state in the query, and expect a scan.
CREATE OR REPLACE VIEW kvmq_jobs AS
  SELECT p.parts[2] AS queue,
         p.parts[4] AS id,
         CASE f.state WHEN 0 THEN 'ready' WHEN 1 THEN 'delayed' WHEN 2 THEN 'leased'
                      WHEN 3 THEN 'dead' WHEN 4 THEN 'held' WHEN 5 THEN 'cancelled'
                      WHEN 6 THEN 'completed' ELSE 'state ' || f.state END AS state,
         CASE f.state
           WHEN 0 THEN 'waiting'
           WHEN 1 THEN CASE WHEN (timestamptz 'epoch' + f.delay_until * interval '1 millisecond') > now()
                            THEN 'delayed' ELSE 'waiting' END
           WHEN 2 THEN CASE WHEN (timestamptz 'epoch' + f.lease_until * interval '1 millisecond') > now()
                            THEN 'processing' ELSE 'waiting' END
           WHEN 3 THEN 'dead'
           WHEN 4 THEN 'held'
           WHEN 5 THEN 'cancelled'
           WHEN 6 THEN 'completed'
         END AS status,
         f.priority,
         CASE WHEN f.delay_until > 0 THEN (timestamptz 'epoch' + f.delay_until * interval '1 millisecond') END AS due,
         f.attempt,
         CASE WHEN f.state = 2 THEN (timestamptz 'epoch' + f.lease_until * interval '1 millisecond') END AS lease_until,
         f.token,
         f.error_type,
         f.error_message,
         timestamptz 'epoch' + f.failed_at * interval '1 millisecond' AS failed_at
    FROM kvmq_kv k
         CROSS JOIN LATERAL kvmq_key_parts(k.key) AS p(parts)
         CROSS JOIN LATERAL kvmq_job_fields(k.value) AS f
   WHERE k.key >= '\x026b766d7100'::bytea AND k.key < '\x026b766d7101'::bytea -- ["kvmq", ...]
     AND position('\x00026a6f6200'::bytea IN k.key) > 0                       -- ..., "job", ...
     AND cardinality(p.parts) = 4 AND p.parts[3] = 'job'
     AND f.id IS NOT NULL;
