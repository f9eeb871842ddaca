/**
 * Writing runs. A {@link Chain} seals events (schema, seq, prev_hash, hash); a {@link Sink} stores
 * sealed events and blobs: {@link FileSink} appends to `<dir>/events.jsonl` and `<dir>/blobs/` as
 * each event happens, byte for byte as the reference writes them; {@link MemorySink} keeps them in
 * memory (replays).
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { SCHEMA } from "./events";
import { ZERO_HASH, blobFileText, eventHash, isRef } from "./hash";
import { dumps } from "./pyjson";

export interface Sink {
  /** Store a value under its ref (called before the event that names it). */
  blob(ref: string, value: unknown): void;
  /** Store one sealed event. */
  event(e: Record<string, unknown>): void;
  /** Flush and release (after run.end, or when a run is abandoned). */
  close?(): void | Promise<void>;
  /**
   * The id of a run given none, from the name it would have had (`base`): a sink many writers
   * share (a collector) makes it unique per run, so a second agent never collides with the first.
   */
  runIdFor?(base: string): string;
}

/** Numbers events in order and links each to the previous one's hash. */
export class Chain {
  seq = 0;
  prevHash = ZERO_HASH;
  constructor(readonly hashed = true) {}

  /** Adds schema, seq, prev_hash and hash to the event's own fields. */
  seal(fields: Record<string, unknown>): Record<string, unknown> {
    const e: Record<string, unknown> = { ...fields, schema: SCHEMA, seq: this.seq, prev_hash: this.prevHash };
    delete e.hash;
    const h = this.hashed ? eventHash(e) : "";
    e.hash = h;
    this.seq++;
    this.prevHash = h;
    return e;
  }
}

let pool = Buffer.alloc(0);
let poolAt = 0;
/** A random 32-hex event id (drawn from a pooled buffer of random bytes). */
export function newId(): string {
  if (poolAt + 16 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 16;
  return pool.toString("hex", poolAt - 16, poolAt);
}

/** UTC timestamp with microseconds, as the reference writes it: 2026-11-30T04:34:03.092319Z. */
export function timestamp(): string {
  const ms = Date.now();
  const micro = Number(process.hrtime.bigint() / 1000n) % 1000;
  const iso = new Date(ms).toISOString(); // ...SS.mmmZ
  return iso.slice(0, 23) + String(micro).padStart(3, "0") + "Z";
}

/** One event per line, default separators, keys sorted, non-ASCII kept: the reference's line. */
export function eventLine(e: Record<string, unknown>): string {
  return dumps(e, "file") + "\n";
}

/** Appends to a run folder as events happen. */
export class FileSink implements Sink {
  readonly dir: string;
  private fd: number;
  private known = new Set<string>();

  constructor(dir: string, opts: { append?: boolean } = {}) {
    this.dir = dir;
    fs.mkdirSync(path.join(dir, "blobs"), { recursive: true });
    const file = path.join(dir, "events.jsonl");
    if (!opts.append && fs.existsSync(file) && fs.statSync(file).size > 0) {
      throw new Error(`${file} already holds a run; choose another run id or folder`);
    }
    this.fd = fs.openSync(file, "a");
  }

  blob(ref: string, value: unknown): void {
    if (!isRef(ref)) throw new Error(`not a content ref: ${ref}`);
    if (this.known.has(ref)) return;
    this.known.add(ref);
    const file = path.join(this.dir, "blobs", ref.slice(7) + ".json");
    if (fs.existsSync(file)) return;
    // write then rename, so a reader never sees half a blob
    const tmp = file + ".tmp-" + process.pid;
    fs.writeFileSync(tmp, blobFileText(value));
    fs.renameSync(tmp, file);
  }

  event(e: Record<string, unknown>): void {
    fs.writeSync(this.fd, eventLine(e));
  }

  close(): void {
    if (this.fd >= 0) {
      fs.closeSync(this.fd);
      this.fd = -1;
    }
  }
}

/** Keeps a run in memory. */
export class MemorySink implements Sink {
  readonly events: Record<string, unknown>[] = [];
  readonly blobs = new Map<string, unknown>();
  blob(ref: string, value: unknown): void {
    if (!this.blobs.has(ref)) this.blobs.set(ref, value);
  }
  event(e: Record<string, unknown>): void {
    this.events.push(e);
  }
}

/** Sends every event to several sinks (e.g. a file and a remote collector). */
export class TeeSink implements Sink {
  constructor(readonly sinks: Sink[]) {}
  blob(ref: string, value: unknown): void {
    for (const s of this.sinks) s.blob(ref, value);
  }
  event(e: Record<string, unknown>): void {
    for (const s of this.sinks) s.event(e);
  }
  async close(): Promise<void> {
    for (const s of this.sinks) await s.close?.();
  }
  runIdFor(base: string): string {
    for (const s of this.sinks) if (s.runIdFor) return s.runIdFor(base);
    return base;
  }
}

/** Discards everything (replay arms that only need the runtime's own summary). */
export class NullSink implements Sink {
  /** Tells the runtime it need not build events or hash blobs for this sink. */
  readonly discards = true;
  blob(): void {}
  event(): void {}
}
