/**
 * verify: seq equals line position, each prev_hash links, each event hash recomputes, each blob
 * re-hashes to its name, every ref an event names exists, and tests.jsonl's chain holds.
 */
import fs from "node:fs";
import path from "node:path";
import { readRun, type RunData } from "./reader";
import type { Problem } from "./problems";

export interface VerifyResult {
  ok: boolean;
  events: number;
  problems: Problem[];
  /** The first problem that makes the run fail, for a one-line summary. */
  first?: Problem;
}

export function verifyRunData(run: RunData): VerifyResult {
  const errors = run.problems.filter((p) => p.severity === "error");
  return { ok: errors.length === 0, events: run.events.length, problems: run.problems, first: errors[0] };
}

/** Reads and checks one run folder (blobs included). */
export function verifyRun(dir: string, opts: { parallelMin?: number } = {}): VerifyResult {
  if (!fs.existsSync(path.join(dir, "events.jsonl"))) {
    return {
      ok: false,
      events: 0,
      problems: [{ code: "io", severity: "error", message: `${dir} holds no events.jsonl`, file: "events.jsonl" }],
    };
  }
  return verifyRunData(readRun(dir, { checkBlobs: true, parallelMin: opts.parallelMin }));
}
