/**
 * The blob check of a run read with `checkBlobs`: every ref an event names exists and re-hashes to
 * its name, and so does every file in blobs/ (a regular file inside the run, not a link out of it).
 * Large runs check their blobs on worker threads (parallel-blobs.ts) while the events are parsed.
 */
import fs from "node:fs";
import path from "node:path";
import { BlobStore, blobFileMatches } from "./blobs";
import { refsOf, type LoadedEvent } from "./events";
import { isRef } from "./hash";
import { BlobStatus, type ParallelCheck } from "./parallel-blobs";
import { problem, type Problem } from "./problems";
import { openRunFile } from "./safefs";

/** Every ref an event names exists and re-hashes to its name; so does every file in blobs/. */
export function checkBlobs(dir: string, events: LoadedEvent[], blobs: BlobStore, parallel?: ParallelCheck): Problem[] {
  const out: Problem[] = [];
  const firstUse = new Map<string, LoadedEvent>();
  for (const e of events) {
    for (const r of refsOf(e)) {
      if (firstUse.has(r as string)) continue; // valid, and named before
      if (!isRef(r)) {
        out.push(
          problem("bad-ref", `line ${e.line} (seq ${e.seq}): refused ref ${JSON.stringify(String(r)).slice(0, 60)}: a ref is sha256: plus 64 hex digits`, {
            line: e.line,
            seq: e.seq,
            file: "events.jsonl",
          }),
        );
        continue;
      }
      if (!firstUse.has(r)) firstUse.set(r, e);
    }
  }
  if (parallel) return checkBlobsParallel(dir, firstUse, blobs, parallel, out);
  const checked = new Set<string>(); // file names (hex + ".json") already checked
  for (const [ref, e] of firstUse) {
    const at = { line: e.line, seq: e.seq, ref, file: "blobs" as const };
    checked.add(ref.slice(7) + ".json");
    const r = blobs.get(ref);
    if (r.ok) continue;
    if (r.code === "blob-too-large" || r.code === "blob-too-deep") {
      // too large or deep to hold: still check its hash, in chunks
      if (!blobFileMatchesSafe(blobs.pathOf(ref), ref.slice(7), dir))
        out.push(problem("blob-hash", `blob ${ref.slice(7, 19)}… does not hash to its name (forged or damaged)`, at));
      else if (r.code === "blob-too-deep") out.push(problem("blob-too-deep", `${r.message} (its hash matches; named by line ${e.line}, seq ${e.seq})`, at));
      continue;
    }
    if (r.code === "missing-blob") {
      checked.delete(ref.slice(7) + ".json");
      out.push(problem("missing-blob", `blob ${ref.slice(7, 19)}… named by line ${e.line} (seq ${e.seq}) is missing`, at));
    } else out.push(problem(r.code, `${r.message} (named by line ${e.line}, seq ${e.seq})`, at));
  }
  // files nobody names must still be what their names say
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(dir, "blobs"));
  } catch {
    /* no blobs folder */
  }
  for (const name of names) {
    if (checked.has(name)) continue;
    const m = /^([0-9a-f]{64})\.json$/.exec(name);
    if (!m) continue;
    const why = notRegular(path.join(dir, "blobs", name), dir);
    if (why) out.push(problem("io", `blob file ${name.slice(0, 12)}… is not read: ${why}`, { ref: "sha256:" + m[1], file: "blobs" }));
    else if (!blobFileMatchesSafe(path.join(dir, "blobs", name), m[1], dir)) {
      out.push(problem("blob-hash", `blob file ${name.slice(0, 12)}… does not hash to its name (forged or damaged)`, { ref: "sha256:" + m[1], file: "blobs" }));
    }
  }
  return out;
}

/** One referenced blob, checked exactly (the store caches its value); problems go to `out`. */
function checkOne(ref: string, e: LoadedEvent, blobs: BlobStore, out: Problem[]): void {
  const at = { line: e.line, seq: e.seq, ref, file: "blobs" as const };
  const r = blobs.get(ref);
  if (r.ok) return;
  if (r.code === "blob-too-large" || r.code === "blob-too-deep") {
    if (!blobFileMatchesSafe(blobs.pathOf(ref), ref.slice(7), blobs.runDir))
      out.push(problem("blob-hash", `blob ${ref.slice(7, 19)}… does not hash to its name (forged or damaged)`, at));
    else if (r.code === "blob-too-deep") out.push(problem("blob-too-deep", `${r.message} (its hash matches; named by line ${e.line}, seq ${e.seq})`, at));
  } else if (r.code === "missing-blob") {
    out.push(problem("missing-blob", `blob ${ref.slice(7, 19)}… named by line ${e.line} (seq ${e.seq}) is missing`, at));
  } else out.push(problem(r.code, `${r.message} (named by line ${e.line}, seq ${e.seq})`, at));
}

/** The same checks as the sequential path, sharing the files with the helper thread. */
function checkBlobsParallel(dir: string, firstUse: Map<string, LoadedEvent>, blobs: BlobStore, par: ParallelCheck, out: Problem[]): Problem[] {
  const exact = (i: number) => {
    const name = par.names[i];
    const ref = "sha256:" + name.slice(0, 64);
    const e = firstUse.get(ref);
    if (e) checkOne(ref, e, blobs, out);
    else if (/^[0-9a-f]{64}\.json$/.test(name)) {
      const why = notRegular(path.join(dir, "blobs", name), dir);
      if (why) out.push(problem("io", `blob file ${name.slice(0, 12)}… is not read: ${why}`, { ref, file: "blobs" }));
      else if (!blobFileMatchesSafe(path.join(dir, "blobs", name), name.slice(0, 64), dir)) {
        out.push(problem("blob-hash", `blob file ${name.slice(0, 12)}… does not hash to its name (forged or damaged)`, { ref, file: "blobs" }));
      }
    }
  };
  for (let i = par.claim(); i >= 0; i = par.claim()) exact(i);
  par.wait();
  const present = new Set<string>();
  for (let i = 0; i < par.names.length; i++) {
    const ref = "sha256:" + par.names[i].slice(0, 64);
    present.add(ref);
    const st = par.status(i);
    if (st === BlobStatus.Unsure) exact(i);
    else if (st === BlobStatus.Verified) blobs.proved(ref, () => par.bytes(i));
  }
  for (const [ref, e] of firstUse) {
    if (!present.has(ref))
      out.push(
        problem("missing-blob", `blob ${ref.slice(7, 19)}… named by line ${e.line} (seq ${e.seq}) is missing`, {
          line: e.line,
          seq: e.seq,
          ref,
          file: "blobs",
        }),
      );
  }
  return out;
}

/** Why a run file cannot be read (a FIFO, a device, a symlink out of the run), or undefined. */
function notRegular(file: string, dir: string): string | undefined {
  const o = openRunFile(file, dir);
  if (!o.ok) return o.reason;
  fs.closeSync(o.fd);
  return undefined;
}

function blobFileMatchesSafe(file: string, hex: string, dir: string): boolean {
  try {
    return blobFileMatches(file, hex, dir);
  } catch {
    return false;
  }
}
