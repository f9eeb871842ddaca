/**
 * Who wrote a run and each of its test results.
 *
 * A collector records the principal that created each run (its writer, the first to send it) and
 * the principal that appended each tests.jsonl line, in its own metadata: never inside
 * events.jsonl, whose bytes stay exactly what the writer sent. In a run folder that metadata is
 * the file `.causeway-writers.json` beside events.jsonl, `{"owner": P, "tests": [P1, P2, …]}`
 * (one entry per tests.jsonl line, null where nobody was recorded): the folder store keeps it up
 * to date and `pull` writes it from the collector, so the marks survive a pull.
 *
 * Each tests.jsonl line also carries its writer in an optional `writer` field (lines the
 * reference wrote have none and stay readable): `local` for a line written on this machine (the
 * CLI, the extension), a principal id for a line a collector chained itself. The collector's
 * record wins over the line's own field.
 *
 * A test is *foreign* when it was written by anyone but the run's writer and not on this machine;
 * the analyses do not count foreign tests (see core/report/case.ts): a test line is a claim of a
 * result, not a recomputation, so only the run's writer and you answer for the claims counted.
 */
import path from "node:path";
import { parseJsonObject } from "./pyjson";
import { readRunFile } from "./safefs";

/** The writer of a test result written on this machine (the CLI, the extension, the SDK). */
export const LOCAL_WRITER = "local";
/** The collector's metadata file in a run folder. */
export const WRITERS_FILE = ".causeway-writers.json";
const MAX_WRITERS_BYTES = 16 << 20;

export interface WritersRecord {
  /** The principal that created the run; null for a run stored before writers were recorded. */
  owner: string | null;
  /** The principal that appended each tests.jsonl line (index = line - 1), null when unknown. */
  tests: (string | null)[];
}

/** A principal id as stored: short printable text (anything else reads as unknown). */
const PRINCIPAL_RE = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,99}$/;
export const isPrincipalId = (x: unknown): x is string => typeof x === "string" && PRINCIPAL_RE.test(x);

/** Parses the writers file's text; undefined when it is not one. */
export function parseWriters(text: string): WritersRecord | undefined {
  const o = parseJsonObject(text);
  if (!o || !Array.isArray(o.tests) || !(o.owner === null || isPrincipalId(o.owner))) return undefined;
  return { owner: o.owner, tests: (o.tests as unknown[]).map((t) => (isPrincipalId(t) ? t : null)) };
}

/** The writers file's text. */
export function writersText(w: WritersRecord): string {
  return JSON.stringify({ owner: w.owner, tests: w.tests }) + "\n";
}

/** Reads a run folder's writers file (a regular file inside the folder); undefined when absent or unreadable. */
export function readWriters(dir: string): WritersRecord | undefined {
  const r = readRunFile(path.join(dir, WRITERS_FILE), dir, MAX_WRITERS_BYTES);
  return r.ok ? parseWriters(r.buf.toString("utf8")) : undefined;
}

/** Who wrote a test line: the collector's record, else the line's own `writer` field, else unknown. */
export function testWriter(rec: Record<string, unknown>, line: number, w: WritersRecord | undefined): string | undefined {
  const recorded = w?.tests[line - 1];
  if (recorded) return recorded;
  return isPrincipalId(rec.writer) ? rec.writer : undefined;
}

/**
 * Whether a test written by `by` is foreign to a run whose writer is `owner`: written by another
 * principal, or by nobody recorded in a run whose writer is recorded. Tests of this machine
 * (`local`) are never foreign; in a run with no writers record (a local run) an unattributed line
 * (the reference's, older ones) is the run's own.
 */
export function isForeign(by: string | undefined, w: WritersRecord | undefined): boolean {
  if (by === LOCAL_WRITER) return false;
  // a local run, or a stored run from before writers were recorded: only a named principal is someone else
  if (!w || w.owner === null) return by !== undefined;
  return by !== w.owner;
}

/** The run's writer as shown: the recorded principal, `local`, or null when not recorded. */
export function runWriter(w: WritersRecord | undefined): string | null {
  return w ? w.owner : LOCAL_WRITER;
}
