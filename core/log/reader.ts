/**
 * Reading runs. The reader never throws on a bad run: a cut-off last line, a line that isn't
 * JSON, an edited or re-ordered event, a missing, forged or non-JSON blob and an unknown event
 * type are each reported as a {@link Problem} with its line and seq, and every intact event stays
 * readable. Lines are parsed and chain-checked incrementally, so a run that is still being written
 * is read by pushing only its new bytes (see tail.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { BlobStore } from "./blobs";
import { SCHEMAS, KNOWN_TYPES, fieldProblems, type LoadedEvent } from "./events";
import { HASH_KEY, ZERO_HASH, canonicalDigest, isHex64, sha256Hex, slowCanonical } from "./hash";
import { parseJsonObject } from "./pyjson";
import { startParallelBlobCheck } from "./parallel-blobs";
import { problem, type Problem, type ProblemCode } from "./problems";
import { readTestsLog, type TestRecord } from "./testslog";
import { readWriters, runWriter } from "./writers";
import { MAX_JSON_DEPTH, jsonTooDeep, openRunFile, readLimits, type ReadLimits } from "./safefs";
import { runningRule } from "./running";
import { sanitizeEvent } from "./sanitize";
import { checkBlobs } from "./blob-check";

/** Longest line read; longer ones are reported and skipped, never held. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Parses events.jsonl bytes as they arrive. Checks, per line: JSON, seq = line position, prev_hash =
 * the previous event's hash, the event's own hash, its fields, a known type and a new id.
 */
export class EventLogParser {
  readonly events: LoadedEvent[] = [];
  readonly problems: Problem[] = [];
  /** Bytes consumed up to the end of the last complete line. */
  offset = 0;
  private lineNo = 0;
  private prevHash: string | null = ZERO_HASH;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false;
  private ids = new Set<string>();
  private counts = new Map<ProblemCode, number>();
  private lastSeq: number | undefined;

  constructor(readonly opts: { maxLineBytes?: number; maxPerCode?: number } = {}) {}

