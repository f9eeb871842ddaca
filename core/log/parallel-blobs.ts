/**
 * Checks the hashes of a large run's blobs on a second core while the first reads the events.
 *
 * A helper thread starts on the blob folder's listing as soon as verify begins and claims files one
 * by one from a shared counter; the calling thread, once it has parsed the events, claims from the
 * same counter until none is left. The helper only proves hashes, on the fast path (JSON.parse +
 * JSON.stringify + sha256); anything it cannot prove (a float written in Python's own form, a file
 * that is not JSON, too large, forged) is marked unsure and re-checked exactly by the caller, so
 * the verdicts are the same as a sequential check's. Verified blobs are then loaded without
 * re-hashing when analysis needs their values.
 */
import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";

/** Below this many blob files a helper thread costs more than it saves. */
export const PARALLEL_MIN_BLOBS = 4000;

/** What became of each file: unclaimed, hash proven by the helper, unsure (to re-check exactly), or claimed by the caller. */
export const BlobStatus = { Unclaimed: 0, Verified: 1, Unsure: 2, Mine: 3 } as const;
export type BlobStatus = (typeof BlobStatus)[keyof typeof BlobStatus];

const HELPER = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { dir, names, maxBytes, shared } = workerData;
const next = new Int32Array(shared, 0, 2);
const status = new Uint8Array(shared, 8, names.length);
const sha = crypto.hash ? (s) => crypto.hash("sha256", s, "hex") : (s) => crypto.createHash("sha256").update(s).digest("hex");
for (;;) {
  const i = Atomics.add(next, 0, 1);
  if (i >= names.length) break;
  const name = names[i];
  let ok = false;
  try {
    const file = path.join(dir, name);
    if (fs.statSync(file).size <= maxBytes) {
      const v = JSON.parse(fs.readFileSync(file, "utf8"));
      ok = v !== null && typeof v === "object" && !Array.isArray(v) && "v" in v && sha('{"v":' + JSON.stringify(v.v) + "}") + ".json" === name;
    }
  } catch {}
  Atomics.store(status, i, ok ? 1 : 2);
}
Atomics.store(next, 1, 1);
Atomics.notify(next, 1);
`;

export interface ParallelCheck {
  names: string[];
  /** Claims the next unclaimed file for the calling thread, or -1 when none is left. */
  claim(): number;
  /** Waits (blocking) until the helper has finished its last file. */
  wait(): void;
  status(i: number): BlobStatus;
  mark(i: number, s: BlobStatus): void;
}

/** Starts the helper on a run's blob folder, or returns undefined when it is not worth it. */
export function startParallelBlobCheck(dir: string, maxBytes: number, min = PARALLEL_MIN_BLOBS): ParallelCheck | undefined {
  let names: string[];
  const blobDir = path.join(dir, "blobs");
  try {
    names = fs.readdirSync(blobDir).filter((n) => n.length === 69 && n.endsWith(".json"));
  } catch {
    return undefined;
  }
  if (names.length < min) return undefined;
  const shared = new SharedArrayBuffer(8 + names.length);
  const next = new Int32Array(shared, 0, 2);
  const status = new Uint8Array(shared, 8, names.length);
  let worker: Worker;
  try {
    worker = new Worker(HELPER, { eval: true, workerData: { dir: blobDir, names, maxBytes, shared } });
  } catch {
    return undefined;
  }
  worker.unref();
  let exited = false;
  worker.once("exit", () => (exited = true));
  worker.once("error", () => {
    // the helper died: whatever it claimed and did not finish is re-checked by the caller
    for (let i = 0; i < names.length; i++) if (Atomics.load(status, i) === BlobStatus.Unclaimed) Atomics.store(status, i, BlobStatus.Unsure);
    Atomics.store(next, 1, 1);
  });
  return {
    names,
    claim() {
      const i = Atomics.add(next, 0, 1);
      if (i >= names.length) return -1;
      Atomics.store(status, i, BlobStatus.Mine);
      return i;
    },
    wait() {
      // bounded waits, so a helper that could not even start (or died) never hangs the caller
      for (let k = 0; k < 600 && Atomics.load(next, 1) === 0; k++) {
        Atomics.wait(next, 1, 0, 100);
        if (exited && Atomics.load(next, 1) === 0) break;
      }
      for (let i = 0; i < names.length; i++) if (Atomics.load(status, i) === BlobStatus.Unclaimed) Atomics.store(status, i, BlobStatus.Unsure);
    },
    status: (i) => Atomics.load(status, i) as BlobStatus,
    mark: (i, s) => void Atomics.store(status, i, s),
  };
}
