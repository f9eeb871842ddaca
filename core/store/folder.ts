/**
 * The run-folder store: ROOT/<run_id>/events.jsonl, blobs/, tests.jsonl, byte for byte as a local
 * writer writes them (today's collector; nothing changes for a single developer). Anything watching
 * ROOT (the extension, `causeway watch`) sees runs grow live. A run folder that ingest did not
 * create is never appended to. Batches of one run are serialised in this process: one folder has
 * one collector.
 */
import fs from "node:fs";
import path from "node:path";
import { blobFileText, isRef } from "../log/hash";
import type { JsonValue } from "../log/pyjson";
import { EventLogParser, readEventsFile, readRun } from "../log/reader";
import { eventLine } from "../log/writer";
import { investigateLite } from "../analysis/investigate";
import { RUN_ID_RE } from "./http";
import { validateBatch, type IngestLimits, type IngestVerdict, type StoredRun } from "./ingest";
import { WRITERS_FILE, readWriters, writersText, type WritersRecord } from "../log/writers";
import { NOT_YOURS, mayWrite, writerId } from "./owners";
import { batchFacts, checkTest } from "./summary";
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

/** Marks a run folder as created by ingest (only those are appended to). */
export const INGEST_MARKER = ".causeway-ingest";

interface RunState {
  dir: string;
  hashes: string[];
  ids: Set<string>;
  ended: boolean;
  /** The run's owner: undefined while the run does not exist, null for one stored before owners were recorded. */
  owner: string | null | undefined;
}

const MAX_CACHED_RUNS = 256;

export class FolderStore implements CollectorStore {
  readonly kind = "folder" as const;
  readonly root: string;
  private readonly states = new Map<string, RunState>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly rows = new Map<string, { key: string; row: RunRow }>();

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async init(): Promise<void> {
    fs.mkdirSync(this.root, { recursive: true });
  }

  /** The stored state of a run (read from disk the first time), or a StoreError. */
  private stateOf(runId: string): RunState {
    const have = this.states.get(runId);
    if (have) return have;
    const dir = path.join(this.root, runId);
    const file = path.join(dir, "events.jsonl");
    const st: RunState = { dir, hashes: [], ids: new Set(), ended: false, owner: undefined };
    if (fs.existsSync(dir)) {
      if (!fs.existsSync(path.join(dir, INGEST_MARKER)))
        throw new StoreError(409, `a run named ${runId} exists and was not created by ingest; it is never appended to`);
      st.owner = readWriters(dir)?.owner ?? null;
      const fileStat = fs.lstatSync(file, { throwIfNoEntry: false });
      if (fileStat && !fileStat.isFile())
        throw new StoreError(409, `the stored run ${runId} has an events.jsonl that is not a regular file; not appending to it`);
      if (fileStat) {
        let parser: EventLogParser;
        try {
          parser = readEventsFile(file, new EventLogParser()).parser;
        } catch (err) {
          throw new StoreError(409, `the stored run ${runId} cannot be read (${(err as Error)?.message ?? err}); not appending to it`);
        }
        const bad = parser.problems.find((p) => p.severity === "error");
        if (bad || parser.hasPartialLine)
          throw new StoreError(409, `the stored run ${runId} fails its check (${bad?.message ?? "a partial last line"}); not appending to it`);
        for (const e of parser.events) {
          st.hashes.push(String(e.hash));
          st.ids.add(String(e.id));
          if (e.type === "run.end") st.ended = true;
        }
      }
    }
    if (this.states.size >= MAX_CACHED_RUNS) this.states.delete(this.states.keys().next().value!);
    this.states.set(runId, st);
    return st;
  }

  private storedView(st: RunState): StoredRun {
    return {
      head: st.hashes.length ? { seq: st.hashes.length - 1, hash: st.hashes[st.hashes.length - 1] } : null,
      hashAt: (seq) => st.hashes[seq],
      hasId: (id) => st.ids.has(id),
      hasBlob: (ref) => isRef(ref) && fs.existsSync(path.join(st.dir, "blobs", ref.slice(7) + ".json")),
      ended: st.ended,
    };
  }

