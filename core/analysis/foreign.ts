/**
 * Tests written by anyone but the run's writer (core/log/writers.ts) are shown, marked, and never
 * counted: a tests.jsonl line is a claim of a result, not a recomputation, so the analyses (the
 * candidates' verdicts, the confirmed causes, the alerts, the case file's probable cause) read
 * only the tests of the run's writer and of this machine. Re-running a foreign test here writes a
 * local line, which counts.
 */
import type { RunData } from "../log/reader";
import type { TestRecord } from "../log/testslog";
import type { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";

/** The run as the analyses count it: without foreign tests. */
export function countedRun(run: RunData): RunData {
  return run.tests.some((t) => t.foreign) ? { ...run, tests: run.tests.filter((t) => !t.foreign) } : run;
}

/** The foreign tests of a run, by the id of each action their target matches. */
export function foreignByAction(m: RunModel, tests: readonly TestRecord[]): Map<string, TestRecord[]> {
  const out = new Map<string, TestRecord[]>();
  const hitCache = new Map<string, string[]>();
  for (const t of tests) {
    if (!t.foreign) continue;
    const target = typeof t.target === "string" ? t.target : "";
    let hits = hitCache.get(target);
    if (!hits) {
      hits = target ? targetHits(m, target).map((a) => a.id) : [];
      hitCache.set(target, hits);
    }
    for (const id of hits) out.set(id, [...(out.get(id) ?? []), t]);
  }
  return out;
}

/** "token:1a2b…", "local" or "an unrecorded writer", for a sentence. */
export function writerLabel(by: string | null | undefined): string {
  return by ? by : "an unrecorded writer";
}
