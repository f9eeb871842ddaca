/**
 * `causeway serve ROOT` with `$CAUSEWAY_TOKEN`, `--token-env VAR` or `--token-file FILE` (or `--store postgresql://…`): the collector remote agents ship
 * their runs to.
 *
 *   POST /v1/ingest   Authorization: Bearer <token>; {"events": [...], "blobs": {ref: value}}
 *   GET  /v1/runs…    the read API (core/store/api.ts)
 *   GET  /healthz
 *
 * Each batch is checked (token, size, nesting here, then {@link validateBatch} inside the store's
 * lock or transaction) before anything is written; the store (core/store/: a runs folder, or
 * PostgreSQL shared by several collectors) writes it whole, byte for byte as a local writer
 * would have, or not at all. Batches of one run are handled one at a time. The server binds to 127.0.0.1 by default and, on a loopback bind, answers only loopback
 * Host headers (DNS rebinding).
 *
 * Clients are untrusted: each connection must send its headers within `headerTimeoutMs` and its
 * body within `bodyTimeoutMs`, never slower than `minBodyBytesPerSec`, or it is closed; at most
 * `maxConnections` are open at once (the ones waiting longest for headers, then for their body,
 * make room), a few of them held back for /healthz, and one address or token holds only its share
 * (core/capture/limits.ts); the bodies received at once hold at most
 * `maxBodyPoolBytes` (503 past it); every malformed batch is a 422.
 */
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { JsonValue } from "../log/pyjson";
import { DEFAULT_JSON_BUDGET, HttpError, hostAllowed, isLoopbackHost, readJsonBody, sendJson } from "../store/http";
import { batchRunId, DEFAULT_LIMITS, validateBatch, type IngestLimits, type RunHead } from "../store/ingest";
import type { CollectorStore } from "../store/types";
import { FolderStore } from "../store/folder";
import { StoreError } from "../store/types";
import { TokenSet, type ScopedToken } from "../store/tokens";
import { handleApi } from "../store/api";
import { ConnectionGuard, principalKey, resolveLimits, type PrincipalLimits } from "./limits";
import type { Writer } from "../store/types";
import type { CollectorJobs } from "../store/job-routes";

/** Marks a run folder as created by ingest (only those are appended to). */

/** Besides the options below, the limits per address and per token ({@link PrincipalLimits}). */
export interface CollectorOptions extends Partial<PrincipalLimits> {
  /** The runs folder (the folder store), unless `store` is given. */
  root?: string;
  /** Where runs are kept (default: a {@link FolderStore} on `root`); initialised by the collector. */
  store?: CollectorStore;
  /** A token holding every scope (today's single token). */
  token?: string;
  /** Further tokens, each with its scopes (ingest, read, admin). */
  tokens?: readonly ScopedToken[];
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
  /** The job routes (/v1/jobs…, core/jobs/api.ts), on a PostgreSQL store. */
  jobs?: CollectorJobs;
}

export interface Collector {
  url: string;
  port: number;
  store: CollectorStore;
  close(): Promise<void>;
}