  /** Work on one run, one call after another. */
  private serial<T>(key: string, fn: () => T): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return next;
  }

  appendBatch(runId: string, body: JsonValue, limits: IngestLimits, writer: Writer): Promise<IngestVerdict | NotYours> {
    return this.serial(runId, () => {
      const st = this.stateOf(runId);
      // before the batch is looked at: someone else's run tells them nothing
      if (!mayWrite(st.owner, writer)) return NOT_YOURS;
      const v = validateBatch(body, this.storedView(st), limits);
      if (!v.ok) return v;
      fs.mkdirSync(path.join(st.dir, "blobs"), { recursive: true });
      const marker = path.join(st.dir, INGEST_MARKER);
      if (!fs.existsSync(marker)) fs.writeFileSync(marker, JSON.stringify({ created: new Date().toISOString() }) + "\n");
      if (st.owner === undefined) {
        writeWriters(st.dir, { owner: writerId(writer), tests: [] });
        st.owner = writerId(writer);
      }
      for (const [ref, value] of v.blobs) {
        const file = path.join(st.dir, "blobs", ref.slice(7) + ".json");
        if (fs.existsSync(file)) continue;
        const tmp = `${file}.tmp-${process.pid}`;
        fs.writeFileSync(tmp, blobFileText(value));
        fs.renameSync(tmp, file);
      }
      fs.appendFileSync(path.join(st.dir, "events.jsonl"), v.events.map((e) => eventLine(e)).join(""));
      for (const e of v.events) {
        st.hashes.push(e.hash as string);
        st.ids.add(e.id as string);
        if (e.type === "run.end") st.ended = true;
      }
      return v;
    });
  }

  private runDir(runId: string): string | null {
    if (!RUN_ID_RE.test(runId)) return null;
    const dir = path.join(this.root, runId);
    return fs.existsSync(path.join(dir, "events.jsonl")) ? dir : null;
  }

  appendTest(runId: string, body: JsonValue, writer: Writer): Promise<TestVerdict> {
    return this.serial(runId, (): TestVerdict => {
      const dir = this.runDir(runId);
      if (!dir) return { ok: false, status: 404, error: `no run ${runId}` };
      const writers = fs.existsSync(path.join(dir, INGEST_MARKER)) ? (readWriters(dir) ?? { owner: null, tests: [] }) : { owner: null, tests: [] };
      if (!mayWrite(writers.owner, writer)) return NOT_YOURS;
      const file = path.join(dir, "tests.jsonl");
      const stored = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
      const v = checkTest(stored, body, writerId(writer));
      if (!v.ok) return v;
      fs.appendFileSync(file, v.text!);
      // the line first: a crash between the two leaves it unattributed (shown as foreign), never misattributed
      const at = v.fileLine! - 1;
      const tests = writers.tests.slice(0, at);
      while (tests.length < at) tests.push(null);
      writeWriters(dir, { owner: writers.owner, tests: [...tests, writerId(writer)] });
      const { text: _t, fileLine: _n, ...rest } = v;
      return rest;
    });
  }

  async readWriters(runId: string): Promise<WritersRecord | null> {
    const dir = this.runDir(runId);
    if (!dir) return null;
    return readWriters(dir) ?? { owner: null, tests: [] };
  }

  /** A run folder's row, recomputed when its files change. */
  private rowOf(runId: string, dir: string): RunRow | null {
    let key: string;
    let mtime: Date;
    try {
      const st = fs.statSync(path.join(dir, "events.jsonl"));
      let t = 0;
      try {
        t = fs.statSync(path.join(dir, "tests.jsonl")).size;
      } catch {
        /* none */
      }
      key = `${st.size}:${st.mtimeMs}:${t}`;
      mtime = st.mtime;
    } catch {
      return null;
    }
    const have = this.rows.get(runId);
    if (have?.key === key) return have.row;
    const run = readRun(dir);
    const facts = batchFacts(run.events as never);
    let alerts = { high: 0, review: 0, info: 0 };
    try {
      const a = investigateLite(run).summary.alerts;
      alerts = { high: a.high ?? 0, review: a.review ?? 0, info: a.info ?? 0 };
    } catch {
      /* a damaged run lists without alerts */
    }
    const last = run.events[run.events.length - 1];
    const row: RunRow = {
      run_id: runId,
      program: facts.program ?? "",
      started: facts.started ?? "",
      ended: facts.ended ?? null,
      status: facts.ended ? "ended" : "running",
      events: run.events.length,
      head: last ? { seq: last.seq, hash: String(last.hash) } : null,
      alerts,
      tests: run.tests.length,
      tools: facts.tools,
      sources: facts.sources,
      updated: mtime.toISOString(),
      owner: readWriters(dir)?.owner ?? null,
    };
    this.rows.set(runId, { key, row });
    return row;
  }

  async listRuns(f: RunFilter): Promise<RunPage> {
    const limit = Math.min(Math.max(f.limit ?? 50, 1), 500);
    const after = decodeCursor(f.cursor) as [string, string] | undefined;
    const rows: RunRow[] = [];
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.root).filter((n) => RUN_ID_RE.test(n));
    } catch {
      /* empty */
    }
    for (const n of names) {
      const row = this.rowOf(n, path.join(this.root, n));
      if (row && matches(row, f)) rows.push(row);
    }
    rows.sort((a, b) => (a.started === b.started ? (a.run_id < b.run_id ? 1 : -1) : a.started < b.started ? 1 : -1));
    const start = after ? rows.findIndex((r) => r.started < after[0] || (r.started === after[0] && r.run_id < after[1])) : 0;
    const page = start < 0 ? [] : rows.slice(start, start + limit);
    const more = start >= 0 && start + limit < rows.length;
    const lastRow = page[page.length - 1];
    return { runs: page, next: more && lastRow ? encodeCursor([lastRow.started, lastRow.run_id]) : null };
  }

  async getRun(runId: string): Promise<RunRow | null> {
    const dir = this.runDir(runId);
    return dir ? this.rowOf(runId, dir) : null;
  }

  async readEvents(runId: string, from: number, limit: number): Promise<EventRange | null> {
    const dir = this.runDir(runId);
    if (!dir) return null;
    const buf = fs.readFileSync(path.join(dir, "events.jsonl"));
    // complete lines only (a writer may be between two writes)
    const parts: Buffer[] = [];
    let start = 0;
    let n = 0;
    let lastHash: string | null = null;
    let ended = false;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      if (n >= from && n < from + limit) parts.push(buf.subarray(start, nl + 1));
      start = nl + 1;
      n++;
    }
    const row = this.rowOf(runId, dir);
    lastHash = row?.head?.hash ?? null;
    ended = row?.status === "ended";
    return { bytes: Buffer.concat(parts), from, count: parts.length, head: lastHash === null ? null : { seq: n - 1, hash: lastHash }, ended };
  }

  async listBlobs(runId: string): Promise<string[] | null> {
    const dir = this.runDir(runId);
    if (!dir) return null;
    try {
      return fs
        .readdirSync(path.join(dir, "blobs"))
        .filter((f) => /^[0-9a-f]{64}\.json$/.test(f))
        .map((f) => "sha256:" + f.slice(0, 64))
        .sort();
    } catch {
      return [];
    }
  }

  async readBlobPage(runId: string, after: string, limit: number): Promise<{ ref: string; body: Buffer }[] | null> {
    const refs = await this.listBlobs(runId);
    if (!refs) return null;
    const out: { ref: string; body: Buffer }[] = [];
    for (const ref of refs) {
      if (ref <= after) continue;
      const body = await this.readBlob(runId, ref);
      if (body) out.push({ ref, body });
      if (out.length >= limit) break;
    }
    return out;
  }

  async readBlob(runId: string, ref: string): Promise<Buffer | null> {
    const dir = this.runDir(runId);
    if (!dir || !isRef(ref)) return null;
    try {
      return fs.readFileSync(path.join(dir, "blobs", ref.slice(7) + ".json"));
    } catch {
      return null;
    }
  }

  async readTests(runId: string): Promise<Buffer | null> {
    const dir = this.runDir(runId);
    if (!dir) return null;
    try {
      return fs.readFileSync(path.join(dir, "tests.jsonl"));
    } catch {
      return Buffer.alloc(0);
    }
  }

  async close(): Promise<void> {}
}

/** Replaces a run folder's writers file whole (a reader sees the old one or the new one). */
function writeWriters(dir: string, w: WritersRecord): void {
  const file = path.join(dir, WRITERS_FILE);
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, writersText(w));
  fs.renameSync(tmp, file);
}

/** Does a row pass a filter (the folder store filters in memory; PostgreSQL in SQL)? */
export function matches(r: RunRow, f: RunFilter): boolean {
  if (f.program && !r.program.toLowerCase().includes(f.program.toLowerCase())) return false;
  if (f.since && !(r.started && Date.parse(r.started) >= Date.parse(f.since))) return false;
  if (f.until && !(r.started && Date.parse(r.started) < Date.parse(f.until))) return false;
  if (f.highAlert && !(r.alerts.high > 0)) return false;
  if (f.status && r.status !== f.status) return false;
  if (f.source && !r.sources.includes(f.source)) return false;
  if (f.tool && !r.tools.includes(f.tool)) return false;
  return true;
}
