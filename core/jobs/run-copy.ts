/**
 * A local copy of a stored run, for the processes of the job system that read runs from the
 * collector's PostgreSQL: a worker (to replay it) and the collector (to check a job against it at
 * submit). The copy is refreshed only when the run grew (its head), and copies of one run are
 * made one at a time per process, so two submissions never write the same folder at once.
 */
import fs from "node:fs";
import path from "node:path";
import type { CollectorStore } from "../store/types";

/** The run's events and blobs from the store into `root/<run_id>` (refreshed when the run grew). */
export async function materialize(store: CollectorStore, runId: string, root: string): Promise<string> {
  const row = await store.getRun(runId);
  if (!row) throw new Error(`no run ${runId} in the store`);
  const dir = path.join(root, runId);
  const stamp = path.join(root, `.${runId}.head`);
  const head = String(row.head?.seq ?? -1);
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === head) return dir;
  const tmp = fs.mkdtempSync(path.join(root, `.${runId}-`));
  fs.mkdirSync(path.join(tmp, "blobs"));
  const parts: Buffer[] = [];
  for (let from = 0; ;) {
    const r = await store.readEvents(runId, from, 10_000);
    if (!r || !r.count) break;
    parts.push(r.bytes);
    from += r.count;
  }
  fs.writeFileSync(path.join(tmp, "events.jsonl"), Buffer.concat(parts));
  for (let after = ""; ;) {
    const page = (await store.readBlobPage(runId, after, 1000)) ?? [];
    for (const b of page) if (/^sha256:[0-9a-f]{64}$/.test(b.ref)) fs.writeFileSync(path.join(tmp, "blobs", b.ref.slice(7) + ".json"), b.body);
    if (page.length < 1000) break;
    after = page[page.length - 1].ref;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  fs.writeFileSync(stamp, head);
  return dir;
}

/** Copies of stored runs under one folder of this process, one copy of a run at a time. */
export class RunCopies {
  private readonly busy = new Map<string, Promise<string>>();
  constructor(readonly root: string) {}

  /** The folder of a current copy of `runId` from `store` (the run id is checked by the job's spec). */
  dir(store: CollectorStore, runId: string): Promise<string> {
    const before = this.busy.get(runId) ?? Promise.resolve("");
    const next = before.catch(() => "").then(() => materialize(store, runId, this.root));
    this.busy.set(runId, next);
    const clear = () => {
      if (this.busy.get(runId) === next) this.busy.delete(runId);
    };
    next.then(clear, clear);
    return next;
  }

  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
