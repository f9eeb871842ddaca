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
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";

/** Below this many blob files a helper thread costs more than it saves. */
export const PARALLEL_MIN_BLOBS = 4000;

/** What became of each file: unclaimed, hash proven by the helper, unsure (to re-check exactly), or claimed by the caller. */
export const BlobStatus = { Unclaimed: 0, Verified: 1, Unsure: 2, Mine: 3 } as const;
export type BlobStatus = (typeof BlobStatus)[keyof typeof BlobStatus];

/** Bytes of proven blobs the helper keeps for the caller, at most (beyond it, blobs are read again). */
const ARENA_MAX = 512 * 1024 * 1024;
const CHUNK = 32 * 1024 * 1024;

const HELPER = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { dir, names, maxBytes, shared, table: tableBuf, port, arenaMax, chunkSize } = workerData;
const next = new Int32Array(shared, 0, 2);
const status = new Uint8Array(shared, 8, names.length);
const table = new Int32Array(tableBuf);
const sha = crypto.hash ? (s) => crypto.hash("sha256", s, "hex") : (s) => crypto.createHash("sha256").update(s).digest("hex");
let chunk = null, chunkId = -1, off = 0, kept = 0;
for (;;) {
  const i = Atomics.add(next, 0, 1);
  if (i >= names.length) break;
  const name = names[i];
  let ok = false;
  try {
    const file = path.join(dir, name);
    // regular files only, opened without following links or blocking (a FIFO, a link to
    // /dev/zero: left Unsure, for the caller's checked path to report)
    const lst = fs.lstatSync(file);
    if (lst.isFile() && lst.size <= maxBytes) {
      const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK || 0) | (fs.constants.O_NOFOLLOW || 0));
      let buf;
      try {
        const st = fs.fstatSync(fd);
        if (!st.isFile() || st.ino !== lst.ino || st.size > maxBytes) throw new Error("changed");
        buf = Buffer.allocUnsafe(st.size);
        let n = 0;
        while (n < buf.length) { const k = fs.readSync(fd, buf, n, buf.length - n, n); if (k <= 0) break; n += k; }
        buf = buf.subarray(0, n);
      } finally { fs.closeSync(fd); }
      const v = JSON.parse(buf.toString("utf8"));
      ok = v !== null && typeof v === "object" && !Array.isArray(v) && "v" in v && sha('{"v":' + JSON.stringify(v.v) + "}") + ".json" === name;
      // keep the bytes of a proven blob where the caller can read them without a second read
      if (ok && buf.length <= chunkSize && kept + buf.length <= arenaMax) {
        if (!chunk || off + buf.length > chunkSize) {
          chunk = new SharedArrayBuffer(chunkSize);
          chunkId++;
          off = 0;
          port.postMessage({ id: chunkId, chunk });
        }
        new Uint8Array(chunk, off, buf.length).set(buf);
        table[3 * i] = chunkId + 1;
        table[3 * i + 1] = off;
        table[3 * i + 2] = buf.length;
        off += buf.length;
        kept += buf.length;
      }
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
  /** The bytes of a blob the helper proved and kept, or undefined (read it from disk). */
  bytes(i: number): Buffer | undefined;
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
  const tableBuf = new SharedArrayBuffer(12 * names.length);
  const table = new Int32Array(tableBuf);
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(HELPER, {
      eval: true,
      workerData: { dir: blobDir, names, maxBytes, shared, table: tableBuf, port: port2, arenaMax: ARENA_MAX, chunkSize: CHUNK },
      transferList: [port2],
    });
  } catch {
    return undefined;
  }
  port1.unref();
  const chunks: SharedArrayBuffer[] = [];
  const drain = () => {
    for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) {
      const { id, chunk } = m.message as { id: number; chunk: SharedArrayBuffer };
      chunks[id] = chunk;
    }
  };
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
    bytes(i) {
      const c = table[3 * i] - 1;
      if (c < 0) return undefined;
      if (!chunks[c]) drain();
      const chunk = chunks[c];
      return chunk ? Buffer.from(chunk, table[3 * i + 1], table[3 * i + 2]) : undefined;
    },
  };
}
