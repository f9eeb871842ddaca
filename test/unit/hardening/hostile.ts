/**
 * Hostile run folders for the hardening tests and the fuzzers: copies of the reference's demo run
 * with one thing done to them, re-sealed (hashes and chain recomputed) where the point is to get
 * past the hash checks into the analyses.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { dumps, parseLossless } from "../../../core/log/pyjson";
import { eventHash, sha256Hex } from "../../../core/log/hash";

export const DEMO = path.resolve(__dirname, "../../fixtures/causeway-py-demo/demo-seed0");

export function copyRun(src = DEMO, parent?: string): string {
  const dir = fs.mkdtempSync(path.join(parent ?? os.tmpdir(), "cw-hostile-"));
  fs.cpSync(src, dir, { recursive: true });
  return dir;
}

export const eventsFile = (dir: string) => path.join(dir, "events.jsonl");
export const readLines = (dir: string) => fs.readFileSync(eventsFile(dir), "utf8").split("\n").filter(Boolean);
export const writeLines = (dir: string, ls: string[]) => fs.writeFileSync(eventsFile(dir), ls.join("\n") + "\n");

/** Parsed events (lossless), for editing. */
export const events = (dir: string) => readLines(dir).map((l) => parseLossless(l) as Record<string, unknown>);

/**
 * Writes events with seq, prev_hash and hash recomputed, so only the content is odd. A line given
 * as a string is written as is (and its hash taken from it).
 */
export function reseal(dir: string, evs: (Record<string, unknown> | string)[]): void {
  let prev = "0".repeat(64);
  const out: string[] = [];
  evs.forEach((e, i) => {
    if (typeof e === "string") {
      out.push(e);
      const m = /"hash": "([0-9a-f]{64})"/.exec(e);
      prev = m ? m[1] : prev;
      return;
    }
    const x: Record<string, unknown> = { ...e, seq: i, prev_hash: prev };
    delete x.hash;
    x.hash = eventHash(x);
    prev = x.hash as string;
    out.push(dumps(x, "file"));
  });
  writeLines(dir, out);
}

/** JSON text nested `depth` arrays deep around `inner`. */
export const nested = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);

/**
 * An event line with `field` holding a value nested `depth` deep, hashed correctly (the canonical
 * text is built by hand: no serialiser walks it).
 */
export function deepLine(e: Record<string, unknown>, field: string, depth: number, prev: string): string {
  const base: Record<string, unknown> = { ...e, prev_hash: prev };
  delete base.hash;
  delete base[field];
  base[field] = "__DEEP__";
  const canon = dumps(base, "canonical").replace('"__DEEP__"', nested(depth));
  const hash = sha256Hex(canon);
  const withHash = { ...base, hash };
  return dumps(withHash, "file").replace('"__DEEP__"', nested(depth));
}

/** Writes a blob file holding `valueText` (canonical JSON text) under its correct name; returns its ref. */
export function putBlobText(dir: string, valueText: string): string {
  const text = '{"v":' + valueText + "}";
  const hex = sha256Hex(text);
  fs.writeFileSync(path.join(dir, "blobs", hex + ".json"), text);
  return "sha256:" + hex;
}

/** The first event of a type (index into events()). */
export function indexOf(evs: Record<string, unknown>[], type: string): number {
  const i = evs.findIndex((e) => e.type === type);
  if (i < 0) throw new Error(`no ${type} event`);
  return i;
}

/** A referenced blob file of the run (of the first action's args). */
export function argsBlob(dir: string): { ref: string; file: string; line: number } {
  const evs = events(dir);
  const i = indexOf(evs, "action");
  const ref = evs[i].args_ref as string;
  return { ref, file: path.join(dir, "blobs", ref.slice(7) + ".json"), line: i + 1 };
}
