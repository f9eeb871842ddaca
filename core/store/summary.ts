/**
 * Helpers both stores share: the facts a batch adds to its run's row, the alert counts of a whole
 * run (the same analysis as a local run's), and the checks on a test result appended remotely.
 */
import { investigateLite } from "../analysis/investigate";
import { BlobStore, decodeBlob, type BlobResult } from "../log/blobs";
import { ZERO_HASH, eventHash, isHex64 } from "../log/hash";
import { dumps, parseLossless, type JsonValue } from "../log/pyjson";
import { EventLogParser, type RunData } from "../log/reader";
import { parseTestsLog } from "../log/testslog";
import { LOCAL_WRITER, type WritersRecord } from "../log/writers";
import type { Event } from "./ingest";
import type { TestVerdict } from "./types";
import { isJsonObject } from "../log/pyjson";

export interface BatchFacts {
  program?: string;
  started?: string;
  ended?: string;
  tools: string[];
  sources: string[];
}

/** What a batch of (validated) events tells the runs table. */
export function batchFacts(events: readonly Event[]): BatchFacts {
  const f: BatchFacts = { tools: [], sources: [] };
  const tools = new Set<string>();
  const sources = new Set<string>();
  for (const e of events) {
    if (e.type === "run.start") {
      f.program = typeof e.program === "string" ? e.program : "";
      f.started = String(e.ts);
    } else if (e.type === "run.end") f.ended = String(e.ts);
    else if (e.type === "action" && typeof e.tool === "string") tools.add(e.tool);
    else if (e.type === "input" && typeof e.source === "string") sources.add(e.source);
  }
  f.tools = [...tools];
  f.sources = [...sources];
  return f;
}

/** A BlobStore over blob file bytes held elsewhere (a database). */
class LookupBlobStore extends BlobStore {
  private readonly got = new Map<string, BlobResult>();
  constructor(private readonly lookup: (ref: string) => Buffer | undefined) {
    super("/nonexistent-causeway-store");
  }
  override get(ref: string): BlobResult {
    const hit = this.got.get(ref);
    if (hit) return hit;
    const buf = this.lookup(ref);
    const r: BlobResult = buf ? decodeBlob(ref, buf) : { ok: false, code: "missing-blob", message: `blob ${ref.slice(0, 19)}… is missing` };
    this.got.set(ref, r);
    return r;
  }
  override has(ref: string): boolean {
    return this.lookup(ref) !== undefined;
  }
}

/** The alert counts of a run given as events.jsonl bytes, its blobs and tests.jsonl bytes (tests by others than its writer not counted). */
export function alertCounts(
  runId: string,
  eventsBytes: Buffer,
  blob: (ref: string) => Buffer | undefined,
  testsBytes: Buffer,
  writers?: WritersRecord,
): { high: number; review: number; info: number } {
  const parser = new EventLogParser();
  parser.push(eventsBytes);
  parser.end();
  const tests = parseTestsLog(testsBytes, writers);
  const run: RunData = {
    dir: `store:${runId}`,
    runId,
    events: parser.events,
    problems: [...parser.problems, ...tests.problems],
    tests: tests.records,
    blobs: new LookupBlobStore(blob),
    complete: parser.events.some((e) => e.type === "run.end"),
    bytes: eventsBytes.length,
  };
  try {
    const { summary } = investigateLite(run);
    return { high: summary.alerts.high ?? 0, review: summary.alerts.review ?? 0, info: summary.alerts.info ?? 0 };
  } catch {
    return { high: 0, review: 0, info: 0 };
  }
}

const describeWriter = (x: unknown): string => (typeof x === "string" ? JSON.stringify(x.slice(0, 80)) : "a value that is not text");

/**
 * Checks a test result against the stored tests.jsonl and returns the line to append. The body is
 * a result object (chained here unless it carries `hash`), or `{"line": TEXT}`: one line of a
 * tests.jsonl, stored byte for byte (what push sends, so a pulled run is identical). A result that
 * carries `hash` must recompute (422) and link to the stored head (409 with the head); a line
 * without a chain is taken only before any chained line (the reference writes none). A stored
 * chain that does not verify is never extended (409).
 *
 * `writer` is the principal appending: a result chained here is stored with `"writer": writer`;
 * a line sent whole may name its writer only as itself or `local` (pushed from the sender's
 * machine), else 422. The store records `writer` beside the line either way.
 */
export function checkTest(stored: Buffer, body: JsonValue, writer: string): TestVerdict & { text?: string; fileLine?: number } {
  let raw: string | undefined;
  let rec0: JsonValue | undefined = isJsonObject(body) && isJsonObject(body.record) ? body.record : body;
  if (isJsonObject(body) && typeof body.line === "string" && Object.keys(body).length === 1) {
    raw = body.line;
    if (/[\r\n]/.test(raw)) return { ok: false, status: 422, error: "a tests.jsonl line holds no line break" };
    try {
      rec0 = parseLossless(raw);
    } catch {
      return { ok: false, status: 422, error: "the line is not JSON" };
    }
  }
  if (!isJsonObject(rec0)) return { ok: false, status: 400, error: 'expected a test result object, {"record": {...}} or {"line": "..."}' };
  const log = parseTestsLog(stored);
  const broken = log.problems.find((p) => p.code === "tests-hash" || p.code === "tests-chain" || p.code === "tests-not-json");
  if (broken) return { ok: false, status: 409, error: `the stored tests.jsonl fails its check (${broken.message}); not appending to it`, head: log.head };
  const head = log.head || ZERO_HASH;
  const { line: _l, chained: _c, by: _b, foreign: _f, ...clean } = rec0 as Record<string, JsonValue>;
  const claimed = clean.writer;
  if (claimed !== undefined && claimed !== LOCAL_WRITER && claimed !== writer)
    return { ok: false, status: 422, error: `the test result names its writer as ${describeWriter(claimed)}, but it is sent by ${writer}` };
  let rec: Record<string, unknown>;
  if (clean.hash !== undefined) {
    if (!isHex64(clean.hash)) return { ok: false, status: 422, error: "hash must be 64 hex digits" };
    if (eventHash(clean) !== clean.hash) return { ok: false, status: 422, error: "the test result does not match its hash (edited)" };
    if (clean.prev_hash !== head)
      return {
        ok: false,
        status: 409,
        error: "prev_hash does not link to the stored tests chain (a test was removed, inserted or another was appended first)",
        head,
      };
    rec = clean;
  } else if (raw !== undefined) {
    if (log.records.some((r) => typeof r.hash === "string"))
      return { ok: false, status: 409, error: "a line without a chain link cannot follow chained lines", head };
    rec = clean;
  } else {
    const { prev_hash: _p, ...rest } = clean;
    rec = { ...rest, writer, prev_hash: head };
    rec.hash = eventHash(rec);
  }
  const prefix = stored.length && stored[stored.length - 1] !== 0x0a ? "\n" : "";
  const text = raw !== undefined ? raw : dumps(rec, "file");
  let fileLine = prefix ? 2 : 1; // the appended line's number in the file (blank lines counted, as the reader does)
  for (let i = stored.indexOf(0x0a); i >= 0; i = stored.indexOf(0x0a, i + 1)) fileLine++;
  return { ok: true, record: rec, head: typeof rec.hash === "string" ? rec.hash : head, line: log.records.length + 1, text: prefix + text + "\n", fileLine };
}
