/**
 * tests.jsonl: one replay-test result per line, hash-chained like the events (`prev_hash`, `hash`
 * over the canonical record without `hash`; the first chained line links to 64 zeros), so that
 * verify catches an edited, removed or re-ordered test. Lines the reference wrote carry no chain;
 * they are read and reported as unchained. The chain cannot show that the *last* lines were cut
 * away: that needs an anchor outside the file.
 */
import fs from "node:fs";
import path from "node:path";
import { HASH_KEY, ZERO_HASH, canonicalDigest, eventHash, isHex64, sha256Hex, slowCanonical } from "./hash";
import { dumps, parseJsonObject } from "./pyjson";
import { problem, type Problem } from "./problems";
import { sanitizeTest } from "./sanitize";
import { MAX_JSON_DEPTH, jsonTooDeep, readLimits, readRunFile } from "./safefs";
import { LOCAL_WRITER, isForeign, readWriters, testWriter, type WritersRecord } from "./writers";
import { Redactor } from "./redact";

export interface TestRecord {
  [k: string]: unknown;
  /** 1-based line in tests.jsonl. */
  line: number;
  /** The line carries a chain link that checked out. */
  chained: boolean;
  /** Who wrote the line (see writers.ts): the collector's record, else the line's `writer` field. */
  by?: string;
  /** Written by anyone but the run's writer (and not on this machine): shown, never counted. */
  foreign?: boolean;
}

/** Fields a reader computes on a test record: never taken from a line, never written back. */
export const COMPUTED_TEST_FIELDS = ["line", "chained", "by", "foreign"] as const;

/**
 * Reads tests.jsonl: only a regular file inside the run folder, of at most `maxBytes` (default
 * {@link readLimits}); anything else is a problem, never a hang.
 */
export function readTestsLog(dir: string, maxBytes = readLimits().maxTestsBytes): { records: TestRecord[]; problems: Problem[]; head: string } {
  const file = path.join(dir, "tests.jsonl");
  const records: TestRecord[] = [];
  const problems: Problem[] = [];
  const r = readRunFile(file, dir, maxBytes);
  if (!r.ok) {
    if (!r.missing) problems.push(problem("io", `cannot read tests.jsonl: ${r.reason}`, { file: "tests.jsonl" }));
    return { records, problems, head: r.missing ? ZERO_HASH : "" };
  }
  return parseTestsLog(r.buf, readWriters(dir));
}

/**
 * Reads tests.jsonl's bytes (from a file or a store): the records, their problems, the chain's
 * head. `writers` (the collector's record, see writers.ts) says who wrote each line.
 */
export function parseTestsLog(buf: Buffer, writers?: WritersRecord): { records: TestRecord[]; problems: Problem[]; head: string } {
  const records: TestRecord[] = [];
  const problems: Problem[] = [];
  let head = ZERO_HASH;
  let sawChained = false;
  let unchained = 0;
  let start = 0;
  let lineNo = 0;
  while (start < buf.length) {
    let end = buf.indexOf(0x0a, start);
    const last = end < 0;
    if (last) end = buf.length;
    lineNo++;
    let stop = end;
    if (stop > start && buf[stop - 1] === 0x0d) stop--;
    const at = { line: lineNo, file: "tests.jsonl" as const };
    if (stop > start) {
      const text = buf.toString("utf8", start, stop);
      const deep = jsonTooDeep(buf, MAX_JSON_DEPTH, start, stop);
      const rec = deep ? undefined : parseJsonObject(text);
      if (deep) {
        problems.push(problem("tests-not-json", `tests.jsonl line ${lineNo} nests values deeper than ${MAX_JSON_DEPTH} levels; not read`, at));
        head = "";
      } else if (!rec) {
        problems.push(problem(last ? "tests-not-json" : "tests-not-json", `tests.jsonl line ${lineNo} is ${last ? "cut off or " : ""}not a JSON object`, at));
        head = "";
      } else if (typeof rec.hash === "string") {
        sawChained = true;
        let ok = isHex64(rec.hash) && canonicalDigest(buf, start, stop, HASH_KEY) === rec.hash;
        if (!ok && isHex64(rec.hash)) {
          try {
            ok = sha256Hex(slowCanonical(text, "hash")) === rec.hash;
          } catch {
            ok = false;
          }
        }
        const linked = rec.prev_hash === head;
        if (!ok) problems.push(problem("tests-hash", `tests.jsonl line ${lineNo}: the test result does not match its hash (edited)`, at));
        if (!linked)
          problems.push(
            problem("tests-chain", `tests.jsonl line ${lineNo}: prev_hash does not match the previous test (a test was removed, inserted or moved)`, at),
          );
        records.push(readable(rec, lineNo, ok && linked, problems, writers));
        head = rec.hash;
      } else {
        if (sawChained) problems.push(problem("tests-chain", `tests.jsonl line ${lineNo} has no chain link after chained lines (edited or inserted)`, at));
        else unchained++;
        records.push(readable(rec, lineNo, false, problems, writers));
      }
    }
    start = end + 1;
  }
  if (unchained) {
    problems.push(
      problem(
        "tests-unchained",
        `${unchained} test result${unchained === 1 ? "" : "s"} in tests.jsonl carr${unchained === 1 ? "ies" : "y"} no hash chain (written by a tool that does not chain tests)`,
        { file: "tests.jsonl" },
      ),
    );
  }
  return { records, problems, head };
}

