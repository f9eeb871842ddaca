/**
 * The PostgreSQL store (`causeway serve --store postgresql://…`), shared by any number of collector
 * processes. Each batch is one transaction: the run's row is locked (`SELECT … FOR UPDATE`), what
 * the validator needs of the stored run is read, the batch is checked, and its events, blobs and
 * the run's new head are written — or nothing is. Two collectors receiving batches of one run at
 * once are serialised by that row lock, so a chain never forks or loses a link.
 *
 * Events keep their exact line bytes (`causeway_events.line`), so a pulled run is byte-identical
 * to what a local writer writes; blobs are stored once by ref (`causeway_blobs`) and linked to the
 * runs that sent them (`causeway_run_blobs`); `causeway_runs` holds what listing needs. The schema
 * is created and migrated by the collector itself (`causeway_meta.schema_version`), under an
 * advisory lock so collectors starting together migrate once.
 */
import { Pool, type PoolClient } from "pg";
import { refsOf } from "../log/events";
import { blobFileText, isRef, refOf } from "../log/hash";
import type { JsonValue } from "../log/pyjson";
import { eventLine } from "../log/writer";
import { RUN_ID_RE } from "./http";
import { validateBatch, type IngestLimits, type IngestVerdict } from "./ingest";
import type { WritersRecord } from "../log/writers";
import { NOT_YOURS, mayWrite, writerId } from "./owners";
import { alertCounts, batchFacts, checkTest } from "./summary";
import {
  StoreError,
  decodeCursor,
  encodeCursor,
  type CollectorStore,
  type EventRange,
  type NotYours,
  type RunFilter,
  type RunPage,
  type RunRow,
  type TestVerdict,
  type Writer,
} from "./types";
import { isJsonObject } from "../log/pyjson";
import { MIGRATIONS } from "./postgres-schema";

/**
 * A run's text as a PostgreSQL text value: text columns cannot hold NUL, which JSON can (an event
 * id or tool name "a\u0000b" from a client). The index columns hold U+FFFD there; the event's own
 * line (bytea) keeps every byte, and a filter holding a control character is refused (api.ts).
 */
const pgText = (s: string): string => (s.includes("\u0000") ? s.split("\u0000").join("\ufffd") : s);

/**
 * A running run's alert counts are recomputed in the background after its batches, one run at a
 * time per collector, pausing ALERT_PAUSE × the last recompute's time between two (at least
 * ALERT_MIN_GAP_MS): the analysis costs at most about a tenth of a core however fast batches come.
 * run.end's batch recomputes at once, before its response.
 */
const ALERT_PAUSE = 9;
const ALERT_MIN_GAP_MS = 100;

const MIGRATION_LOCK = 0x6361_7573; // "caus"

/** Errors that mean the database is (for now) unreachable: the client should retry (503). */
function unavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (!e) return false;
  if (typeof e.code === "string" && (/^(08|57P)/.test(e.code) || ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND"].includes(e.code)))
    return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message ?? "");
}

export class PgStore implements CollectorStore {
  readonly kind = "postgresql" as const;
  private readonly pool: Pool;
  /** Running runs whose alert counts are behind their head (see {@link ALERT_PAUSE}). */
  private readonly staleAlerts = new Set<string>();
  private alertWorker: Promise<void> | undefined;
  /** Ends the alert worker's pause (on close). */
  private wake: () => void = () => {};
  private closed = false;

  constructor(
    url: string,
    private readonly log: (line: string) => void = () => {},
    opts: { max?: number } = {},
  ) {
    this.pool = new Pool({ connectionString: url, max: opts.max ?? 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
    // an idle client whose server went away: the pool drops it; never crash the collector
    this.pool.on("error", (err) => this.log(`postgresql: idle client error: ${err.message}`));
  }

  /** Runs fn on one client; connection failures become 503 (the client retries). */
  private async withClient<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw new StoreError(503, `the database is unavailable (${(err as Error).message})`);
    }
    let broken = false;
    // the server going away while this client is checked out: the query fails (below); without a
    // listener the client's 'error' event would end the collector
    const onError = (err: Error) => {
      broken = true;
      this.log(`postgresql: ${err.message}`);
    };
    c.on("error", onError);
    try {
      return await fn(c);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      if (unavailable(err)) {
        broken = true;
        throw new StoreError(503, `the database is unavailable (${(err as Error).message})`);
      }
      throw err;
    } finally {
      c.removeListener("error", onError);
      c.release(broken);
    }
  }

