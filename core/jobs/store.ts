/**
 * The durable state of investigations run as jobs, in the collector's PostgreSQL beside the runs
 * (core/store/postgres.ts). The queue itself is pg-boss's (core/jobs/queue.ts); these tables hold
 * what the queue does not:
 *
 *  - `causeway_jobs`: one row per submitted investigation: its spec (validated, core/jobs/spec.ts),
 *    who asked, status, progress, the result, and which tests were appended to the run;
 *  - `causeway_job_arms`: one replayed arm per (job, key): the first stored wins (INSERT … ON
 *    CONFLICT DO NOTHING), so a pair redone after a worker died or a retry never counts twice;
 *  - `causeway_job_cache`: the seeded-model call cache shared by every worker of a job, each
 *    output stored losslessly (core/jobs/cache.ts).
 */
import { Pool, type PoolClient } from "pg";
import type { JobSpec } from "./spec";
import { decodeEntry, encodeEntry, type CacheEntry } from "./cache";

export type JobStatus = "queued" | "running" | "done" | "failed" | "cancelled";

export interface JobRow {
  id: string;
  run_id: string;
  spec: JobSpec;
  asked_by: string;
  status: JobStatus;
  progress: { tests: number; pairs: number; model_calls: number; message?: string } | null;
  result: unknown;
  error: string | null;
  workers: string[];
  appended: number;
  created_at: string;
  updated_at: string;
}

