/** What the reader and verify report about a damaged run. */

export type ProblemCode =
  | "not-json"
  | "cut-off"
  | "line-too-long"
  | "seq"
  | "chain"
  | "hash"
  | "malformed"
  | "schema"
  | "unknown-type"
  | "duplicate-id"
  | "bad-ref"
  | "missing-blob"
  | "blob-hash"
  | "blob-not-json"
  | "blob-too-large"
  | "no-run-end"
  | "empty"
  | "tests-chain"
  | "tests-hash"
  | "tests-not-json"
  | "tests-unchained"
  | "io"
  /** a line or blob nested deeper than the reader reads (see safefs.ts) */
  | "too-deep"
  | "blob-too-deep"
  /** a log without run.end that cannot be a run still being written (see running.ts) */
  | "truncated"
  /** an analysis failed on the run (see analysis/safe.ts) */
  | "analysis-failed";

export interface Problem {
  code: ProblemCode;
  severity: "error" | "warning";
  message: string;
  /** 1-based line in events.jsonl (or tests.jsonl for tests-* codes). */
  line?: number;
  seq?: number;
  ref?: string;
  file?: "events.jsonl" | "tests.jsonl" | "blobs";
}

const WARNINGS: ReadonlySet<ProblemCode> = new Set(["unknown-type", "no-run-end", "tests-unchained", "blob-too-large", "blob-too-deep"]);

export function problem(code: ProblemCode, message: string, at: Partial<Problem> = {}): Problem {
  return { code, severity: WARNINGS.has(code) ? "warning" : "error", message, ...at };
}
