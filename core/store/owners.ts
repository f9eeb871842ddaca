/**
 * Runs belong to their writer. The principal that creates a run on a collector (the first batch
 * stored) owns it; only the owner, a token with the `admin` scope, or the collector's own job
 * system acting for a submitter may append events or test results to it. Everyone else is refused
 * with 403 and learns nothing of the run (no head, no position in its chain). Each appended test
 * line is recorded with the principal that wrote it (see core/log/writers.ts), so the case file and
 * the investigator can mark tests written by anyone but the run's writer.
 *
 * The stores (core/store/folder.ts, core/store/postgres.ts) take a {@link Writer} on every write
 * and decide with {@link mayWrite} inside their lock or transaction.
 */
import type { JsonValue } from "../log/pyjson";
import { LOCAL_WRITER, isPrincipalId } from "../log/writers";
import type { CollectorStore, TestVerdict, Writer } from "./types";

/** The principal a write is recorded under. */
export function writerId(w: Writer): string {
  return w.via === "token" ? w.principal : w.actingFor;
}

/**
 * Whether `w` may append to a run owned by `owner` (undefined: the run does not exist yet, the
 * writer will own it; null: a run stored before owners were recorded, which only admin or the
 * job system may extend).
 */
export function mayWrite(owner: string | null | undefined, w: Writer): boolean {
  if (owner === undefined) return true;
  if (w.via === "job" || w.admin) return true;
  return owner !== null && owner === w.principal;
}

/** The refusal of a write to someone else's run: the same words whatever the run holds. */
export const NOT_YOURS = {
  ok: false as const,
  status: 403 as const,
  error: "this run belongs to another writer: only its writer or an admin token may append to it",
};

/**
 * The collector's job system appends a test result for the principal that submitted the job (the
 * extension point of the durable-workers issue; nothing calls it from HTTP).
 */
export function appendTestFor(store: CollectorStore, runId: string, body: JsonValue, actingFor: string): Promise<TestVerdict> {
  // `local` is this machine's name for itself, never a submitter's
  if (!isPrincipalId(actingFor) || actingFor === LOCAL_WRITER)
    throw new Error(`a job appends for a principal, not ${JSON.stringify(String(actingFor).slice(0, 80))}`);
  return store.appendTest(runId, body, { via: "job", actingFor });
}