/** A stored arm: the outcome, or the reason its pair failed after its retries. */
export interface StoredArm {
  key: string;
  outcome: unknown;
  error: string | null;
  worker: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS causeway_jobs (
  id text PRIMARY KEY,
  run_id text NOT NULL,
  spec jsonb NOT NULL,
  asked_by text NOT NULL,
  status text NOT NULL DEFAULT 'queued',
  progress jsonb,
  result jsonb,
  error text,
  workers text[] NOT NULL DEFAULT '{}',
  appended integer NOT NULL DEFAULT 0,
  cancel boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS causeway_jobs_created ON causeway_jobs (created_at DESC);
CREATE TABLE IF NOT EXISTS causeway_job_arms (
  job_id text NOT NULL,
  key text NOT NULL,
  outcome jsonb,
  error text,
  worker text NOT NULL,
  PRIMARY KEY (job_id, key)
);
CREATE TABLE IF NOT EXISTS causeway_workers (
  name text PRIMARY KEY,
  concurrency integer NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS causeway_job_cache (
  job_id text NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (job_id, key)
);`;

const SCHEMA_LOCK = 0x63617573656a6f62n; // "causejob"

const rowOf = (r: Record<string, unknown>): JobRow => ({
  id: String(r.id),
  run_id: String(r.run_id),
  spec: r.spec as JobSpec,
  asked_by: String(r.asked_by),
  status: r.status as JobStatus,
  progress: (r.progress as JobRow["progress"]) ?? null,
  result: r.result ?? null,
  error: (r.error as string | null) ?? null,
  workers: (r.workers as string[]) ?? [],
  appended: Number(r.appended ?? 0),
  created_at: new Date(r.created_at as string).toISOString(),
  updated_at: new Date(r.updated_at as string).toISOString(),
});

export class JobStore {
  readonly pool: Pool;
  constructor(url: string, log: (line: string) => void = () => {}, max = 4) {
    this.pool = new Pool({ connectionString: url, max, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
    this.pool.on("error", (err) => log(`postgresql: idle client error: ${err.message}`));
  }

  async init(): Promise<void> {
    await this.with(async (c) => {
      await c.query("SELECT pg_advisory_lock($1)", [SCHEMA_LOCK.toString()]);
      try {
        await c.query(SCHEMA);
      } finally {
        await c.query("SELECT pg_advisory_unlock($1)", [SCHEMA_LOCK.toString()]).catch(() => undefined);
      }
    });
  }

  /** One client; a client that errors while checked out is dropped, never thrown at the process. */
  async with<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    let broken = false;
    const onError = () => (broken = true);
    c.on("error", onError);
    try {
      return await fn(c);
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      c.removeListener("error", onError);
      c.release(broken);
    }
  }

  async create(id: string, runId: string, spec: JobSpec, askedBy: string): Promise<JobRow> {
    const r = await this.pool.query("INSERT INTO causeway_jobs (id, run_id, spec, asked_by) VALUES ($1, $2, $3, $4) RETURNING *", [
      id,
      runId,
      JSON.stringify(spec),
      askedBy,
    ]);
    return rowOf(r.rows[0]);
  }

  async get(id: string): Promise<JobRow | null> {
    const r = await this.pool.query("SELECT * FROM causeway_jobs WHERE id = $1", [id]);
    return r.rows[0] ? rowOf(r.rows[0]) : null;
  }

  async list(limit = 50): Promise<JobRow[]> {
    const r = await this.pool.query("SELECT * FROM causeway_jobs ORDER BY created_at DESC, id LIMIT $1", [limit]);
    return r.rows.map(rowOf);
  }

  async cancelRequested(id: string): Promise<boolean> {
    const r = await this.pool.query("SELECT cancel, status FROM causeway_jobs WHERE id = $1", [id]);
    return !r.rows[0] || r.rows[0].cancel === true || r.rows[0].status === "cancelled";
  }

  /** Asks a queued or running job to stop; false when it had already finished. */
  async cancel(id: string): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE causeway_jobs SET cancel = true, updated_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING id",
      [id],
    );
    return r.rowCount === 1;
  }

  async setProgress(id: string, progress: JobRow["progress"]): Promise<void> {
    await this.pool.query(
      "UPDATE causeway_jobs SET status = CASE WHEN status = 'queued' THEN 'running' ELSE status END, progress = $2, updated_at = now() WHERE id = $1 AND status IN ('queued', 'running')",
      [id, JSON.stringify(progress)],
    );
  }

  /** Ends a job once: a finished job is never rewritten. */
  async finish(id: string, status: "done" | "failed" | "cancelled", result: unknown, error: string | null): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE causeway_jobs SET status = $2, result = $3, error = $4, updated_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING id",
      [id, status, result === null ? null : JSON.stringify(result), error],
    );
    return r.rowCount === 1;
  }

  async setAppended(id: string, n: number): Promise<void> {
    await this.pool.query("UPDATE causeway_jobs SET appended = GREATEST(appended, $2) WHERE id = $1", [id, n]);
  }

  async arms(id: string): Promise<Map<string, StoredArm>> {
    const r = await this.pool.query("SELECT key, outcome, error, worker FROM causeway_job_arms WHERE job_id = $1", [id]);
    return new Map(r.rows.map((x) => [String(x.key), { key: String(x.key), outcome: x.outcome, error: x.error ?? null, worker: String(x.worker) }]));
  }

  async armsFor(id: string, keys: string[]): Promise<Map<string, StoredArm>> {
    const r = await this.pool.query("SELECT key, outcome, error, worker FROM causeway_job_arms WHERE job_id = $1 AND key = ANY($2)", [id, keys]);
    return new Map(r.rows.map((x) => [String(x.key), { key: String(x.key), outcome: x.outcome, error: x.error ?? null, worker: String(x.worker) }]));
  }

  /** Model calls every stored arm of a job made (pairs asked ahead and never used included). */
  async spent(id: string): Promise<number> {
    const r = await this.pool.query("SELECT coalesce(sum((outcome->>'made')::bigint), 0) AS n FROM causeway_job_arms WHERE job_id = $1", [id]);
    return Number(r.rows[0].n);
  }

  /** Stores an arm unless one is stored already (the first wins); records the worker on the job. */
  async putArm(id: string, key: string, outcome: unknown, error: string | null, worker: string): Promise<void> {
    await this.with(async (c) => {
      await c.query("BEGIN");
      try {
        const r = await c.query("INSERT INTO causeway_job_arms (job_id, key, outcome, error, worker) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", [
          id,
          key,
          outcome === null ? null : JSON.stringify(outcome),
          error,
          worker,
        ]);
        if (r.rowCount === 1)
          await c.query("UPDATE causeway_jobs SET workers = array_append(workers, $2) WHERE id = $1 AND NOT ($2 = ANY(workers))", [id, worker]);
        await c.query("COMMIT");
      } catch (err) {
        await c.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    });
  }

  /** The job's model-call cache, each entry exactly as the model gave it (cache.ts). */
  async cache(id: string): Promise<Map<string, CacheEntry>> {
    const r = await this.pool.query("SELECT key, value FROM causeway_job_cache WHERE job_id = $1", [id]);
    const out = new Map<string, CacheEntry>();
    for (const x of r.rows) {
      const e = decodeEntry(x.value);
      if (e) out.set(String(x.key), e);
    }
    return out;
  }

  async putCache(id: string, entries: [string, CacheEntry][]): Promise<void> {
    if (!entries.length) return;
    await this.pool.query(
      "INSERT INTO causeway_job_cache (job_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::jsonb[]) AS t(k, v) ON CONFLICT DO NOTHING",
      [id, entries.map((e) => e[0]), entries.map((e) => JSON.stringify(encodeEntry(e[1])))],
    );
  }

  /** A worker says it is alive and how many tasks it takes at once. */
  async heartbeat(name: string, concurrency: number): Promise<void> {
    await this.pool.query(
      "INSERT INTO causeway_workers (name, concurrency) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET concurrency = EXCLUDED.concurrency, seen_at = now()",
      [name, concurrency],
    );
  }

  async leave(name: string): Promise<void> {
    await this.pool.query("DELETE FROM causeway_workers WHERE name = $1", [name]);
  }

  /** Tasks the workers seen in the last `withinS` seconds take at once. */
  async capacity(withinS: number): Promise<number> {
    const r = await this.pool.query("SELECT coalesce(sum(concurrency), 0) AS n FROM causeway_workers WHERE seen_at > now() - make_interval(secs => $1)", [
      withinS,
    ]);
    return Number(r.rows[0].n);
  }

  /** Queued or running jobs nothing moved for `s` seconds; each is touched, so it is woken once per `s`. */
  async stalled(s: number): Promise<string[]> {
    const r = await this.pool.query(
      "UPDATE causeway_jobs SET updated_at = now() WHERE status IN ('queued', 'running') AND updated_at < now() - make_interval(secs => $1) RETURNING id",
      [s],
    );
    return r.rows.map((x) => String(x.id));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
