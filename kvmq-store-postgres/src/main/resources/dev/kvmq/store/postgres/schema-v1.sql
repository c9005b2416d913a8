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
