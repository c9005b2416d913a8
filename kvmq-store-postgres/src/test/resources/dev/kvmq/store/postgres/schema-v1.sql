-- kvmq PostgreSQL store: schema version 1 (PostgreSQL 14 or newer).
--
-- PostgresKvStore runs this file itself on first use unless it was built with
-- createSchema(false); teams that manage migrations run it with their own tool instead.
-- Every statement is idempotent. The names here are the defaults (table prefix "kvmq",
-- no schema): for another prefix, replace "kvmq_" in the three table names; for a schema,
-- qualify them. The store does exactly that substitution when it runs the file.
--
-- kvmq_kv: one row per key. "key" is Key.encoded(), an order-preserving encoding, and
-- bytea compares bytewise, so the primary key's order is the key order (no collation).
-- "versionstamp" is the versionstamp of the commit that last wrote the row.
--
-- kvmq_meta: one row holding the versionstamp of the latest commit. Every writing
-- transaction locks and updates it first, which serializes writers across all nodes and
-- makes versionstamps strictly increasing in commit order. fillfactor leaves room on the
-- page so that its frequent updates stay heap-only (HOT).
--
-- kvmq_schema_version: one row per schema version installed, so later releases can
-- migrate. The store refuses to run against a newer version than it knows.
--
-- kvmq_commit(...): one writing transaction's work in one round trip, so that the
-- versionstamp row is held for as short a time as possible. See the function's comment.

CREATE TABLE IF NOT EXISTS kvmq_kv (
  key          bytea  PRIMARY KEY,
  value        bytea  NOT NULL,
  versionstamp bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS kvmq_meta (
  id           smallint PRIMARY KEY CHECK (id = 1),
  versionstamp bigint   NOT NULL
) WITH (fillfactor = 50);

INSERT INTO kvmq_meta (id, versionstamp) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

CREATE TABLE IF NOT EXISTS kvmq_schema_version (
  version      integer     PRIMARY KEY,
  installed_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO kvmq_schema_version (version) VALUES (1) ON CONFLICT (version) DO NOTHING;

-- Applies a batch of atomic operations, in order, each with its own checks, and returns
-- one number per operation: its versionstamp if it applied (for an operation without
-- mutations, the latest versionstamp), 0 if a check failed. The caller commits.
--   op_count                      number of operations (1..op_count)
--   check_op, check_key, check_vs every check: its operation, key, expected versionstamp
--                                 (0 = absent); sorted by operation
--   mut_op, mut_key, mut_value    every mutation: its operation, key, value (NULL =
--                                 delete); sorted by operation
--   channel, payloads             NOTIFY'd when anything was written
-- Unqualified names in the body resolve in the search_path the function was created
-- with (SET ... FROM CURRENT), whatever the caller's is.
-- The first statement locks the versionstamp row: writers wait here, and every later
-- statement of this VOLATILE function takes a fresh snapshot that sees all earlier commits.
-- That needs READ COMMITTED: under REPEATABLE READ the snapshot would be older than the
-- lock, so the function refuses to run there.
CREATE OR REPLACE FUNCTION kvmq_commit(
    op_count  integer,
    check_op  integer[],
    check_key bytea[],
    check_vs  bigint[],
    mut_op    integer[],
    mut_key   bytea[],
    mut_value bytea[],
    channel   text,
    payloads  text[])
  RETURNS bigint[]
  LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT
AS $$
DECLARE
  vs       bigint;
  results  bigint[] := array_fill(0::bigint, ARRAY[op_count]);
  c        integer := 1;
  m        integer := 1;
  n_checks integer := coalesce(cardinality(check_op), 0);
  n_muts   integer := coalesce(cardinality(mut_op), 0);
  holds    boolean;
  actual   bigint;
  wrote    boolean := false;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'kvmq commits need READ COMMITTED isolation (PostgreSQL''s default), not %',
      current_setting('transaction_isolation') USING ERRCODE = '55000';
  END IF;
  SELECT t.versionstamp INTO vs FROM kvmq_meta t WHERE t.id = 1 FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the versionstamp row (id = 1) of kvmq_meta is missing' USING ERRCODE = '55000';
  END IF;
  FOR op IN 1..op_count LOOP
    holds := true;
    WHILE c <= n_checks AND check_op[c] = op LOOP
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
      results[op] := greatest(vs, 1);
    ELSE
      vs := vs + 1;
      WHILE m <= n_muts AND mut_op[m] = op LOOP
        IF mut_value[m] IS NULL THEN
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
  IF wrote THEN
    UPDATE kvmq_meta t SET versionstamp = vs WHERE t.id = 1;
    PERFORM pg_notify(channel, p) FROM unnest(payloads) AS p;
  END IF;
  RETURN results;
END
$$;