  /** Feeds new bytes; returns the events completed by them. */
  push(chunk: Buffer): LoadedEvent[] {
    const before = this.events.length;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      let line: Buffer;
      if (this.pendingBytes > 0) {
        this.pending.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.pending);
        this.pending = [];
        this.pendingBytes = 0;
      } else line = chunk.subarray(start, nl);
      const len = line.length + 1;
      if (this.skipping) {
        this.skipping = false;
        this.lineNo++;
        this.offset += len;
      } else {
        this.lineNo++;
        this.offset += len;
        this.line(line);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (!this.skipping) {
        this.pendingBytes += rest.length;
        if (this.pendingBytes > (this.opts.maxLineBytes ?? MAX_LINE_BYTES)) {
          this.add(
            problem("line-too-long", `line ${this.lineNo + 1} is longer than ${(this.opts.maxLineBytes ?? MAX_LINE_BYTES) >> 20} MB; skipped`, {
              line: this.lineNo + 1,
              file: "events.jsonl",
            }),
          );
          this.pending = [];
          this.pendingBytes = 0;
          this.skipping = true;
        } else this.pending.push(Buffer.from(rest)); // copy: the caller may reuse its chunk buffer
      }
    }
    return this.events.slice(before);
  }

  /** True while a partial line is waiting for its newline. */
  get hasPartialLine(): boolean {
    return this.pendingBytes > 0;
  }

  /**
   * The file is complete: a final line without a newline is parsed if it is whole, else reported
   * as cut off. Call once, at the end of a full read.
   */
  end(): void {
    if (this.pendingBytes === 0) return;
    const line = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.lineNo++;
    if (parseJsonObject(line.toString("utf8")) === undefined) {
      this.add(
        problem("cut-off", `line ${this.lineNo} is cut off (${line.length} bytes, no newline, not complete JSON): the run was interrupted while writing`, {
          line: this.lineNo,
          file: "events.jsonl",
        }),
      );
      return;
    }
    this.offset += line.length;
    this.line(line);
  }

  private add(p: Problem): void {
    const n = (this.counts.get(p.code) ?? 0) + 1;
    this.counts.set(p.code, n);
    const cap = this.opts.maxPerCode ?? 50;
    if (n <= cap) this.problems.push(p);
    else if (n === cap + 1) this.problems.push({ ...p, message: `more "${p.code}" problems after this one are not listed` });
  }

  /** How many problems of each code were found (including those not listed). */
  problemCounts(): Map<ProblemCode, number> {
    return new Map(this.counts);
  }

  private line(buf: Buffer): void {
    const lineNo = this.lineNo;
    // tolerate CRLF and blank lines
    let end = buf.length;
    if (end > 0 && buf[end - 1] === 0x0d) end--;
    if (end === 0) {
      this.add(problem("not-json", `line ${lineNo} is empty`, { line: lineNo, file: "events.jsonl" }));
      this.prevHash = null;
      return;
    }
    if (jsonTooDeep(buf, MAX_JSON_DEPTH, 0, end)) {
      this.add(problem("too-deep", `line ${lineNo} nests values deeper than ${MAX_JSON_DEPTH} levels; not read`, { line: lineNo, file: "events.jsonl" }));
      this.prevHash = null;
      return;
    }
    const text = buf.toString("utf8", 0, end);
    const e = parseJsonObject(text);
    if (e === undefined) {
      this.add(problem("not-json", `line ${lineNo} is not a JSON object`, { line: lineNo, file: "events.jsonl" }));
      this.prevHash = null; // the chain can't be followed across this line
      return;
    }
    const seq = typeof e.seq === "number" ? e.seq : undefined;
    const at = { line: lineNo, seq, file: "events.jsonl" as const };
    if (!SCHEMAS.has(e.schema as string)) {
      this.add(problem("schema", `line ${lineNo}: unknown schema ${JSON.stringify(e.schema)?.slice(0, 80)}`, at));
    }
    if (seq !== lineNo - 1) {
      this.add(
        problem("seq", `line ${lineNo}: seq is ${JSON.stringify(e.seq)?.slice(0, 40)}, expected ${lineNo - 1} (an event was removed, inserted or moved)`, at),
      );
    }
    if (this.prevHash !== null && e.prev_hash !== this.prevHash) {
      this.add(
        problem(
          "chain",
          `line ${lineNo}${seq !== undefined ? ` (seq ${seq})` : ""}: prev_hash does not match the previous event's hash (the chain is broken here)`,
          at,
        ),
      );
    }
    const recorded = e.hash;
    if (!isHex64(recorded)) {
      this.add(problem("malformed", `line ${lineNo}: no valid hash`, at));
    } else {
      // Fast path: JSON.stringify of the parsed event (without its hash) is the canonical form for
      // lines with sorted keys and no float written in Python's own forms (89.0, 1e-05); others
      // take the byte-exact path, then a lossless re-serialisation.
      let full = "";
      try {
        full = JSON.stringify(e);
      } catch {
        /* the exact paths below decide */
      }
      const member = '"hash":"' + recorded + '"';
      const pos = full.indexOf(member);
      let ok = false;
      if (pos > 0) {
        // hash it without the member and one adjacent comma (a wrong match can only fail the comparison)
        const h = createHash("sha256");
        if (full.charCodeAt(pos - 1) === 0x2c) h.update(full.slice(0, pos - 1)).update(full.slice(pos + member.length));
        else h.update(full.slice(0, pos)).update(full.slice(pos + member.length + 1));
        ok = h.digest("hex") === recorded;
      }
      if (!ok) ok = canonicalDigest(buf, 0, end, HASH_KEY) === recorded;
      if (!ok) {
        try {
          ok = sha256Hex(slowCanonical(text, "hash")) === recorded;
        } catch {
          ok = false;
        }
      }
      if (!ok)
        this.add(
          problem("hash", `line ${lineNo}${seq !== undefined ? ` (seq ${seq})` : ""}: the event does not match its hash (edited after it was written)`, at),
        );
    }
    const fp = fieldProblems(e);
    for (const msg of fp) this.add(problem("malformed", `line ${lineNo}: ${msg}`, at));
    if (typeof e.type === "string" && !KNOWN_TYPES.has(e.type)) {
      this.add(problem("unknown-type", `line ${lineNo}: unknown event type "${e.type.slice(0, 60)}" (kept, not analysed)`, at));
    }
    if (typeof e.id === "string") {
      if (this.ids.has(e.id)) this.add(problem("duplicate-id", `line ${lineNo}: event id ${e.id.slice(0, 12)}… appears twice`, at));
      this.ids.add(e.id);
    }
    this.prevHash = isHex64(recorded) ? recorded : null;
    this.lastSeq = seq;
    // the analyses read a view whose fields have their types (see sanitize.ts)
    const { event, changed } = sanitizeEvent(e, lineNo);
    const told = fp.join(" ");
    const unreported = changed.filter((k) => k !== "seq" && !told.includes(`"${k}"`) && !(k === "context" && told.includes("context[")));
    if (unreported.length)
      this.add(
        problem(
          "malformed",
          `line ${lineNo}: field${unreported.length === 1 ? "" : "s"} ${unreported.map((k) => `"${k}"`).join(", ")} of the wrong type (read as text or left out)`,
          at,
        ),
      );
    event.line = lineNo;
    this.events.push(event as unknown as LoadedEvent);
  }

  get head(): { seq: number | undefined; hash: string | null } {
    return { seq: this.lastSeq, hash: this.prevHash };
  }
}

export interface RunData {
  dir: string;
  runId: string;
  events: LoadedEvent[];
  problems: Problem[];
  tests: TestRecord[];
  /** Who wrote the run (core/log/writers.ts): a collector's principal, `local`, or null when not recorded. */
  writer?: string | null;
  blobs: BlobStore;
  /** The run has its run.end event. */
  complete: boolean;
  /** Bytes of events.jsonl read. */
  bytes: number;
}

