/**
 * The suspects Find the cause could not test, rebuilt from tests.jsonl: at rung 1 only the one
 * recorded call that made the action is re-sent, so a suspect none of whose blocks is in its
 * request is listed, with why, instead of being tested. attribute() writes that list on every line
 * of the attribution as `attribution_not_tested: {spec, reason}[]`; per target, the latest
 * attribution of the run's writer wins (as for chains.ts and the case file). The lines are
 * untrusted: entries that are not text pairs are dropped, each text is clipped, a bounded number
 * are kept (notTestedOf, tested.ts), and they are shown as text only.
 */
import type { TestRecord } from "../log/testslog";
import type { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { notTestedOf } from "./tested";
import type { NotTested } from "./types";

const SPEC_CHARS = 1000;
const ATTRIBUTION_CHARS = 64;
/** Distinct targets read (a forged file can name many). */
const TARGETS_MAX = 200;

const clip = (x: string, max: number) => (x.length > max ? `${x.slice(0, max)}…` : x);

/** What one attribution's lines say it could not test, with the line that says so. */
export function attributionNotTested(lines: readonly TestRecord[]): { items: { spec: string; reason: string }[]; line: number } | undefined {
  for (const t of lines) {
    const items = notTestedOf(t.attribution_not_tested);
    if (items) return { items, line: t.line };
  }
  return undefined;
}

const attributionOf = (t: TestRecord): string | undefined =>
  typeof t.attribution === "string" && t.attribution && !t.span_of && !t.shape_test ? t.attribution.slice(0, ATTRIBUTION_CHARS) : undefined;

/** Per action id: what the latest attribution of a target it matches could not test (counted lines only). */
export function recordedNotTested(m: RunModel, tests: readonly TestRecord[]): Map<string, NotTested> {
  const latest = new Map<string, string>();
  const linesOf = new Map<string, TestRecord[]>();
  for (const t of tests) {
    if (t.foreign || typeof t.target !== "string" || !t.target) continue;
    const id = attributionOf(t);
    if (!id) continue;
    if (!latest.has(t.target) && latest.size >= TARGETS_MAX) continue;
    latest.delete(t.target);
    latest.set(t.target, id);
    if (t.attribution_not_tested === undefined) continue;
    const key = `${t.target}\u0000${id}`;
    if (!linesOf.has(key)) linesOf.set(key, [t]); // every line of an attribution carries the same list
  }
  const out = new Map<string, NotTested>();
  for (const [target, id] of latest) {
    const found = attributionNotTested(linesOf.get(`${target}\u0000${id}`) ?? []);
    if (!found) continue;
    const nt: NotTested = { attribution: id, target: clip(target, SPEC_CHARS), items: found.items, line: found.line };
    for (const a of targetHits(m, target)) {
      const prev = out.get(a.id);
      if (!prev || prev.line < nt.line) out.set(a.id, nt);
    }
  }
  return out;
}
