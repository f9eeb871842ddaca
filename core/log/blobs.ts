/**
 * The blob store of one run: `blobs/<hex>.json`, each `{"v": <value>}`, named by the sha256 of its
 * canonical form. Reading is confined to the run folder: a ref is only ever `sha256:` + 64 hex
 * digits, anything else is refused before a path is built.
 */
import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { canonicalDigest, compactText, isRef, sha256Hex, slowCanonical } from "./hash";
import { parseLossless } from "./pyjson";
import { MAX_JSON_DEPTH, jsonTooDeep, openRunFile } from "./safefs";

/** Blobs larger than this are not loaded (their hash is still checked, in chunks). */
export const DEFAULT_MAX_BLOB_BYTES = 64 * 1024 * 1024;

export type BlobResult =
  | {
      ok: true;
      value: unknown;
      readonly canonical: string;
      bytes: number;
      /** JSON.stringify(value) is its canonical form: the plain value loses nothing */ exact?: boolean;
    }
  | { ok: false; code: "bad-ref" | "missing-blob" | "blob-not-json" | "blob-too-large" | "blob-too-deep" | "blob-hash" | "io"; message: string };

/** Reads blobs of one run, caching what it has read. */
export class BlobStore {
  private cache = new Map<string, BlobResult>();
  private readonly dir: string;
  constructor(
    readonly runDir: string,
    readonly maxBytes = DEFAULT_MAX_BLOB_BYTES,
  ) {
    this.dir = path.join(runDir, "blobs") + path.sep;
  }

  /** The value of a blob, or why it can't be had. Checks the blob's hash against its name. */
  get(ref: string): BlobResult {
    const hit = this.cache.get(ref);
    if (hit) return hit;
    const r = this.load(ref);
    this.cache.set(ref, r);
    return r;
  }

  /** Blobs whose hash a helper thread already proved on the fast path (see parallel-blobs.ts), with the bytes it kept. */
  private readonly proven = new Map<string, (() => Buffer | undefined) | null>();

  /** Records that a blob's hash was proven elsewhere: loading it later only parses it, from `bytes` when given. */
  proved(ref: string, bytes?: () => Buffer | undefined): void {
    if (!this.cache.has(ref)) this.proven.set(ref, bytes ?? null);
  }

  /** The value, or undefined when the blob is missing or bad. */
  value(ref: string | null | undefined): unknown {
    if (!ref) return undefined;
    const r = this.get(ref);
    return r.ok ? r.value : undefined;
  }

  /** Canonical JSON of the value (Python's bytes, floats kept), or undefined. */
  canonicalOf(ref: string | null | undefined): string | undefined {
    if (!ref) return undefined;
    const r = this.get(ref);
    return r.ok ? r.canonical : undefined;
  }

  has(ref: string): boolean {
    return isRef(ref) && fs.existsSync(this.pathOf(ref));
  }

  forget(ref?: string): void {
    if (ref) this.cache.delete(ref);
    else this.cache.clear();
  }

  /** The file a ref names (the ref must be valid). */
  pathOf(ref: string): string {
    return this.dir + ref.slice(7) + ".json";
  }