export interface ReadOptions {
  /** Check every blob's hash and that every ref exists (verify). Default false: blobs load lazily. */
  checkBlobs?: boolean;
  /** Check blob hashes on a second thread from this many blob files (default 4000). */
  parallelMin?: number;
  maxBlobBytes?: number;
  /** Size limits on the run's files (defaults: {@link readLimits}). */
  limits?: Partial<ReadLimits>;
  /** A run without run.end whose events.jsonl has not changed for this long was cut short (ms; see running.ts). */
  staleMs?: number;
}

/**
 * Reads events.jsonl in chunks into a parser: only a regular file (see safefs.ts), at most
 * `maxBytes` bytes of it (default: {@link readLimits}); `error` says why it was not read (whole).
 */
export function readEventsFile(
  file: string,
  parser = new EventLogParser(),
  from = 0,
  opts: { runDir?: string; maxBytes?: number } = {},
): { parser: EventLogParser; bytes: number; error?: string; truncated?: boolean } {
  const o = openRunFile(file, opts.runDir ?? path.dirname(file));
  if (!o.ok) return { parser, bytes: 0, error: o.reason };
  const max = opts.maxBytes ?? readLimits().maxEventsBytes;
  let pos = from;
  let truncated = false;
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const room = max - pos;
      if (room <= 0) {
        truncated = true;
        break;
      }
      let n: number;
      try {
        n = fs.readSync(o.fd, chunk, 0, Math.min(chunk.length, room), pos);
      } catch (err) {
        return { parser, bytes: pos - from, error: (err as Error).message };
      }
      if (n <= 0) break;
      pos += n;
      parser.push(chunk.subarray(0, n));
    }
  } finally {
    fs.closeSync(o.fd);
  }
  if (truncated)
    return {
      parser,
      bytes: pos - from,
      truncated,
      error: `it is larger than the ${(max / 1048576).toFixed(0)} MB limit; only the first ${(max / 1048576).toFixed(0)} MB were read`,
    };
  return { parser, bytes: pos - from };
}

/** Reads one run folder. Never throws for a damaged run; problems are in the result. */
export function readRun(dir: string, opts: ReadOptions = {}): RunData {
  const limits = readLimits(opts.limits);
  const blobs = new BlobStore(dir, opts.maxBlobBytes ?? limits.maxBlobBytes);
  // a large run's blob hashes start on a second core now, while this one reads the events
  const parallel = opts.checkBlobs ? startParallelBlobCheck(dir, blobs.maxBytes, opts.parallelMin) : undefined;
  const file = path.join(dir, "events.jsonl");
  const { parser, bytes, error } = readEventsFile(file, undefined, 0, { runDir: dir, maxBytes: limits.maxEventsBytes });
  parser.end();
  const problems = [...parser.problems];
  if (error) problems.push(problem("io", `cannot read events.jsonl: ${error}`, { file: "events.jsonl" }));
  const events = parser.events;
  if (!error && events.length === 0 && !problems.length) problems.push(problem("empty", "events.jsonl holds no events", { file: "events.jsonl" }));
  const complete = events.some((e) => e.type === "run.end");
  const tests = readTestsLog(dir, limits.maxTestsBytes);
  if (events.length && !complete) problems.push(runningRule(dir, events, tests.records.length, opts));
  if (opts.checkBlobs) problems.push(...checkBlobs(dir, events, blobs, parallel));
  problems.push(...tests.problems);
  const first = events.find((e) => typeof e.run_id === "string");
  return {
    dir,
    runId: first?.run_id ?? path.basename(dir),
    events,
    problems,
    tests: tests.records,
    writer: runWriter(readWriters(dir)),
    blobs,
    complete,
    bytes,
  };
}

/**
 * A RunData over what an incremental parser (a {@link RunTail}'s) has read so far, with the same
 * problems readRun reports except the cut-off check of a final partial line (a run being written
 * has one between two writes). The event list is a copy: later polls do not change it.
 */
export function runDataFromParser(dir: string, parser: EventLogParser, blobs = new BlobStore(dir)): RunData {
  const events = parser.events.slice();
  const problems = [...parser.problems];
  if (events.length === 0 && !problems.length) problems.push(problem("empty", "events.jsonl holds no events", { file: "events.jsonl" }));
  const complete = events.some((e) => e.type === "run.end");
  const tests = readTestsLog(dir);
  // a partial last line may name blobs already written: the orphan check waits for it
  if (events.length && !complete) problems.push(runningRule(dir, events, tests.records.length, { orphans: !parser.hasPartialLine }));
  problems.push(...tests.problems);
  const first = events.find((e) => typeof e.run_id === "string");
  return {
    dir,
    runId: first?.run_id ?? path.basename(dir),
    events,
    problems,
    tests: tests.records,
    writer: runWriter(readWriters(dir)),
    blobs,
    complete,
    bytes: parser.offset,
  };
}
