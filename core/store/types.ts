/**
 * Where a collector keeps runs: one interface, two implementations.
 *
 *  - {@link FolderStore} (core/store/folder.ts): a runs folder, each run a folder written byte for
 *    byte as a local writer would (the embedded default: `causeway serve ROOT`);
 *  - {@link PgStore} (core/store/postgres.ts): PostgreSQL (`causeway serve --store postgresql://…`),
 *    shared by any number of collector processes.
 *
 * A store owns persistence and serialisation of one run's writers; the checks themselves are the
 * ingest validator's (core/store/ingest.ts), run by the store inside its lock/transaction so that
 * what is checked is what is stored.
 */
import type { JsonValue } from "../log/pyjson";
import type { IngestLimits, IngestVerdict, RunHead } from "./ingest";
import type { WritersRecord } from "../log/writers";

/**
 * Who is writing.
 *  - `token`: an HTTP request, by its bearer token's principal (core/store/tokens.ts).
 *  - `job`: the collector's own job system appending for whoever submitted the job. Not reachable
 *    from HTTP (the server builds only `token` writers): the one extension point for the durable
 *    workers, through `appendTestFor` (core/store/owners.ts). What it writes is attributed to
 *    `actingFor`, so a job submitted by someone other than the run's writer still shows as foreign.
 */
export type Writer = { via: "token"; principal: string; admin: boolean } | { via: "job"; actingFor: string };

/** What listing a run needs (the runs table). */
export interface RunRow {
  run_id: string;
  program: string;
  /** run.start's ts (as recorded), or "" */
  started: string;
  /** run.end's ts, or null while running */
  ended: string | null;
  status: "running" | "ended";
  events: number;
  head: RunHead | null;
  alerts: { high: number; review: number; info: number };
  tests: number;
  tools: string[];
  sources: string[];
  /** ISO time of the last write */
  updated: string;
  /** The principal that created the run (core/store/owners.ts); null when stored before owners were recorded. */
  owner?: string | null;
}

export interface RunFilter {
  /** Substring of the program (case-insensitive). */
  program?: string;
  /** run.start at or after (ISO). */
  since?: string;
  /** run.start before (ISO). */
  until?: string;
  highAlert?: boolean;
  status?: "running" | "ended";
  /** An input source the run read, exactly. */
  source?: string;
  /** A tool the run called, exactly. */
  tool?: string;
  /** Page size (1–500, default 50). */
  limit?: number;
  /** Opaque, from the previous page's `next`. */
  cursor?: string;
}

export interface RunPage {
  runs: RunRow[];
  next: string | null;
}

/** A range of a run's events, as the exact bytes of their lines. */
export interface EventRange {
  /** The lines, each ending in "\n", concatenated. */
  bytes: Buffer;
  from: number;
  count: number;
  head: RunHead | null;
  ended: boolean;
}

/** A test result appended (or refused), like ingest: 409 carries the tests head. */
export type TestVerdict =
  { ok: true; record: Record<string, unknown>; head: string; line: number } | { ok: false; status: 400 | 403 | 404 | 409 | 422; error: string; head?: string };

/** A write to someone else's run, refused: nothing about the run is said (no head). */
export type NotYours = { ok: false; status: 403; error: string };

export interface CollectorStore {
  readonly kind: "folder" | "postgresql";
  /** Creates / migrates what the store needs. */
  init(): Promise<void>;
  /**
   * Validates a batch against the stored run and stores it, atomically: nothing of a refused batch
   * is written. Batches of one run are serialised (across processes, for a shared store). The
   * first writer of a run owns it; anyone else but admin is refused (core/store/owners.ts).
   */
  appendBatch(runId: string, body: JsonValue, limits: IngestLimits, writer: Writer): Promise<IngestVerdict | NotYours>;
  /** Appends one test result to the run's tests.jsonl chain, recorded as written by `writer`. */
  appendTest(runId: string, body: JsonValue, writer: Writer): Promise<TestVerdict>;
  /** The run's owner and who wrote each test line, or null for an unknown run. */
  readWriters(runId: string): Promise<WritersRecord | null>;
  listRuns(filter: RunFilter): Promise<RunPage>;
  getRun(runId: string): Promise<RunRow | null>;
  /** Events with seq in [from, from+limit), or null for an unknown run. */
  readEvents(runId: string, from: number, limit: number): Promise<EventRange | null>;
  /** The refs of the blobs stored for a run. */
  listBlobs(runId: string): Promise<string[] | null>;
  /** The run's blobs with refs after `after`, in ref order, at most `limit` (a bulk read for pull). */
  readBlobPage(runId: string, after: string, limit: number): Promise<{ ref: string; body: Buffer }[] | null>;
  /** A blob file's bytes (`{"v": …}` as the reference writes it), or null. */
  readBlob(runId: string, ref: string): Promise<Buffer | null>;
  /** tests.jsonl's bytes ("" when none), or null for an unknown run. */
  readTests(runId: string): Promise<Buffer | null>;
  close(): Promise<void>;
}

export class StoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "StoreError";
  }
}

export const encodeCursor = (parts: unknown[]): string => Buffer.from(JSON.stringify(parts)).toString("base64url");
const CURSOR_TIME = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d(:?\d\d)?)?$/;
export function decodeCursor(c: string | undefined): unknown[] | undefined {
  if (!c) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    // what listRuns writes: [sort key, run id], a time (or "" for a run that names none) and a text without control characters
    // eslint-disable-next-line no-control-regex
    if (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "string" && !/[\u0000-\u001f]/.test(x)) && (v[0] === "" || CURSOR_TIME.test(v[0])))
      return v;
  } catch {
    /* refused below */
  }
  throw new StoreError(400, "bad cursor");
}
