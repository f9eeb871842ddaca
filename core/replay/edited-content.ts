/**
 * The content a test's edits (redact:, replace:, span:) produced: what the recorded run's model
 * calls saw, and saving a test record with its edited content stored as blobs of the run.
 */
import { parseLossless } from "../log/pyjson";
import { appendTest } from "../log/testslog";
import { recordChanges } from "../specs/apply";
import type { RunModel } from "../graph/model";
import type { ReplayContext } from "./context";

/** Every distinct content item the recorded run's model calls saw, with its value (for recordChanges). */
export function recordedItems(m: RunModel): { kind: string; source: string; trust: string; ref: string; value: unknown; fromEvent: string | null }[] {
  const out = new Map<string, { kind: string; source: string; trust: string; ref: string; value: unknown; fromEvent: string | null }>();
  for (const d of m.decisions) {
    for (const c of d.context ?? []) {
      const k = `${c.kind}\u0000${c.source}\u0000${c.ref}`;
      if (out.has(k)) continue;
      const canon = m.canonical(c.ref);
      out.set(k, {
        kind: String(c.kind),
        source: String(c.source),
        trust: String(c.trust),
        ref: String(c.ref),
        value: canon ? parseLossless(canon) : undefined,
        fromEvent: c.from_event ?? null,
      });
    }
  }
  return [...out.values()];
}

/** Appends a test result, storing the content its edits produced as blobs of the run first. */
export function appendTestWithContent(ctx: ReplayContext, rec: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(rec.changes) && rec.changes.length) {
    const specs = Array.isArray(rec.group) ? (rec.group as string[]) : [String(rec.intervention)];
    recordChanges(ctx.run.dir, specs, recordedItems(ctx.model));
  }
  return appendTest(ctx.run.dir, rec);
}
