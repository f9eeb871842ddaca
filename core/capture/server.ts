/**
 * `causeway serve ROOT --token T`: the collector remote agents ship their runs to.
 *
 *   POST /v1/ingest   Authorization: Bearer <token>; {"events": [...], "blobs": {ref: value}}
 *   GET  /healthz
 *
 * Each batch is checked whole (token, size, then the parse budget — nesting, number length, count
 * of values — then {@link validateBatch}) before anything is
 * written; then its blobs are written (each atomically) and its events appended to
 * ROOT/<run_id>/events.jsonl in one write, byte for byte as a local writer would have written
 * them. Anything watching ROOT (the extension, `causeway watch`) sees the run grow live. A run
 * folder that ingest did not create is never appended to. Batches of one run are handled one at a
 * time. The server binds to 127.0.0.1 by default and, on a loopback bind, answers only loopback
 * Host headers (DNS rebinding).
 *
 * Clients are untrusted: each connection must send its headers within `headerTimeoutMs` and its
 * body within `bodyTimeoutMs` or it is closed; at most `maxConnections` are open at once (the
 * oldest ones still waiting for headers make room first); the bodies received at once hold at most
 * `maxBodyPoolBytes` (503 past it); every malformed batch is a 422.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import { blobFileText, isRef } from "../log/hash";
import { parseLossless, type JsonValue } from "../log/pyjson";
import { EventLogParser, readEventsFile } from "../log/reader";
import { eventLine } from "../log/writer";
import { DEFAULT_JSON_BUDGET, guardConnections, HttpError, hostAllowed, isLoopbackHost, readBody, scanJson, sendJson } from "./http";
import { batchRunId, DEFAULT_LIMITS, validateBatch, type IngestLimits, type RunHead, type StoredRun } from "./ingest";

/** Marks a run folder as created by ingest (only those are appended to). */
export const INGEST_MARKER = ".causeway-ingest";

export interface CollectorOptions {
  root: string;
  token: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 7788; 0 picks a free port. */
  port?: number;
  /** Largest body accepted (default 32 MB, at most {@link MAX_BODY_BYTES}). */
  maxBodyBytes?: number;
  /** Deepest JSON nesting accepted (default 64). */
  maxDepth?: number;
  /** Longest number literal accepted, in characters (default 4300, Python's limit for integers). */
  maxNumberChars?: number;
  /** Most JSON values in one body: the parse work of one request (default 2,000,000). */
  maxValues?: number;
  /** A connection must send a request's headers within this (default 10 s). */
  headerTimeoutMs?: number;
  /** ... and its body within this once the headers are in (default 60 s). */
  bodyTimeoutMs?: number;
  /** Most open connections (default 256). */
  maxConnections?: number;
  /** Most bytes held by all the bodies being received at once (default 4 × maxBodyBytes); past it, 503. */
  maxBodyPoolBytes?: number;
  limits?: IngestLimits;
  /** Host names answered besides loopback names and the bound address (non-loopback binds). */
  allowHosts?: readonly string[];
  /** One line per accepted or refused batch (default: nothing). */
  log?: (line: string) => void;
}

