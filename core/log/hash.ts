/**
 * Content refs, event hashes and derived seeds.
 *
 * Hashes are sha256 over canonical JSON (see pyjson.ts). Re-hashing what is on disk never goes
 * through JSON.parse: {@link canonicalDigest} hashes the file's own bytes with the whitespace
 * outside strings dropped (and, for an event, its top-level "hash" member), which is the canonical
 * form for anything written with sorted keys and Python's escapes. When that disagrees, callers
 * fall back to {@link slowCanonical}, which re-serialises a lossless parse.
 */
import crypto, { createHash } from "node:crypto";
import { dumps, parseLossless, type JsonValue } from "./pyjson";

export const ZERO_HASH = "0".repeat(64);
export const REF_RE = /^sha256:[0-9a-f]{64}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;

const oneShot = (crypto as { hash?: (alg: string, data: string | Uint8Array, enc: "hex") => string }).hash;

/** sha256 as hex (Node's one-shot crypto.hash where it exists: cheaper for the many small inputs). */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot("sha256", data, "hex") : createHash("sha256").update(data).digest("hex");
}

/** Canonical JSON: what every hash in a run is computed over. */
export function canonical(value: unknown): string {
  return dumps(value, "canonical");
}

/** True for `sha256:` followed by 64 lowercase hex digits, and nothing else. */
export function isRef(x: unknown): x is string {
  return typeof x === "string" && x.length === 71 && REF_RE.test(x);
}

export function isHex64(x: unknown): x is string {
  return typeof x === "string" && HEX64_RE.test(x);
}

/** The ref of a value: sha256 of canonical({"v": value}). */
export function refOf(value: unknown): string {
  return "sha256:" + sha256Hex(canonical({ v: value }));
}

/** The text of a blob file as the reference writes it: `{"v": <value>}` with default separators. */
export function blobFileText(value: unknown): string {
  return dumps({ v: value }, "file");
}

/** The hash of an event: sha256 of canonical(event without "hash"). */
export function eventHash(event: Record<string, unknown>): string {
  const { hash: _drop, ...rest } = event;
  return sha256Hex(canonical(rest));
}

/**
 * derive_seed(parts…) = int(first 12 hex digits of sha256(canonical([parts…])), 16). A model call's
 * seed is deriveSeed(runSeed, agent, k); trial i of a run test uses deriveSeed("cf", runId, i).
 */
export function deriveSeed(...parts: JsonValue[]): number {
  // seeds are derived for every model call of every replay: skip the general serialiser when the
  // parts are safe integers and well-formed strings, for which JSON.stringify writes Python's bytes
  const simple = parts.every((p) => (typeof p === "number" && Number.isSafeInteger(p) && !Object.is(p, -0)) || (typeof p === "string" && p.isWellFormed()));
  return parseInt(sha256Hex(simple ? JSON.stringify(parts) : canonical(parts)).slice(0, 12), 16);
}

const WS = new Uint8Array(256);
WS[0x20] = WS[0x0a] = WS[0x0d] = WS[0x09] = 1;

/**
 * Feeds `emit` the canonical bytes of the JSON text in buf[start, end): whitespace outside strings
 * is dropped, and so is the top-level member whose key is `dropKey` (with one adjacent comma).
 */
export function compactSegments(buf: Uint8Array, start: number, end: number, emit: (a: number, b: number) => void, dropKey?: Uint8Array): void {
  let first = start;
  while (first < end && WS[buf[first]]) first++;
  // Dropping a member only makes sense in a top-level object; (-1, -1) asks emit for a comma.
  const objectMode = dropKey !== undefined && buf[first] === 0x7b;
  let seg = start;
  let depth = 0;
  let inStr = false;
  let last = 0; // last significant byte outside strings
  let dropping = false;
  let pendingComma = false; // a depth-1 comma held back until the next kept member
  const flush = (to: number) => {
    if (!dropping && to > seg) emit(seg, to);
  };
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (inStr) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inStr = false;
      continue;
    }
    if (WS[c]) {
      flush(i);
      seg = i + 1;
      continue;
    }
    if (c === 0x22) {
      if (objectMode && depth === 1 && (last === 0x7b || last === 0x2c)) {
        let isDrop = buf[i + 1 + dropKey.length] === 0x22;
        for (let k = 0; isDrop && k < dropKey.length; k++) isDrop = buf[i + 1 + k] === dropKey[k];
        if (isDrop) {
          flush(i);
          dropping = true;
        } else if (pendingComma) {
          flush(i);
          emit(-1, -1);
          pendingComma = false;
          seg = i;
        }
      }
      inStr = true;
      last = c;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (objectMode && depth === 1) {
        if (dropping) {
          dropping = false;
          seg = i;
        }
        pendingComma = false;
      }
      depth--;
    } else if (objectMode && c === 0x2c && depth === 1) {
      if (dropping)
        dropping = false; // the dropped member ends here; its comma goes with it
      else {
        flush(i);
        pendingComma = true;
      }
      seg = i + 1;
    }
    last = c;
  }
  flush(end);
}

const COMMA_BYTE = new Uint8Array([0x2c]);

/** sha256 hex of the canonical form of buf[start, end) (see {@link compactSegments}). */
export function canonicalDigest(buf: Uint8Array, start = 0, end = buf.length, dropKey?: Uint8Array): string {
  const h = createHash("sha256");
  compactSegments(buf, start, end, (a, b) => h.update(a < 0 ? COMMA_BYTE : buf.subarray(a, b)), dropKey);
  return h.digest("hex");
}

/** The canonical text of buf[start, end) (see {@link compactSegments}). */
export function compactText(buf: Uint8Array, start = 0, end = buf.length, dropKey?: Uint8Array): string {
  const parts: Uint8Array[] = [];
  compactSegments(buf, start, end, (a, b) => parts.push(a < 0 ? COMMA_BYTE : buf.subarray(a, b)), dropKey);
  return Buffer.concat(parts).toString("utf8");
}

export const HASH_KEY = new TextEncoder().encode("hash");

/**
 * The always-correct canonical text of a JSON text: lossless parse, re-serialise as Python would.
 * `dropKey` removes a top-level member first. Throws on text that is not JSON.
 */
export function slowCanonical(text: string, dropKey?: string): string {
  const v = parseLossless(text);
  if (dropKey !== undefined && v && typeof v === "object" && !Array.isArray(v)) {
    delete (v as Record<string, JsonValue>)[dropKey];
  }
  return canonical(v);
}