  private load(ref: string): BlobResult {
    if (!isRef(ref))
      return { ok: false, code: "bad-ref", message: `refused ref ${JSON.stringify(String(ref)).slice(0, 80)}: a ref is sha256: plus 64 hex digits` };
    const kept = this.proven.get(ref)?.();
    if (kept) return decodeBlob(ref, kept, true);
    // open, read, close: most blobs fit the shared buffer, so their size needs no fstat; a blob
    // that fills it is measured before it is read whole, so one too large to hold is refused
    // only a regular file inside the run folder, opened without blocking (see safefs.ts)
    const o = openRunFile(this.pathOf(ref), this.runDir);
    if (!o.ok) {
      if (o.missing) return { ok: false, code: "missing-blob", message: `blob ${ref.slice(0, 19)}… is missing` };
      return { ok: false, code: "io", message: `blob ${ref.slice(0, 19)}… is not read: ${o.reason}` };
    }
    const fd = o.fd;
    try {
      const first = readInto(fd, SHARED, 0);
      if (first < 0) return { ok: false, code: "missing-blob", message: `blob ${ref.slice(0, 19)}… is not a file` };
      if (first < SHARED.length) return decodeBlob(ref, SHARED.subarray(0, first), this.proven.has(ref));
      const st = fs.fstatSync(fd);
      if (st.size > this.maxBytes) {
        return {
          ok: false,
          code: "blob-too-large",
          message: `blob ${ref.slice(0, 19)}… is ${(st.size / 1048576).toFixed(1)} MB, over the ${(this.maxBytes / 1048576).toFixed(0)} MB limit; not loaded`,
        };
      }
      const buf = Buffer.allocUnsafe(st.size);
      SHARED.copy(buf, 0, 0, first);
      const rest = readInto(fd, buf, first);
      return decodeBlob(ref, buf.subarray(0, Math.max(first, rest)));
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** One buffer for the many small blobs (decodeBlob copies out what it keeps). */
const SHARED = Buffer.allocUnsafe(64 * 1024);

/** Reads from `at` to the end of the file or the buffer; returns where it stopped (-1: not a file). */
function readInto(fd: number, buf: Buffer, at: number): number {
  let n = at;
  try {
    while (n < buf.length) {
      const k = fs.readSync(fd, buf, n, buf.length - n, n);
      if (k <= 0) break;
      n += k;
    }
  } catch {
    return -1; // a directory, say
  }
  return n;
}

/** Checks a blob file's bytes against its ref and decodes `{"v": value}`. */
export function decodeBlob(ref: string, buf: Buffer, proven = false): BlobResult {
  const want = ref.slice(7);
  if (jsonTooDeep(buf, MAX_JSON_DEPTH + 1)) {
    return { ok: false, code: "blob-too-deep", message: `blob ${ref.slice(0, 19)}… nests its value deeper than ${MAX_JSON_DEPTH} levels; not loaded` };
  }
  const text = buf.toString("utf8");
  let outer: unknown;
  try {
    outer = JSON.parse(text);
  } catch {
    try {
      outer = parseLossless(text); // NaN / Infinity, as Python may write them
    } catch {
      return { ok: false, code: "blob-not-json", message: `blob ${ref.slice(0, 19)}… is not JSON` };
    }
  }
  if (!outer || typeof outer !== "object" || Array.isArray(outer) || !("v" in outer)) {
    return { ok: false, code: "blob-not-json", message: `blob ${ref.slice(0, 19)}… is not of the form {"v": …}` };
  }
  const value = outer.v;
  if (proven) return lazyResult(value, buf.length); // its hash was checked on this very fast path
  // Fast path: JSON.stringify writes what Python's canonical form writes for most values (it
  // differs on float forms such as 89.0 or 1e-05, which then take the exact paths below).
  const fast = fastCanonical(value);
  if (fast !== undefined && sha256Hex('{"v":' + fast + "}") === want) return lazyResult(value, buf.length);
  let canon: string | undefined;
  if (canonicalDigest(buf) === want) canon = compactText(buf);
  else {
    try {
      const slow = slowCanonical(text);
      if (sha256Hex(slow) === want) canon = slow;
    } catch {
      /* handled below */
    }
  }
  if (canon === undefined) return { ok: false, code: "blob-hash", message: `blob ${ref.slice(0, 19)}… does not hash to its name (forged or damaged)` };
  // canonical of the value alone: strip the {"v": … } wrapper
  return { ok: true, value, canonical: canon.slice(5, -1), bytes: buf.length };
}

function fastCanonical(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** A decoded blob whose canonical text is JSON.stringify of its value, computed when first asked. */
function lazyResult(value: unknown, bytes: number): BlobResult {
  let canon: string | undefined;
  return {
    ok: true,
    value,
    bytes,
    exact: true,
    get canonical(): string {
      return (canon ??= JSON.stringify(value));
    },
  };
}

/** Larger blob files are not re-hashed (they fail the check): 16 GB. */
const MAX_HASHED_BYTES = 16 * 1024 * 1024 * 1024;

/** Re-hashes a blob file in chunks, without holding it: true when it matches its name. */
export function blobFileMatches(file: string, hex: string, runDir = path.dirname(path.dirname(file))): boolean {
  const h = createHash("sha256");
  const o = openRunFile(file, runDir);
  if (!o.ok) throw new Error(`${path.basename(file)} is not read: ${o.reason}`);
  const fd = o.fd;
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let total = 0;
    let inStr = false;
    let esc = false;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n > 0) total += n;
      if (total > MAX_HASHED_BYTES) return false;
      if (n <= 0) break;
      let seg = 0;
      for (let i = 0; i < n; i++) {
        const c = chunk[i];
        if (inStr) {
          if (esc) esc = false;
          else if (c === 0x5c) esc = true;
          else if (c === 0x22) inStr = false;
        } else if (c === 0x22) inStr = true;
        else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          if (i > seg) h.update(chunk.subarray(seg, i));
          seg = i + 1;
        }
      }
      if (n > seg) h.update(chunk.subarray(seg, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest("hex") === hex;
}