export interface Collector {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface RunState {
  dir: string;
  hashes: string[];
  ids: Set<string>;
  ended: boolean;
}

const MAX_CACHED_RUNS = 256;

/** The largest body limit the collector takes (a body is held and parsed in memory whole). */
export const MAX_BODY_BYTES = 256 << 20;
export const COLLECTOR_DEFAULTS = { maxBodyBytes: 32 << 20, headerTimeoutMs: 10_000, bodyTimeoutMs: 60_000, maxConnections: 256 } as const;

/** A positive whole number at most `max` (an option given by a program, not a person: wrong is an error). */
function checkedInt(name: string, v: number | undefined, dflt: number, max: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new Error(`${name} must be a whole number from 1 to ${max}, got ${v}`);
  return v;
}

export async function startCollector(opts: CollectorOptions): Promise<Collector> {
  if (!opts.token) throw new Error("the collector needs a token");
  const root = path.resolve(opts.root);
  fs.mkdirSync(root, { recursive: true });
  const host = opts.host ?? "127.0.0.1";
  const maxBody = checkedInt("maxBodyBytes", opts.maxBodyBytes, COLLECTOR_DEFAULTS.maxBodyBytes, MAX_BODY_BYTES);
  const budget = {
    maxDepth: checkedInt("maxDepth", opts.maxDepth, DEFAULT_JSON_BUDGET.maxDepth, 512),
    maxNumberChars: checkedInt("maxNumberChars", opts.maxNumberChars, DEFAULT_JSON_BUDGET.maxNumberChars, 1 << 20),
    maxValues: checkedInt("maxValues", opts.maxValues, DEFAULT_JSON_BUDGET.maxValues, 1 << 30),
  };
  const pool = { used: 0, max: checkedInt("maxBodyPoolBytes", opts.maxBodyPoolBytes, 4 * maxBody, 2 ** 40) };
  const limits: IngestLimits = { ...DEFAULT_LIMITS, ...opts.limits, maxDepth: budget.maxDepth };
  const connLimits = {
    headerTimeoutMs: checkedInt("headerTimeoutMs", opts.headerTimeoutMs, COLLECTOR_DEFAULTS.headerTimeoutMs, 3_600_000),
    bodyTimeoutMs: checkedInt("bodyTimeoutMs", opts.bodyTimeoutMs, COLLECTOR_DEFAULTS.bodyTimeoutMs, 3_600_000),
    maxConnections: checkedInt("maxConnections", opts.maxConnections, COLLECTOR_DEFAULTS.maxConnections, 1 << 16),
  };
  const tokenDigest = createHash("sha256").update(opts.token).digest();
  const states = new Map<string, RunState>();
  const queues = new Map<string, Promise<unknown>>();
  const log = opts.log ?? (() => {});

  const authorised = (h: string | undefined): boolean => {
    const m = /^Bearer\s+(.+)$/i.exec(h ?? "");
    if (!m) return false;
    return timingSafeEqual(createHash("sha256").update(m[1].trim()).digest(), tokenDigest);
  };

  /** The stored state of a run (read from disk the first time), or an HttpError. */
  const stateOf = (runId: string): RunState => {
    const have = states.get(runId);
    if (have) return have;
    const dir = path.join(root, runId);
    const file = path.join(dir, "events.jsonl");
    const st: RunState = { dir, hashes: [], ids: new Set(), ended: false };
    if (fs.existsSync(dir)) {
      if (!fs.existsSync(path.join(dir, INGEST_MARKER))) throw new HttpError(409, `a run named ${runId} exists and was not created by ingest; it is never appended to`);
      const fileStat = fs.lstatSync(file, { throwIfNoEntry: false });
      if (fileStat && !fileStat.isFile()) throw new HttpError(409, `the stored run ${runId} has an events.jsonl that is not a regular file; not appending to it`);
      if (fileStat) {
        let parser: EventLogParser;
        try {
          parser = readEventsFile(file, new EventLogParser()).parser;
        } catch (err) {
          throw new HttpError(409, `the stored run ${runId} cannot be read (${(err as Error)?.message ?? err}); not appending to it`);
        }
        const bad = parser.problems.find((p) => p.severity === "error");
        if (bad || parser.hasPartialLine) throw new HttpError(409, `the stored run ${runId} fails its check (${bad?.message ?? "a partial last line"}); not appending to it`);
        for (const e of parser.events) {
          st.hashes.push(String(e.hash));
          st.ids.add(String(e.id));
          if (e.type === "run.end") st.ended = true;
        }
      }
    }
    if (states.size >= MAX_CACHED_RUNS) states.delete(states.keys().next().value!);
    states.set(runId, st);
    return st;
  };

  const storedView = (st: RunState): StoredRun => ({
    head: st.hashes.length ? { seq: st.hashes.length - 1, hash: st.hashes[st.hashes.length - 1] } : null,
    hashAt: (seq) => st.hashes[seq],
    hasId: (id) => st.ids.has(id),
    hasBlob: (ref) => isRef(ref) && fs.existsSync(path.join(st.dir, "blobs", ref.slice(7) + ".json")),
    ended: st.ended,
  });

  const ingest = (body: JsonValue): { runId: string; accepted: number; head: RunHead } => {
    const runId = batchRunId(body);
    if (runId === undefined) {
      // let the validator name what is wrong with the batch
      const v = validateBatch(body, { head: null, hashAt: () => undefined, hasId: () => false, hasBlob: () => false, ended: false }, limits);
      throw new HttpError(v.ok ? 422 : v.status, v.ok ? "the batch names no valid run_id" : v.error, { head: null });
    }
    const st = stateOf(runId);
    const view = storedView(st);
    const v = validateBatch(body, view, limits);
    // every refusal of a known run carries its head, so a client can tell where the run stands
    if (!v.ok) throw new HttpError(v.status, v.error, { head: v.head ?? view.head });
    fs.mkdirSync(path.join(st.dir, "blobs"), { recursive: true });
    const marker = path.join(st.dir, INGEST_MARKER);
    if (!fs.existsSync(marker)) fs.writeFileSync(marker, JSON.stringify({ created: new Date().toISOString() }) + "\n");
    for (const [ref, value] of v.blobs) {
      const file = path.join(st.dir, "blobs", ref.slice(7) + ".json");
      if (fs.existsSync(file)) continue;
      const tmp = `${file}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, blobFileText(value));
      fs.renameSync(tmp, file);
    }
    fs.appendFileSync(path.join(st.dir, "events.jsonl"), v.events.map((e) => eventLine(e)).join(""));
    for (const e of v.events) {
      st.hashes.push(e.hash as string);
      st.ids.add(e.id as string);
      if (e.type === "run.end") st.ended = true;
    }
    return { runId, accepted: v.events.length, head: v.head };
  };

  /** Batches of one run are handled one after another. */
  const serial = <T>(key: string, fn: () => T): Promise<T> => {
    const prev = queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return next;
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, host, opts.allowHosts)) throw new HttpError(403, "host not allowed");
    const url = (req.url ?? "/").split("?")[0];
    if (url === "/healthz" && req.method === "GET") return sendJson(res, 200, { ok: true });
    if (url !== "/v1/ingest") throw new HttpError(404, "not found");
    if (req.method !== "POST") throw new HttpError(405, "use POST");
    if (!authorised(req.headers.authorization)) throw new HttpError(401, "unauthorized: send Authorization: Bearer <token>");
    const buf = await readBody(req, maxBody, pool);
    const over = scanJson(buf, budget);
    if (over) throw new HttpError(over.status, over.message);
    let body: JsonValue;
    try {
      body = parseLossless(buf.toString("utf8"));
    } catch (err) {
      throw new HttpError(400, `the body is not JSON (${(err as Error).message})`);
    }
    const r = await serial(batchRunId(body) ?? "", () => ingest(body));
    log(`ingest ${r.runId}: +${r.accepted} events (head seq ${r.head.seq})`);
    sendJson(res, 200, { run_id: r.runId, accepted: r.accepted, head: r.head });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (err instanceof HttpError) {
        log(`refused (${err.status}): ${err.message}`);
        if (!res.headersSent) sendJson(res, err.status, { error: err.message, ...err.extra });
      } else {
        log(`error: ${(err as Error)?.stack ?? err}`);
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      }
    });
  });
  guardConnections(server, connLimits);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 7788, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** True when the collector would be reachable from other machines (the CLI warns). */
export function exposed(host: string): boolean {
  return !isLoopbackHost(host.toLowerCase());
}
