/**
 * The collector's read API (and test append), over any {@link CollectorStore}:
 *
 *   GET  /v1/runs?program=&since=&until=&high=1&status=running|ended&source=&tool=&limit=&cursor=   read
 *   GET  /v1/runs/RUN                          the run's row                                         read
 *   GET  /v1/runs/RUN/events?from=0&limit=N    events.jsonl lines, exact bytes (x-causeway-* headers) read
 *   GET  /v1/runs/RUN/tail?from=N              server-sent events: `events` {from,count,text}, `end`  read
 *   GET  /v1/runs/RUN/blobs                    {"refs": [...]}                                       read
 *   GET  /v1/runs/RUN/blobs?content=1&after=REF&limit=N   {"blobs": [[ref, file text]…], "next"}     read
 *   GET  /v1/runs/RUN/blobs/REF                the blob file's bytes                                 read
 *   GET  /v1/runs/RUN/tests                    tests.jsonl's bytes                                   read
 *   POST /v1/runs/RUN/tests                    append one result to the tests chain (409 + head)     ingest
 *   GET  /v1/runs/RUN/writers                  {"owner", "tests": [writer of each line]} (owners.ts) read
 *
 * Appending (tests here, events through ingest) is for the run's writer and admin only: anyone
 * else gets 403 and nothing about the run (core/store/owners.ts).
 */
import type http from "node:http";
import { URL } from "node:url";
import { HttpError, RUN_ID_RE, readJsonBody, sendJson, type BodyPool, type JsonBudget } from "./http";
import type { CollectorStore, RunFilter, Writer } from "./types";
import type { Scope } from "./tokens";

export interface ApiContext {
  store: CollectorStore;
  allows(req: http.IncomingMessage, scope: Scope): boolean;
  /** The writer the request's token is, when it holds `scope` (or admin). */
  writerOf(req: http.IncomingMessage, scope: "ingest"): Writer | undefined;
  maxBody: number;
  /** The parse budget of a body (nesting, number length, count of values), as for ingest. */
  budget: JsonBudget;
  /** The bytes all bodies being received at once may hold (shared with ingest). */
  pool?: BodyPool;
  /** How often a tail polls the store (ms). */
  tailPollMs?: number;
  log?: (line: string) => void;
}

const need = (ctx: ApiContext, req: http.IncomingMessage, scope: Scope) => {
  if (!ctx.allows(req, scope)) throw new HttpError(401, `unauthorized: send Authorization: Bearer <token> with the ${scope} scope`);
};

const intParam = (u: URL, name: string, dflt: number, max: number): number => {
  const v = u.searchParams.get(name);
  if (v === null || v === "") return dflt;
  if (!/^\d{1,10}$/.test(v)) throw new HttpError(400, `${name} must be a whole number`);
  return Math.min(Number(v), max);
};

/** A path segment decoded; a malformed percent-escape is the client's error (400), not ours. */
const segment = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new HttpError(400, "the path holds a malformed percent-escape");
  }
};

/** A query parameter as text; one holding a control character (NUL…) is refused (400) on every store. */
const textParam = (u: URL, k: string): string | undefined => {
  const v = u.searchParams.get(k);
  // eslint-disable-next-line no-control-regex
  if (v !== null && /[\u0000-\u001f\u007f]/.test(v)) throw new HttpError(400, `${k} holds a control character`);
  return v ?? undefined;
};