const TAIL_RE = /^\/v1\/runs\/[^/]+\/tail$/;

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
  const tokens = new TokenSet([...(opts.token ? [{ token: opts.token, scopes: ["admin" as const] }] : []), ...(opts.tokens ?? [])]);
  if (!opts.store && !opts.root) throw new Error("the collector needs a runs folder or a store");
  const store = opts.store ?? new FolderStore(path.resolve(opts.root!));
  await store.init();
  const host = opts.host ?? "127.0.0.1";
  const maxBody = checkedInt("maxBodyBytes", opts.maxBodyBytes, COLLECTOR_DEFAULTS.maxBodyBytes, MAX_BODY_BYTES);
  const budget = {
    maxDepth: checkedInt("maxDepth", opts.maxDepth, DEFAULT_JSON_BUDGET.maxDepth, 512),
    maxNumberChars: checkedInt("maxNumberChars", opts.maxNumberChars, DEFAULT_JSON_BUDGET.maxNumberChars, 1 << 20),
    maxValues: checkedInt("maxValues", opts.maxValues, DEFAULT_JSON_BUDGET.maxValues, 1 << 30),
  };
  const maxDepth = budget.maxDepth;
  const pool = { used: 0, max: checkedInt("maxBodyPoolBytes", opts.maxBodyPoolBytes, 4 * maxBody, 2 ** 40) };
  const limits: IngestLimits = { ...DEFAULT_LIMITS, ...opts.limits, maxDepth };
  const connLimits = resolveLimits(
    {
      headerTimeoutMs: checkedInt("headerTimeoutMs", opts.headerTimeoutMs, COLLECTOR_DEFAULTS.headerTimeoutMs, 3_600_000),
      bodyTimeoutMs: checkedInt("bodyTimeoutMs", opts.bodyTimeoutMs, COLLECTOR_DEFAULTS.bodyTimeoutMs, 3_600_000),
      maxConnections: checkedInt("maxConnections", opts.maxConnections, COLLECTOR_DEFAULTS.maxConnections, 1 << 16),
    },
    opts,
  );
  const log = opts.log ?? (() => {});

  /** The writer a request's token is (core/store/owners.ts), when it holds `scope`. */
  const writerOf = (req: http.IncomingMessage, scope: "ingest"): Writer | undefined => {
    const who = tokens.principalOf(req.headers.authorization);
    if (!who || !(who.scopes.has(scope) || who.scopes.has("admin"))) return undefined;
    return { via: "token", principal: who.principal, admin: who.scopes.has("admin") };
  };

  const ingest = async (body: JsonValue, writer: Writer): Promise<{ runId: string; accepted: number; head: RunHead }> => {
    const runId = batchRunId(body);
    if (runId === undefined) {
      // let the validator name what is wrong with the batch
      const v = validateBatch(body, { head: null, hashAt: () => undefined, hasId: () => false, hasBlob: () => false, ended: false }, limits);
      throw new HttpError(v.ok ? 422 : v.status, v.ok ? "the batch names no valid run_id" : v.error, { head: null });
    }
    const v = await store.appendBatch(runId, body, limits, writer);
    // every refusal of a run of one's own carries its head, so a client can tell where the run
    // stands; someone else's run (403) tells nothing
    if (!v.ok) throw new HttpError(v.status, v.error, v.status === 403 ? {} : { head: v.head ?? null });
    return { runId, accepted: v.events.length, head: v.head };
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, host, opts.allowHosts)) throw new HttpError(403, "host not allowed");
    const url = (req.url ?? "/").split("?")[0];
    if (url === "/healthz" && req.method === "GET") return sendJson(res, 200, { ok: true, store: store.kind });
    if (opts.jobs && (await opts.jobs.handle({ store, principalOf: (r) => tokens.principalOf(r.headers.authorization), maxBody, budget }, req, res))) return;
    if (await handleApi({ store, allows: (r, scope) => tokens.allows(r.headers.authorization, scope), writerOf, maxBody, budget, pool, log }, req, res)) return;
    if (url !== "/v1/ingest") throw new HttpError(404, "not found");
    if (req.method !== "POST") throw new HttpError(405, "use POST");
    const writer = writerOf(req, "ingest");
    if (!writer) throw new HttpError(401, "unauthorized: send Authorization: Bearer <token>");
    const body = await readJsonBody(req, maxBody, budget, pool);
    const r = await ingest(body, writer);
    log(`ingest ${r.runId}: +${r.accepted} events (head seq ${r.head.seq})`);
    sendJson(res, 200, { run_id: r.runId, accepted: r.accepted, head: r.head });
  };

  const server = http.createServer((req, res) => {
    // the limits per address and token come first: a request over them is answered 429/503 here
    const key = principalKey(req);
    const url = (req.url ?? "/").split("?")[0];
    if (!guard.admit(req, res, { key, health: url === "/healthz" })) return;
    if (TAIL_RE.test(url) && tokens.allows(req.headers.authorization, "read") && !guard.openTail(key, res)) return;
    handle(req, res).catch((err) => {
      if (err instanceof HttpError || err instanceof StoreError) {
        log(`refused (${err.status}): ${err.message}`);
        if (!res.headersSent) sendJson(res, err.status, { error: err.message, ...err.extra });
      } else {
        log(`error: ${(err as Error)?.stack ?? err}`);
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      }
    });
  });
  const guard = new ConnectionGuard(server, connLimits);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 7788, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    store,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await opts.jobs?.close();
      await store.close();
    },
  };
}

/** True when the collector would be reachable from other machines (the CLI warns). */
export function exposed(host: string): boolean {
  return !isLoopbackHost(host.toLowerCase());
}
