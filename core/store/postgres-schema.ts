/**
 * The collector's PostgreSQL schema, as the migrations that build it in order (postgres.ts runs
 * the ones a database has not had yet, under an advisory lock, and records how many in
 * causeway_meta's schema_version).
 */
/** Migrations, in order; schema_version = how many have run. Never edit one that has shipped. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE causeway_runs (
     run_id text PRIMARY KEY,
     program text NOT NULL DEFAULT '',
     started text NOT NULL DEFAULT '',
     sort_at timestamptz NOT NULL DEFAULT now(),
     ended text,
     status text NOT NULL DEFAULT 'running',
     head_seq integer NOT NULL DEFAULT -1,
     head_hash text,
     events integer NOT NULL DEFAULT 0,
     alerts_high integer NOT NULL DEFAULT 0,
     alerts_review integer NOT NULL DEFAULT 0,
     alerts_info integer NOT NULL DEFAULT 0,
     tests integer NOT NULL DEFAULT 0,
     tools text[] NOT NULL DEFAULT '{}',
     sources text[] NOT NULL DEFAULT '{}',
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX causeway_runs_sort ON causeway_runs (sort_at DESC, run_id DESC);
   CREATE INDEX causeway_runs_high ON causeway_runs (sort_at DESC, run_id DESC) WHERE alerts_high > 0;
   CREATE INDEX causeway_runs_tools ON causeway_runs USING gin (tools);
   CREATE INDEX causeway_runs_sources ON causeway_runs USING gin (sources);
   CREATE TABLE causeway_events (
     run_id text NOT NULL REFERENCES causeway_runs ON DELETE CASCADE,
     seq integer NOT NULL,
     id text NOT NULL,
     hash text NOT NULL,
     line bytea NOT NULL,
     PRIMARY KEY (run_id, seq),
     UNIQUE (run_id, id)
   );
   CREATE TABLE causeway_blobs (ref text PRIMARY KEY, body bytea NOT NULL);
   CREATE TABLE causeway_run_blobs (
     run_id text NOT NULL REFERENCES causeway_runs ON DELETE CASCADE,
     ref text NOT NULL REFERENCES causeway_blobs,
     PRIMARY KEY (run_id, ref)
   );
   CREATE TABLE causeway_tests (
     run_id text NOT NULL REFERENCES causeway_runs ON DELETE CASCADE,
     n integer NOT NULL,
     line bytea NOT NULL,
     PRIMARY KEY (run_id, n)
   );`,
  // 2: a running run's alert counts are recomputed while it is ingested; alerts_seq is the head they
  // were computed at, so a slower recompute (another collector's) never overwrites a newer one
  `ALTER TABLE causeway_runs ADD COLUMN alerts_seq integer NOT NULL DEFAULT -1;
   UPDATE causeway_runs SET alerts_seq = head_seq WHERE status = 'ended';`,
  // 3: runs belong to their writer (core/store/owners.ts): the principal that created the run, and
  // the one that appended each test line; NULL for what was stored before (only admin extends it)
  `ALTER TABLE causeway_runs ADD COLUMN owner text;
   ALTER TABLE causeway_tests ADD COLUMN writer text;`,
];
