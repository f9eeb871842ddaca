/**
 * Opening the files of a run folder, which is untrusted input. A run file is read only when it is
 * a regular file: `lstat` first, then an open with O_NONBLOCK (a FIFO never blocks the open) and
 * O_NOFOLLOW, then `fstat` on the open descriptor (the file read is the file checked). A symlink
 * is followed only when its target resolves to a regular file inside the run folder; one that
 * leaves the folder (`blobs/x.json -> /dev/zero`, `events.jsonl -> /etc/passwd`) is refused. Every
 * read is bounded by a size limit (see {@link readLimits}).
 */
import fs from "node:fs";
import path from "node:path";

/** Size limits on what is read from a run folder (bytes). */
export interface ReadLimits {
  /** events.jsonl: bytes beyond this are not read (a problem says so). */
  maxEventsBytes: number;
  /** tests.jsonl: a larger file is not read. */
  maxTestsBytes: number;
  /** One blob: a larger blob is not loaded (its hash is still checked in chunks). */
  maxBlobBytes: number;
}

const MB = 1024 * 1024;

function envMb(name: string, dflt: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.min(v, 1024 * 1024) * MB : dflt;
}

/**
 * The limits in force: defaults 4096 MB for events.jsonl, 256 MB for tests.jsonl and 64 MB per
 * blob, each overridable with CAUSEWAY_MAX_EVENTS_MB, CAUSEWAY_MAX_TESTS_MB, CAUSEWAY_MAX_BLOB_MB.
 */
export function readLimits(over: Partial<ReadLimits> = {}): ReadLimits {
  return {
    maxEventsBytes: over.maxEventsBytes ?? envMb("CAUSEWAY_MAX_EVENTS_MB", 4096 * MB),
    maxTestsBytes: over.maxTestsBytes ?? envMb("CAUSEWAY_MAX_TESTS_MB", 256 * MB),
    maxBlobBytes: over.maxBlobBytes ?? envMb("CAUSEWAY_MAX_BLOB_MB", 64 * MB),
  };
}

export type OpenResult = { ok: true; fd: number; size: number; ino: number } | { ok: false; missing: boolean; reason: string };

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

function kindOf(st: fs.Stats): string {
  return st.isDirectory()
    ? "a directory"
    : st.isFIFO()
      ? "a FIFO"
      : st.isSocket()
        ? "a socket"
        : st.isCharacterDevice() || st.isBlockDevice()
          ? "a device"
          : st.isSymbolicLink()
            ? "a symlink"
            : "not a regular file";
}

/** True when `p` is `root` or inside it (both already resolved). */
function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * Opens a run file for reading when it is a regular file (see the module comment). `runDir` is
 * the folder symlinks must stay in. Never blocks, never throws; close the fd when done.
 */
export function openRunFile(file: string, runDir: string): OpenResult {
  let lst: fs.Stats;
  try {
    lst = fs.lstatSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, missing: code === "ENOENT" || code === "ENOTDIR", reason: code === "ENOENT" ? "it does not exist" : (err as Error).message };
  }
  let target = file;
  let flags = fs.constants.O_RDONLY | O_NONBLOCK | O_NOFOLLOW;
  if (lst.isSymbolicLink()) {
    let real: string;
    let realRoot: string;
    try {
      real = fs.realpathSync(file);
      realRoot = fs.realpathSync(runDir);
    } catch {
      return { ok: false, missing: false, reason: "it is a symlink to nothing" };
    }
    if (!inside(realRoot, real)) return { ok: false, missing: false, reason: "it is a symlink out of the run folder (not followed)" };
    try {
      lst = fs.statSync(real);
    } catch (err) {
      return { ok: false, missing: false, reason: (err as Error).message };
    }
    target = real;
  }
  if (!lst.isFile()) return { ok: false, missing: false, reason: `it is ${kindOf(lst)}, not a regular file` };
  let fd: number;
  try {
    fd = fs.openSync(target, flags);
  } catch (err) {
    return { ok: false, missing: false, reason: (err as Error).message };
  }
  flags = 0;
  let st: fs.Stats;
  try {
    st = fs.fstatSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    return { ok: false, missing: false, reason: (err as Error).message };
  }
  // the file opened must be the one checked (not swapped for a FIFO between lstat and open)
  if (!st.isFile() || st.ino !== lst.ino || st.dev !== lst.dev) {
    fs.closeSync(fd);
    return { ok: false, missing: false, reason: `it is ${kindOf(st)}, not a regular file` };
  }
  return { ok: true, fd, size: st.size, ino: st.ino };
}

/**
 * Reads a whole run file when it is a regular file of at most `maxBytes` bytes. A file that grows
 * while it is read is read up to `maxBytes` + 1 bytes, so `tooLarge` still tells.
 */
export function readRunFile(
  file: string,
  runDir: string,
  maxBytes: number,
): { ok: true; buf: Buffer } | { ok: false; missing: boolean; tooLarge?: boolean; size?: number; reason: string } {
  const o = openRunFile(file, runDir);
  if (!o.ok) return o;
  try {
    if (o.size > maxBytes)
      return {
        ok: false,
        missing: false,
        tooLarge: true,
        size: o.size,
        reason: `it is ${(o.size / MB).toFixed(1)} MB, over the ${(maxBytes / MB).toFixed(0)} MB limit`,
      };
    const buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(o.size, 0) + 1));
    let n = 0;
    for (;;) {
      if (n === buf.length) break;
      let k: number;
      try {
        k = fs.readSync(o.fd, buf, n, buf.length - n, n);
      } catch (err) {
        return { ok: false, missing: false, reason: (err as Error).message };
      }
      if (k <= 0) break;
      n += k;
    }
    if (n > maxBytes) return { ok: false, missing: false, tooLarge: true, size: n, reason: `it is over the ${(maxBytes / MB).toFixed(0)} MB limit` };
    return { ok: true, buf: buf.subarray(0, n) };
  } finally {
    fs.closeSync(o.fd);
  }
}

/**
 * True when the JSON text nests arrays/objects deeper than `limit`. One pass, no recursion, linear
 * in the text; strings (and their escapes) are skipped.
 */
export function jsonTooDeep(text: string | Uint8Array, limit: number, start = 0, end = text.length): boolean {
  let depth = 0;
  let inStr = false;
  if (typeof text === "string") {
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (inStr) {
        if (c === 0x5c) i++;
        else if (c === 0x22) inStr = false;
      } else if (c === 0x22) inStr = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > limit) return true;
      } else if (c === 0x7d || c === 0x5d) depth--;
    }
    return false;
  }
  for (let i = start; i < end; i++) {
    const c = text[i];
    if (inStr) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inStr = false;
    } else if (c === 0x22) inStr = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Deepest nesting of a value read from a run (events, blobs, tests). Deeper values are refused by
 * the reader, so every later walk over a run's values is bounded by it. Python's own json module
 * fails near 1,000 levels, so no reference run is deeper.
 */
export const MAX_JSON_DEPTH = 500;
