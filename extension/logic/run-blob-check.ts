/**
 * Each blob a run's events name is checked once in the background (exists, is a regular file in
 * the run, hashes to its name), a time slice at a time, so a forged or missing blob makes the run
 * "failed verify" in the tree, Problems and the status bar without a Verify by hand. Files no event
 * names are left to Verify. vscode-free.
 */
import { BlobStore } from "../../core/log/blobs";
import { refsOf, type LoadedEvent } from "../../core/log/events";
import { isRef } from "../../core/log/hash";
import { problem, type Problem } from "../../core/log/problems";

/** Where a run's background blob check is. */
export interface BlobCheck {
  /** Events scanned for refs. */
  scanned: number;
  /** Refs to check, with the first event naming each. */
  todo: { ref: string; line: number; seq: number }[];
  /** Checked refs: the problem found, or null. */
  done: Map<string, Problem | null>;
}

/** Blobs still to check: none checked yet, some queued, or events read since the last scan. */
export function blobsPending(check: BlobCheck | undefined, eventsRead: number | undefined): boolean {
  return !check || check.todo.length > 0 || (eventsRead !== undefined && check.scanned < eventsRead);
}

/** Problems the background blob check found so far, in line order. */
export function blobProblems(check: BlobCheck | undefined): Problem[] {
  const out: Problem[] = [];
  for (const p of check?.done.values() ?? []) if (p) out.push(p);
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/**
 * Checks the blobs named by events not yet scanned, for at most `sliceMs`; returns the check (a new
 * one when there was none, or the events were read again from fewer).
 */
export function checkBlobsStep(check: BlobCheck | undefined, events: readonly LoadedEvent[], store: BlobStore, sliceMs: number): BlobCheck {
  let b = check;
  if (!b || (events.length && events.length < b.scanned)) b = { scanned: 0, todo: [], done: new Map() };
  for (; b.scanned < events.length; b.scanned++) {
    const ev = events[b.scanned];
    for (const r of refsOf(ev)) {
      if (isRef(r) && !b.done.has(r)) {
        b.done.set(r, null);
        b.todo.push({ ref: r, line: ev.line, seq: ev.seq });
      }
    }
  }
  const t0 = performance.now();
  while (b.todo.length && performance.now() - t0 < sliceMs) {
    const { ref, line, seq } = b.todo.pop()!;
    const r = store.get(ref);
    if (r.ok || r.code === "blob-too-large" || r.code === "blob-too-deep") continue; // large or deep ones: Verify re-hashes them
    const at = { line, seq, ref, file: "blobs" as const };
    b.done.set(
      ref,
      r.code === "missing-blob"
        ? problem("missing-blob", `blob ${ref.slice(7, 19)}… named by line ${line} (seq ${seq}) is missing`, at)
        : problem(r.code, `${r.message} (named by line ${line}, seq ${seq})`, at),
    );
  }
  return b;
}
