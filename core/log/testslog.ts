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

export interface TestRecord {
  [k: string]: unknown;
  /** 1-based line in tests.jsonl. */
  line: number;
  /** The line carries a chain link that checked out. */
  chained: boolean;
}


export function readTestsLog(dir: string): { records: TestRecord[]; problems: Problem[]; head: string } {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(path.join(dir, "tests.jsonl"));
  } catch {
    return { records: [], problems: [], head: ZERO_HASH };
  }
  return parseTestsLog(buf);
}

/** Reads tests.jsonl's bytes (from a file or a store): the records, their problems, the chain's head. */
export function parseTestsLog(buf: Buffer): { records: TestRecord[]; problems: Problem[]; head: string } {
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
      const rec = parseJsonObject(text);
      if (!rec) {
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
        if (!linked) problems.push(problem("tests-chain", `tests.jsonl line ${lineNo}: prev_hash does not match the previous test (a test was removed, inserted or moved)`, at));
        records.push({ ...rec, line: lineNo, chained: ok && linked });
        head = rec.hash;
      } else {
        if (sawChained) problems.push(problem("tests-chain", `tests.jsonl line ${lineNo} has no chain link after chained lines (edited or inserted)`, at));
        else unchained++;
        records.push({ ...rec, line: lineNo, chained: false });
      }
    }
    start = end + 1;
  }
  if (unchained) {
    problems.push(problem("tests-unchained", `${unchained} test result${unchained === 1 ? "" : "s"} in tests.jsonl carr${unchained === 1 ? "ies" : "y"} no hash chain (written by a tool that does not chain tests)`, { file: "tests.jsonl" }));
  }
  return { records, problems, head };
}

/**
 * Appends one result, chained to the last chained line. Returns the line as written (with
 * prev_hash and hash). Refuses to extend a chain that does not verify.
 */
export function appendTest(dir: string, result: Record<string, unknown>): Record<string, unknown> {
  const { problems, head } = readTestsLog(dir);
  const broken = problems.find((p) => p.code === "tests-hash" || p.code === "tests-chain" || p.code === "tests-not-json");
  if (broken) throw new Error(`tests.jsonl fails its check (${broken.message}); not appending to it`);
  const { hash: _h, prev_hash: _p, line: _l, chained: _c, ...clean } = result;
  const rec: Record<string, unknown> = { ...clean, prev_hash: head || ZERO_HASH };
  rec.hash = eventHash(rec);
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
