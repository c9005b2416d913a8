-- kvmq PostgreSQL store: schema version 2 (PostgreSQL 14 or newer).
--
-- PostgresKvStore runs this file itself on first use unless it was built with
-- createSchema(false); teams that manage migrations run it with their own tool instead.
-- Every statement is idempotent, and the file also upgrades a version-1 schema in place.
-- The names here are the defaults (table prefix "kvmq", no schema): for another prefix,
-- replace "kvmq_" in the names; for a schema, qualify them. The store does exactly that
-- substitution when it runs the file.
--
-- kvmq_kv: one row per key. "key" is Key.encoded(), an order-preserving encoding, and
-- bytea compares bytewise, so the primary key's order is the key order (no collation).
-- "versionstamp" is the versionstamp of the commit that last wrote the row.
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
-- Version 1 serialized every commit through one counter row (kvmq_meta). Upgrading drops
-- that row's table and the version-1 function, so that a node still running version 1
-- fails loudly instead of committing beside this scheme: upgrade every node together.

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

INSERT INTO kvmq_schema_version (version) VALUES (2) ON CONFLICT (version) DO NOTHING;

-- Applies a batch of atomic operations, in order, each with its own checks, and returns
-- one number per operation: its versionstamp if it applied (for an operation without
-- mutations, the latest versionstamp), 0 if a check failed. The caller commits.
--   op_count                      number of operations (1..op_count)
--   lock_space, lock_keys         the advisory locks to take: (lock_space, k) for every k,
--                                 one per key the batch checks or writes (a hash of it),
--                                 sorted and distinct; NULL for a batch too large for
--                                 key locks, which takes (lock_space, 0) exclusively
--   check_op, check_key, check_vs every check: its operation, key, expected versionstamp
--                                 (0 = absent); sorted by operation
--   mut_op, mut_key, mut_value    every mutation: its operation, key, value (NULL =
--                                 delete); sorted by operation
--   channel, payloads             NOTIFY'd when anything was written
-- Unqualified names in the body resolve in the search_path the function was created
-- with (SET ... FROM CURRENT), whatever the caller's is.
-- The locks come first, in one order for every caller (so callers can't deadlock on them),
-- and last until the end of the transaction: every later statement of this VOLATILE
-- function takes a fresh snapshot that sees every commit that held one of these keys
-- before, so checks are exact, and the versionstamps taken after the locks increase in
-- each key's commit order. Commits on disjoint keys do not wait for each other. Every
-- caller takes (lock_space, 0) shared, so a batch that takes it exclusively waits for
-- them all. That needs READ COMMITTED: under REPEATABLE READ the snapshot would be older
-- than the locks, so the function refuses to run there.
CREATE OR REPLACE FUNCTION kvmq_commit(
    op_count   integer,
    lock_space integer,
    lock_keys  integer[],
    check_op   integer[],
    check_key  bytea[],
    check_vs   bigint[],
    mut_op     integer[],
    mut_key    bytea[],
    mut_value  bytea[],
    channel    text,
    payloads   text[])
  RETURNS bigint[]
  LANGUAGE plpgsql VOLATILE
  SET search_path FROM CURRENT
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
  k        integer;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'kvmq commits need READ COMMITTED isolation (PostgreSQL''s default), not %',
      current_setting('transaction_isolation') USING ERRCODE = '55000';
  END IF;
  IF lock_keys IS NULL THEN
    PERFORM pg_advisory_xact_lock(lock_space, 0);
  ELSE
    PERFORM pg_advisory_xact_lock_shared(lock_space, 0);
    FOREACH k IN ARRAY lock_keys LOOP
      PERFORM pg_advisory_xact_lock(lock_space, k);
    END LOOP;
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
    PERFORM pg_notify(channel, p) FROM unnest(payloads) AS p;
  END IF;
  RETURN results;
END
$$;