  /** One transaction; rolled back when fn throws or its result says `ok: false` (a refusal). */
  private async tx<T extends { ok: boolean }>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (c) => {
      await c.query("BEGIN");
      try {
        const r = await fn(c);
        await c.query(r.ok ? "COMMIT" : "ROLLBACK");
        return r;
      } catch (err) {
        await c.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    });
  }

  async init(): Promise<void> {
    await this.withClient(async (c) => {
      await c.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      try {
        await c.query("CREATE TABLE IF NOT EXISTS causeway_meta (key text PRIMARY KEY, value text NOT NULL)");
        const r = await c.query("SELECT value FROM causeway_meta WHERE key = 'schema_version'");
        const have = r.rows.length ? Number(r.rows[0].value) : 0;
        if (have > MIGRATIONS.length)
          throw new Error(`the database's causeway schema is version ${have}, newer than this collector's (${MIGRATIONS.length}); upgrade causeway`);
        for (let v = have; v < MIGRATIONS.length; v++) {
          await c.query("BEGIN");
          try {
            await c.query(MIGRATIONS[v]);
            await c.query("INSERT INTO causeway_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [
              String(v + 1),
            ]);
            await c.query("COMMIT");
          } catch (err) {
            await c.query("ROLLBACK").catch(() => undefined);
            throw err;
          }
          this.log(`postgresql: migrated the schema to version ${v + 1}`);
        }
      } finally {
        await c.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
      }
    });
  }

  async appendBatch(runId: string, body: JsonValue, limits: IngestLimits, writer: Writer): Promise<IngestVerdict | NotYours> {
    // what the validator may ask of the stored run, gathered from the (not yet checked) batch
    const evs = isJsonObject(body) && Array.isArray(body.events) ? body.events.filter(isJsonObject) : [];
    const firstSeq = evs.length && Number.isSafeInteger(evs[0].seq) ? (evs[0].seq as number) : undefined;
    const ids = [...new Set(evs.map((e) => e.id).filter((x): x is string => typeof x === "string"))];
    const refs = [...new Set(evs.flatMap((e) => refsOf(e)).filter(isRef))];
    const v = await this.tx(async (c): Promise<IngestVerdict | NotYours> => {
      // a new run is its writer's (a refused first batch rolls the row back); a stored one is checked
      // before the batch is looked at: someone else's run tells them nothing
      const made = await c.query("INSERT INTO causeway_runs (run_id, owner) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING", [runId, writerId(writer)]);
      const row = (await c.query("SELECT head_seq, head_hash, status, owner FROM causeway_runs WHERE run_id = $1 FOR UPDATE", [runId])).rows[0];
      if (!made.rowCount && !mayWrite(row.owner as string | null, writer)) return NOT_YOURS;
      const headSeq = row.head_seq as number;
      const atFirst =
        firstSeq !== undefined && firstSeq <= headSeq
          ? (await c.query("SELECT hash FROM causeway_events WHERE run_id = $1 AND seq = $2", [runId, firstSeq])).rows[0]?.hash
          : undefined;
      const haveIds = new Set<string>(
        ids.length ? (await c.query("SELECT id FROM causeway_events WHERE run_id = $1 AND id = ANY($2)", [runId, ids.map(pgText)])).rows.map((r) => r.id) : [],
      );
      const haveRefs = new Set<string>(
        refs.length ? (await c.query("SELECT ref FROM causeway_run_blobs WHERE run_id = $1 AND ref = ANY($2)", [runId, refs])).rows.map((r) => r.ref) : [],
      );
      const v = validateBatch(
        body,
        {
          head: headSeq >= 0 ? { seq: headSeq, hash: row.head_hash as string } : null,
          hashAt: (seq) => (seq === firstSeq ? atFirst : undefined),
          hasId: (id) => haveIds.has(pgText(id)),
          hasBlob: (ref) => haveRefs.has(ref),
          ended: row.status === "ended",
        },
        limits,
      );
      if (!v.ok) return v;
      const sent = [...v.blobs.keys()].sort(); // one order everywhere: no deadlocks between runs sharing blobs
      if (sent.length) {
        await c.query("INSERT INTO causeway_blobs (ref, body) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (ref) DO NOTHING", [
          sent,
          sent.map((r) => Buffer.from(blobFileText(v.blobs.get(r)), "utf8")),
        ]);
        await c.query("INSERT INTO causeway_run_blobs (run_id, ref) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING", [runId, sent]);
      }
      await c.query("INSERT INTO causeway_events (run_id, seq, id, hash, line) SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::bytea[])", [
        runId,
        v.events.map((e) => e.seq),
        v.events.map((e) => (typeof e.id === "string" ? pgText(e.id) : e.id)),
        v.events.map((e) => e.hash),
        v.events.map((e) => Buffer.from(eventLine(e), "utf8")),
      ]);
      const f = batchFacts(v.events);
      const sortAt = f.started && !Number.isNaN(Date.parse(f.started)) ? f.started : null;
      await c.query(
        `UPDATE causeway_runs SET
           head_seq = $2, head_hash = $3, events = events + $4,
           program = COALESCE($5, program), started = COALESCE($6, started), sort_at = COALESCE($7::timestamptz, sort_at),
           ended = COALESCE($8, ended), status = CASE WHEN $8::text IS NULL THEN status ELSE 'ended' END,
           tools = ARRAY(SELECT DISTINCT unnest(tools || $9::text[])), sources = ARRAY(SELECT DISTINCT unnest(sources || $10::text[])),
           updated_at = now()
         WHERE run_id = $1`,
        [
          runId,
          v.head.seq,
          v.head.hash,
          v.events.length,
          f.program === undefined ? null : pgText(f.program),
          f.started === undefined ? null : pgText(f.started),
          sortAt,
          f.ended === undefined ? null : pgText(f.ended),
          f.tools.map(pgText),
          f.sources.map(pgText),
        ],
      );
      return v;
    });
    if (!v.ok) return v;
    if (v.events.some((e) => e.type === "run.end")) {
      this.staleAlerts.delete(runId);
      await this.refreshAlerts(runId).catch((err) => this.log(`postgresql: alerts of ${runId}: ${(err as Error).message}`));
    } else this.alertsLater(runId);
    return v;
  }

  /** Queues a running run's alert recompute (see {@link ALERT_PAUSE}). */
  private alertsLater(runId: string): void {
    if (this.closed) return;
    this.staleAlerts.add(runId);
    this.alertWorker ??= this.alertLoop().finally(() => (this.alertWorker = undefined));
  }

  private async alertLoop(): Promise<void> {
    while (this.staleAlerts.size && !this.closed) {
      const runId: string = this.staleAlerts.values().next().value!;
      this.staleAlerts.delete(runId);
      const t0 = performance.now();
      await this.refreshAlerts(runId).catch((err) => this.log(`postgresql: alerts of ${runId}: ${(err as Error).message}`));
      const gap = Math.max(ALERT_MIN_GAP_MS, ALERT_PAUSE * (performance.now() - t0));
      await new Promise<void>((r) => {
        const t = setTimeout(r, gap);
        this.wake = () => (clearTimeout(t), r());
      });
    }
  }

  /**
   * Recomputes a run's alert counts (the same analysis as a local run's) into its row, unless a
   * recompute at a later head (by any collector) got there first.
   */
  async refreshAlerts(runId: string): Promise<void> {
    const events = await this.readEvents(runId, 0, 2 ** 31 - 1);
    if (!events?.head) return;
    const blobs = await this.withClient(
      async (c) =>
        (await c.query("SELECT b.ref, b.body FROM causeway_run_blobs rb JOIN causeway_blobs b ON b.ref = rb.ref WHERE rb.run_id = $1", [runId])).rows,
    );
    const map = new Map<string, Buffer>(blobs.map((r) => [r.ref as string, r.body as Buffer]));
    const tests = (await this.readTests(runId)) ?? Buffer.alloc(0);
    const writers = (await this.readWriters(runId)) ?? undefined;
    const a = alertCounts(runId, events.bytes, (ref) => map.get(ref), tests, writers);
    await this.withClient((c) =>
      c.query("UPDATE causeway_runs SET alerts_high = $2, alerts_review = $3, alerts_info = $4, alerts_seq = $5 WHERE run_id = $1 AND alerts_seq <= $5", [
        runId,
        a.high,
        a.review,
        a.info,
        events.head!.seq,
      ]),
    );
  }

  async appendTest(runId: string, body: JsonValue, writer: Writer): Promise<TestVerdict> {
    if (!RUN_ID_RE.test(runId)) return { ok: false, status: 404, error: `no run ${runId}` };
    return this.tx(async (c): Promise<TestVerdict> => {
      const row = (await c.query("SELECT tests, owner FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0 FOR UPDATE", [runId])).rows[0];
      if (!row) return { ok: false, status: 404, error: `no run ${runId}` };
      if (!mayWrite(row.owner as string | null, writer)) return NOT_YOURS;
      const stored = Buffer.concat((await c.query("SELECT line FROM causeway_tests WHERE run_id = $1 ORDER BY n", [runId])).rows.map((r) => r.line as Buffer));
      const v = checkTest(stored, body, writerId(writer));
      if (!v.ok) return v;
      await c.query("INSERT INTO causeway_tests (run_id, n, line, writer) VALUES ($1, $2, $3, $4)", [
        runId,
        (row.tests as number) + 1,
        Buffer.from(v.text!, "utf8"),
        writerId(writer),
      ]);
      await c.query("UPDATE causeway_runs SET tests = tests + 1, updated_at = now() WHERE run_id = $1", [runId]);
      const { text: _t, fileLine: _n, ...rest } = v;
      return rest;
    });
  }

  /**
   * Stores values as blobs of a run that its events do not name: the content a job's edits
   * produced, which its test lines name (`changes[].after`). Each is stored under the ref of its
   * own value, computed here, so no body can sit under another's name. Only the job system calls
   * it (core/jobs/test-blobs.ts), as it appends tests: never reachable from HTTP.
   */
  async addBlobs(
    runId: string,
    values: readonly unknown[],
    writer: Writer,
  ): Promise<{ ok: true; refs: string[] } | { ok: false; status: 403 | 404; error: string }> {
    if (!RUN_ID_RE.test(runId)) return { ok: false, status: 404, error: `no run ${runId}` };
    const blobs = new Map(values.map((v) => [refOf(v), Buffer.from(blobFileText(v), "utf8")]));
    const refs = [...blobs.keys()].sort(); // one order everywhere, as appendBatch: no deadlocks between runs sharing blobs
    return this.tx(async (c) => {
      const row = (await c.query("SELECT owner FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0 FOR UPDATE", [runId])).rows[0];
      if (!row) return { ok: false as const, status: 404 as const, error: `no run ${runId}` };
      if (!mayWrite(row.owner as string | null, writer)) return NOT_YOURS;
      if (refs.length) {
        await c.query("INSERT INTO causeway_blobs (ref, body) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (ref) DO NOTHING", [
          refs,
          refs.map((r) => blobs.get(r)!),
        ]);
        await c.query("INSERT INTO causeway_run_blobs (run_id, ref) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING", [runId, refs]);
      }
      return { ok: true as const, refs };
    });
  }

  async readWriters(runId: string): Promise<WritersRecord | null> {
    return this.withClient(async (c) => {
      const row = (await c.query("SELECT owner FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows[0];
      if (!row) return null;
      const tests = (await c.query("SELECT writer FROM causeway_tests WHERE run_id = $1 ORDER BY n", [runId])).rows.map(
        (r) => (r.writer as string | null) ?? null,
      );
      return { owner: (row.owner as string | null) ?? null, tests };
    });
  }

  private toRow(r: Record<string, unknown>): RunRow {
    return {
      run_id: r.run_id as string,
      program: r.program as string,
      started: r.started as string,
      ended: (r.ended as string | null) ?? null,
      status: r.status as "running" | "ended",
      events: r.events as number,
      head: (r.head_seq as number) >= 0 ? { seq: r.head_seq as number, hash: r.head_hash as string } : null,
      alerts: { high: r.alerts_high as number, review: r.alerts_review as number, info: r.alerts_info as number },
      tests: r.tests as number,
      tools: r.tools as string[],
      sources: r.sources as string[],
      updated: (r.updated_at as Date).toISOString(),
      owner: (r.owner as string | null) ?? null,
    };
  }

  async listRuns(f: RunFilter): Promise<RunPage> {
    const limit = Math.min(Math.max(f.limit ?? 50, 1), 500);
    const after = decodeCursor(f.cursor);
    const where: string[] = ["head_seq >= 0"];
    const args: unknown[] = [];
    const arg = (v: unknown) => {
      args.push(v);
      return `$${args.length}`;
    };
    if (f.program) where.push(`strpos(lower(program), lower(${arg(f.program)})) > 0`);
    if (f.since) where.push(`sort_at >= ${arg(f.since)}::timestamptz`);
    if (f.until) where.push(`sort_at < ${arg(f.until)}::timestamptz`);
    if (f.highAlert) where.push("alerts_high > 0");
    if (f.status) where.push(`status = ${arg(f.status)}`);
    if (f.source) where.push(`sources @> ARRAY[${arg(f.source)}]::text[]`);
    if (f.tool) where.push(`tools @> ARRAY[${arg(f.tool)}]::text[]`);
    if (after) {
      if (after.length !== 2 || typeof after[0] !== "string" || typeof after[1] !== "string") throw new StoreError(400, "bad cursor");
      where.push(`(sort_at, run_id) < (${arg(after[0])}::timestamptz, ${arg(after[1])})`);
    }
    const sql = `SELECT *, sort_at::text AS sort_key FROM causeway_runs WHERE ${where.join(" AND ")} ORDER BY sort_at DESC, run_id DESC LIMIT ${limit + 1}`;
    const rows = await this.withClient(async (c) => (await c.query(sql, args)).rows).catch((err: unknown) => {
      // class 22, a data exception (a cursor whose time is not one, a NUL, a time out of range): what the client sent
      if (/^22/.test(String((err as { code?: unknown })?.code ?? ""))) throw new StoreError(400, "bad cursor or filter");
      throw err;
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { runs: page.map((r) => this.toRow(r)), next: rows.length > limit && last ? encodeCursor([last.sort_key, last.run_id]) : null };
  }

  async getRun(runId: string): Promise<RunRow | null> {
    const r = await this.withClient(async (c) => (await c.query("SELECT * FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows[0]);
    return r ? this.toRow(r) : null;
  }

  async readEvents(runId: string, from: number, limit: number): Promise<EventRange | null> {
    return this.withClient(async (c) => {
      const row = (await c.query("SELECT head_seq, head_hash, status FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows[0];
      if (!row) return null;
      const lines = (
        await c.query("SELECT line FROM causeway_events WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4", [
          runId,
          from,
          row.head_seq,
          limit,
        ])
      ).rows.map((r) => r.line as Buffer);
      return { bytes: Buffer.concat(lines), from, count: lines.length, head: { seq: row.head_seq, hash: row.head_hash }, ended: row.status === "ended" };
    });
  }

  async listBlobs(runId: string): Promise<string[] | null> {
    return this.withClient(async (c) => {
      if (!(await c.query("SELECT 1 FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows.length) return null;
      return (await c.query("SELECT ref FROM causeway_run_blobs WHERE run_id = $1 ORDER BY ref", [runId])).rows.map((r) => r.ref as string);
    });
  }

  async readBlobPage(runId: string, after: string, limit: number): Promise<{ ref: string; body: Buffer }[] | null> {
    return this.withClient(async (c) => {
      if (!(await c.query("SELECT 1 FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows.length) return null;
      const rows = (
        await c.query(
          "SELECT b.ref, b.body FROM causeway_run_blobs rb JOIN causeway_blobs b ON b.ref = rb.ref WHERE rb.run_id = $1 AND rb.ref > $2 ORDER BY rb.ref LIMIT $3",
          [runId, after, limit],
        )
      ).rows;
      return rows.map((r) => ({ ref: r.ref as string, body: r.body as Buffer }));
    });
  }

  async readBlob(runId: string, ref: string): Promise<Buffer | null> {
    if (!isRef(ref)) return null;
    return this.withClient(
      async (c) =>
        (await c.query("SELECT b.body FROM causeway_run_blobs rb JOIN causeway_blobs b ON b.ref = rb.ref WHERE rb.run_id = $1 AND rb.ref = $2", [runId, ref]))
          .rows[0]?.body ?? null,
    );
  }

  async readTests(runId: string): Promise<Buffer | null> {
    return this.withClient(async (c) => {
      if (!(await c.query("SELECT 1 FROM causeway_runs WHERE run_id = $1 AND head_seq >= 0", [runId])).rows.length) return null;
      return Buffer.concat((await c.query("SELECT line FROM causeway_tests WHERE run_id = $1 ORDER BY n", [runId])).rows.map((r) => r.line as Buffer));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.alertWorker;
    await this.pool.end();
  }
}