/** A record as the analyses read it: fields of the wrong type read as text (see sanitize.ts), reported. */
function readable(rec: Record<string, unknown>, line: number, chained: boolean, problems: Problem[], writers: WritersRecord | undefined): TestRecord {
  const { record, changed } = sanitizeTest(rec);
  if (changed.length)
    problems.push(
      problem(
        "tests-not-json",
        `tests.jsonl line ${line}: field${changed.length === 1 ? "" : "s"} ${changed.map((k) => `"${k}"`).join(", ")} of the wrong type (read as text or left out)`,
        { line, file: "tests.jsonl" },
      ),
    );
  const by = testWriter(rec, line, writers);
  return { ...record, line, chained, by, foreign: isForeign(by, writers) };
}

/** A result linked to `head` (the last chained line's hash, or "" for none): prev_hash and hash set anew. */
export function chainTest(result: Record<string, unknown>, head: string): Record<string, unknown> {
  const { hash: _h, prev_hash: _p, line: _l, chained: _c, by: _b, foreign: _f, ...clean } = result;
  const rec: Record<string, unknown> = { ...clean, prev_hash: head || ZERO_HASH };
  rec.hash = eventHash(rec);
  return rec;
}

/**
 * Appends one result, cleaned of credentials (see redact.ts), chained to the last chained line,
 * written by this machine (`writer`: `local`). Returns the line as written (with prev_hash and
 * hash). Refuses to extend a chain that does not verify.
 */
export function appendTest(dir: string, result: Record<string, unknown>): Record<string, unknown> {
  const { problems, head } = readTestsLog(dir);
  const broken = problems.find((p) => p.code === "tests-hash" || p.code === "tests-chain" || p.code === "tests-not-json" || p.code === "io");
  if (broken) throw new Error(`tests.jsonl fails its check (${broken.message}); not appending to it`);
  // a replay's results (a live tool's answer, an endpoint's error) are cleaned of credentials like the run itself
  const rec = chainTest(Redactor.fromEnv(process.env).value({ ...result, writer: LOCAL_WRITER }), head);
  const file = path.join(dir, "tests.jsonl");
  let prefix = "";
  try {
    const st = fs.statSync(file);
    if (st.size > 0) {
      const fd = fs.openSync(file, "r");
      const b = Buffer.alloc(1);
      fs.readSync(fd, b, 0, 1, st.size - 1);
      fs.closeSync(fd);
      if (b[0] !== 0x0a) prefix = "\n";
    }
  } catch {
    /* new file */
  }
  fs.appendFileSync(file, prefix + dumps(rec, "file") + "\n");
  return rec;
}
