/**
 * The content a job's edits produced (`replace:`, `redact:`, `span:`), stored as blobs of the run
 * on the collector before the test line that names it (`changes[].after`) is appended: the local
 * command writes the same blobs into the run folder (core/replay/edited-content.ts), so a pulled
 * copy of the collector's run opens the changed text as a local one does, and still verifies.
 */
import type { RunModel } from "../graph/model";
import { recordedItems } from "../replay/edited-content";
import { interveneOn } from "../specs/apply";
import { parseIntervention } from "../specs/grammar";
import type { PgStore } from "../store/postgres";

/** The values a test's edits gave the recorded run's items (what the local command stores). */
export function editedValues(m: RunModel, test: { changes?: unknown; group?: unknown; intervention?: unknown }): unknown[] {
  if (!Array.isArray(test.changes) || !test.changes.length) return [];
  const specs = Array.isArray(test.group) ? test.group.map(String) : [String(test.intervention)];
  const ivs = specs.map((s) => parseIntervention(s)).filter((iv) => iv.edit);
  const out: unknown[] = [];
  for (const it of recordedItems(m)) {
    const r = interveneOn(ivs, it);
    if (r && !r.remove) out.push(r.value);
  }
  return out;
}

/** Stores a finished test's edited content as blobs of the run (for the job system). */
export async function storeTestBlobs(
  store: PgStore,
  runId: string,
  m: RunModel,
  test: { changes?: unknown; group?: unknown; intervention?: unknown },
  actingFor: string,
): Promise<void> {
  const values = editedValues(m, test);
  if (!values.length) return;
  const r = await store.addBlobs(runId, values, { via: "job", actingFor });
  if (!r.ok) throw new Error(`storing the edited content of a test of ${runId}: ${r.error}`);
}