const EARLIEST = Date.parse("0001-01-01T00:00:00Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

function filterOf(u: URL): RunFilter {
  const q = (k: string) => textParam(u, k);
  const f: RunFilter = { program: q("program"), source: q("source"), tool: q("tool"), cursor: q("cursor") };
  for (const k of ["since", "until"] as const) {
    const v = q(k);
    if (v !== undefined) {
      // within years 1–9999: what every store can compare (PostgreSQL refuses a year below 1)
      const t = Date.parse(v);
      if (Number.isNaN(t) || t < EARLIEST || t > LATEST) throw new HttpError(400, `${k} must be an ISO time (years 1 to 9999)`);
      f[k] = new Date(Date.parse(v)).toISOString();
    }
  }
  const st = q("status");
  if (st !== undefined && st !== "running" && st !== "ended") throw new HttpError(400, "status is running or ended");
  f.status = st;
  const high = q("high");
  if (high === "1" || high === "true") f.highAlert = true;
  f.limit = intParam(u, "limit", 50, 500);
  return f;
}

/** Handles /v1/runs…; returns false for any other path. */
export async function handleApi(ctx: ApiContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
  let u: URL;
  try {
    u = new URL(req.url ?? "/", "http://collector");
  } catch {
    throw new HttpError(400, "a malformed request target");
  }
  const parts = u.pathname.split("/").filter(Boolean);
  if (parts[0] !== "v1" || parts[1] !== "runs") return false;
  const { store } = ctx;
  if (parts.length === 2) {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    sendJson(res, 200, await store.listRuns(filterOf(u)));
    return true;
  }
  const runId = segment(parts[2]);
  if (!RUN_ID_RE.test(runId)) throw new HttpError(404, "no such run");
  const what = parts[3];
  if (parts.length === 3) {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    const row = await store.getRun(runId);
    if (!row) throw new HttpError(404, `no run ${runId}`);
    sendJson(res, 200, row);
    return true;
  }
  if (what === "events" && parts.length === 4) {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    const r = await store.readEvents(runId, intParam(u, "from", 0, 2 ** 31 - 1), intParam(u, "limit", 10_000, 100_000));
    if (!r) throw new HttpError(404, `no run ${runId}`);
    res.writeHead(200, {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-length": String(r.bytes.length),
      "x-causeway-from": String(r.from),
      "x-causeway-count": String(r.count),
      "x-causeway-head-seq": String(r.head?.seq ?? -1),
      "x-causeway-head-hash": r.head?.hash ?? "",
      "x-causeway-ended": r.ended ? "1" : "0",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    res.end(r.bytes);
    return true;
  }
  if (what === "tail" && parts.length === 4) {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    await tail(ctx, runId, intParam(u, "from", 0, 2 ** 31 - 1), req, res);
    return true;
  }
  if (what === "blobs") {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    if (parts.length === 4 && u.searchParams.get("content") === "1") {
      const limit = intParam(u, "limit", 500, 2000);
      const page = await store.readBlobPage(runId, textParam(u, "after") ?? "", limit);
      if (!page) throw new HttpError(404, `no run ${runId}`);
      sendJson(res, 200, { blobs: page.map((b) => [b.ref, b.body.toString("utf8")]), next: page.length === limit ? page[page.length - 1].ref : null });
      return true;
    }
    if (parts.length === 4) {
      const refs = await store.listBlobs(runId);
      if (!refs) throw new HttpError(404, `no run ${runId}`);
      sendJson(res, 200, { refs });
      return true;
    }
    if (parts.length === 5) {
      const buf = await store.readBlob(runId, segment(parts[4]));
      if (!buf) throw new HttpError(404, "no such blob in this run");
      res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": String(buf.length),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      });
      res.end(buf);
      return true;
    }
  }
  if (what === "tests" && parts.length === 4) {
    if (req.method === "GET") {
      need(ctx, req, "read");
      const buf = await store.readTests(runId);
      if (!buf) throw new HttpError(404, `no run ${runId}`);
      res.writeHead(200, {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-length": String(buf.length),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      });
      res.end(buf);
      return true;
    }
    if (req.method === "POST") {
      need(ctx, req, "ingest");
      const writer = ctx.writerOf(req, "ingest")!;
      const body = await readJsonBody(req, ctx.maxBody, ctx.budget, ctx.pool);
      const v = await store.appendTest(runId, body, writer);
      if (!v.ok) throw new HttpError(v.status, v.error, v.status === 409 ? { head: v.head ?? null } : {});
      ctx.log?.(`test ${runId}: line ${v.line}`);
      sendJson(res, 200, { run_id: runId, line: v.line, head: v.head, record: v.record });
      return true;
    }
    throw new HttpError(405, "use GET or POST");
  }
  if (what === "writers" && parts.length === 4) {
    if (req.method !== "GET") throw new HttpError(405, "use GET");
    need(ctx, req, "read");
    const w = await store.readWriters(runId);
    if (!w) throw new HttpError(404, `no run ${runId}`);
    sendJson(res, 200, { run_id: runId, owner: w.owner, tests: w.tests });
    return true;
  }
  throw new HttpError(404, "not found");
}

/** Streams a run's new events as server-sent events until it ends or the client goes. */
async function tail(ctx: ApiContext, runId: string, from: number, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const first = await ctx.store.readEvents(runId, from, 10_000);
  if (!first) throw new HttpError(404, `no run ${runId}`);
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-content-type-options": "nosniff",
  });
  let closed = false;
  req.on("close", () => (closed = true));
  res.on("close", () => (closed = true));
  let next = from;
  let r: typeof first | null = first;
  let idle = 0;
  const poll = ctx.tailPollMs ?? 250;
  while (!closed) {
    if (r && r.count) {
      res.write(`event: events\ndata: ${JSON.stringify({ from: r.from, count: r.count, text: r.bytes.toString("utf8") })}\n\n`);
      next = r.from + r.count;
      idle = 0;
      if (r.count >= 10_000) {
        r = await ctx.store.readEvents(runId, next, 10_000).catch(() => null);
        continue; // more waiting: no pause
      }
    }
    if (r && r.ended && r.head && next > r.head.seq) {
      res.write(`event: end\ndata: ${JSON.stringify({ head: r.head })}\n\n`);
      break;
    }
    if (++idle % 40 === 0) res.write(": keep-alive\n\n");
    await new Promise((resolve) => setTimeout(resolve, poll));
    if (closed) break;
    r = await ctx.store.readEvents(runId, next, 10_000).catch(() => null);
  }
  res.end();
}
