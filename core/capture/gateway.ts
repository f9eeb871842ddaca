/**
 * The recording gateway: a local OpenAI- and Anthropic-compatible proxy. Point an agent's base URL
 * at it — in any language — and every chat completion, response and message it sends upstream is
 * recorded as a decision of a run, exactly as the SDK adapters record them (same context items,
 * same request record, tool calls linked to the decision that asked for them when their results
 * come back in the next request). Streamed responses pass through as they arrive and are recorded
 * once complete.
 *
 *   causeway gateway --upstream https://api.openai.com --out runs      # then OPENAI_BASE_URL=http://127.0.0.1:7789/v1
 *
 * The agent is named by the `x-causeway-agent` header, else by the label given to its API key
 * (`--agent-key NAME=ENVVAR`), else by the role its system prompt names ("You are the researcher"
 * → researcher, as the preload names agents), else by a short hash of the key (never the key
 * itself). One agent's output in another agent's prompt, alone or wrapped in text, is a message
 * between them (core/adapters/handoffs.ts). Tool results are untrusted unless their tool is
 * trusted, each named by its tool and arguments (core/capture/gateway-runs.ts). The run is named by
 * `x-causeway-run`, else the gateway's current run, which a quiet gap (`runGapMs`) ends; with
 * `singleRun` (`causeway record`'s built-in gateway) there is one run whatever a request says.
 * Runs end when the gateway closes. Requests an Anthropic client sends (`anthropic-version`) go to
 * `anthropicUpstream` when one is given; with `pathPrefix`, only requests under that (secret) path
 * are taken, so other local programs can't add calls to the run.
 *
 * Requests are confined to the upstream's base path: a path with a dot segment (`..`, `%2e%2e`),
 * an encoded slash, a backslash or a `;` is refused with 400 before anything is sent. Requests a
 * browser sends for a web page (`Origin`) are refused with 403 and bodies not declared JSON with
 * 415 (core/capture/gateway-boundary.ts); hop-by-hop and forwarding headers are not forwarded, and
 * CORS and cookies are not passed back. Connections are limited as the collector's are
 * (core/capture/limits.ts). An upstream that
 * does not connect within `connectTimeoutMs`, or goes silent for `idleTimeoutMs`, is answered 504
 * (or, mid-stream, the client's connection is closed), and the call is recorded as failed.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import { performance } from "node:perf_hooks";
import { codecForPath, type Codec } from "../adapters/codecs";
import { errorText } from "../adapters/shared";
import { agentFromPrompt } from "../adapters/agent-names";
import { HttpError, hostAllowed, readBody } from "../store/http";
import { GatewayRuns } from "./gateway-runs";
import { answerHeaders, checkJsonBody, checkOrigin, forwardedHeaders } from "./gateway-boundary";
import { ConnectionGuard, principalKey, resolveLimits, type PrincipalLimits } from "./limits";
import { Redactor } from "../log/redact";

/** Besides the options below, the limits per address and per API key ({@link PrincipalLimits}). */
export interface GatewayOptions extends Partial<PrincipalLimits> {
  /** Where requests go: http(s)://host[:port][/base]. The request's own path is appended. */
  upstream: string;
  /** Runs root. */
  outDir: string;
  /** Default 7789; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The run for requests without x-causeway-run (default gateway-<time>). */
  runId?: string;
  sensitiveTools?: readonly string[];
  /** Tools whose results are untrusted (every tool not trusted is: kept for the command line's --untrusted-tool). */
  untrustedTools?: readonly string[];
  /** Tools whose results are trusted (default none: tool results are untrusted). */
  trustedTools?: readonly string[];
  /** A request without x-causeway-run after this long with no call in flight starts a new run (default 120 s; 0: never). */
  runGapMs?: number;
  /** One run for every request, x-causeway-run ignored and no gap (the built-in gateway of `causeway record`). */
  singleRun?: boolean;
  /** run.start's program (the recorded command line), extra meta, and the program's root. */
  program?: string;
  meta?: Record<string, unknown>;
  root?: string;
  /** run.start's seed (default 0). */
  seed?: number;
  /** Where requests an Anthropic client sends (an `anthropic-version` header) go (default: `upstream`). */
  anthropicUpstream?: string;
  /** Take only requests under this path (e.g. "/s-<random>"), which is removed before forwarding. */
  pathPrefix?: string;
  /** The clock the run gap is measured on (default Date.now). */
  now?: () => number;
  /** label → API key: requests with this key are recorded as agent `label`. */
  agentKeys?: Record<string, string>;
  /** Largest request or response body recorded (default 32 MB; larger requests are refused). */
  maxBodyBytes?: number;
  /** The upstream must accept the connection within this (default 10 s); else 504. */
  connectTimeoutMs?: number;
  /** The upstream may stay silent (before its answer or between two chunks of it) this long (default 100 s); else 504. */
  idleTimeoutMs?: number;
  /** One line per recorded call (default: nothing). */
  log?: (line: string) => void;
  /** Browser origins whose requests are taken (default none: any request with an `Origin` is refused with 403). */
  allowOrigins?: readonly string[];
  /** A connection must send a request's headers within this (default 10 s). */
  headerTimeoutMs?: number;
  /** ... and its body within this once the headers are in (default 120 s). */
  bodyTimeoutMs?: number;
  /** Most open connections (default 256). */
  maxConnections?: number;
}

export const GATEWAY_DEFAULTS = { connectTimeoutMs: 10_000, idleTimeoutMs: 100_000, headerTimeoutMs: 10_000, bodyTimeoutMs: 120_000, maxConnections: 256 } as const;

/**
 * The path of a request target, checked so that appended to the upstream's base path it stays
 * under it: no dot segments (plain or percent-encoded, even twice), no encoded slash, no
 * backslash, no control characters, valid percent escapes. Throws a 400 otherwise.
 */
export function confinedPath(target: string): string {
  const p = target.split("?")[0];
  const refuse = (why: string): never => {
    throw new HttpError(400, `the request path is refused: ${why}`);
  };
  if (!p.startsWith("/") || p.startsWith("//")) refuse("it must be a path (this is not a forward proxy)");
  if (/[\\#\x00-\x20\x7f]/.test(p)) refuse("it holds a backslash, a '#', a space or a control character");
  if (p.includes(";")) refuse("it holds a ';' (a path parameter some servers read as a path of their own)");
  for (const seg of p.split("/").slice(1)) {
    if (/%(?![0-9A-Fa-f]{2})/.test(seg)) refuse("a malformed percent escape");
    let dec: string;
    try {
      dec = decodeURIComponent(seg);
    } catch {
      return refuse("a percent escape that is not UTF-8");
    }
    if (dec === "." || dec === "..") refuse("a dot segment (it would leave the upstream's base path)");
    if (/[/\\;\x00-\x1f\x7f]/.test(dec)) refuse("an encoded slash, backslash, ';' or control character");
    if (/%(2e|2f|5c|25)/i.test(dec)) refuse("a twice-encoded dot, slash or backslash");
  }
  // whatever else a URL parser would rewrite (the upstream may parse it so): refused, not guessed at
  if (new URL(p, "http://gateway").pathname !== p) refuse("it is not in its normal form");
  return p;
}

export interface Gateway {
  url: string;
  port: number;
  /** Folders of the runs recorded so far. */
  runs(): string[];
  /** Records the calls still waiting for results, ends every run (with `outcome` in run.end), stops listening. */
  close(outcome?: Record<string, unknown>): Promise<void>;
}

const AGENT_RE = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$/;

const digest = (s: string) => createHash("sha256").update(s).digest();

/** An upstream and its base path (no trailing slash). */
function upstreamOf(url: string): { upstream: URL; basePath: string } {
  const upstream = new URL(url);
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new Error(`--upstream must be an http(s) URL, got ${url}`);
  return { upstream, basePath: upstream.pathname.replace(/\/+$/, "") };
}

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const main = upstreamOf(opts.upstream);
  const anthropic = opts.anthropicUpstream ? upstreamOf(opts.anthropicUpstream) : undefined;
  const prefix = opts.pathPrefix?.replace(/\/+$/, "");
  if (prefix !== undefined && !/^\/[A-Za-z0-9_-]{1,128}$/.test(prefix)) throw new Error(`pathPrefix must be one path segment of letters, digits, '-' and '_', got ${JSON.stringify(opts.pathPrefix)}`);
  const maxBody = opts.maxBodyBytes ?? 32 << 20;
  const connectTimeoutMs = opts.connectTimeoutMs ?? GATEWAY_DEFAULTS.connectTimeoutMs;
  const idleTimeoutMs = opts.idleTimeoutMs ?? GATEWAY_DEFAULTS.idleTimeoutMs;
  const headerTimeoutMs = opts.headerTimeoutMs ?? GATEWAY_DEFAULTS.headerTimeoutMs;
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? GATEWAY_DEFAULTS.bodyTimeoutMs;
  const timeouts = { connectTimeoutMs, idleTimeoutMs, headerTimeoutMs, bodyTimeoutMs };
  for (const [name, v] of Object.entries(timeouts)) {
    if (!Number.isFinite(v) || v < 1 || v > 3_600_000) throw new Error(`${name} must be from 1 ms to an hour, got ${v}`);
  }
  const maxConnections = opts.maxConnections ?? GATEWAY_DEFAULTS.maxConnections;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1 || maxConnections > 1 << 16) throw new Error(`maxConnections must be a whole number from 1 to 65536, got ${maxConnections}`);
  const limits = resolveLimits({ headerTimeoutMs, bodyTimeoutMs, maxConnections }, opts);
  const host = opts.host ?? "127.0.0.1";
  const keys = Object.entries(opts.agentKeys ?? {}).map(([label, key]) => ({ label, digest: digest(key) }));
  // the credentials of every request seen (and the gateway's own environment) never reach a run or a log line
  const redactor = Redactor.fromEnv(process.env);
  for (const key of Object.values(opts.agentKeys ?? {})) redactor.add(key);
  const log = (line: string) => opts.log?.(redactor.text(line));
  const upstreamMeta = (u: { upstream: URL; basePath: string }) => u.upstream.origin + u.basePath;
  const runs = new GatewayRuns({
    outDir: opts.outDir,
    runId: opts.runId,
    sensitiveTools: opts.sensitiveTools,
    untrustedTools: opts.untrustedTools,
    trustedTools: opts.trustedTools,
    runGapMs: opts.runGapMs,
    singleRun: opts.singleRun,
    program: opts.program,
    root: opts.root,
    seed: opts.seed,
    meta: { upstream: upstreamMeta(main), ...(anthropic ? { anthropic_upstream: upstreamMeta(anthropic) } : {}), ...(opts.meta ?? {}) },
    redactor,
    now: opts.now,
  });

  /** The x-causeway-agent header, else the API key's label, else the role the system prompt names, as the preload names agents. */
  const agentName = (req: http.IncomingMessage, codec: Codec, body: unknown): string => {
    const h = req.headers["x-causeway-agent"];
    if (typeof h === "string" && AGENT_RE.test(h) && h !== "run") return h;
    const auth = req.headers.authorization;
    const key = typeof auth === "string" && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, "") : typeof req.headers["x-api-key"] === "string" ? (req.headers["x-api-key"]) : "";
    const d = key ? digest(key) : undefined;
    const hit = d && keys.find((k) => timingSafeEqual(k.digest, d));
    if (hit) return hit.label;
    const fromPrompt = agentFromPrompt(codec.blocks(body));
    if (fromPrompt !== "agent") return fromPrompt;
    return d ? `key-${d.toString("hex").slice(0, 8)}` : "agent";
  };

  const record = (codec: Codec, req: http.IncomingMessage, body: unknown, outcome: { response?: unknown; error?: string; durationMs: number }, url: string) => {
    redactor.addHeaders(req.headers);
    redactor.addUrl(req.url);
    try {
      const { rec, handoffs } = runs.recorderFor(req, (c, b) => agentName(req, c, b), codec, body);
      const item = rec.exchange(codec, body, { ...outcome, url });
      if (outcome.error === undefined) handoffs.note(codec.assistantText(item.value), rec.agent, item);
      const calls = outcome.response === undefined ? [] : codec.toolCalls(outcome.response).map((c) => c.name);
      log(`recorded ${rec.agent.name}: ${codec.api} ${String((body as { model?: unknown }).model ?? "?")}${outcome.error ? ` failed (${outcome.error.slice(0, 80)})` : calls.length ? ` → ${calls.join(", ")}` : ""}`);
    } catch (err) {
      log(`not recorded: ${errorText(err)}`);
    }
  };

  /** Sends a request upstream, streams the answer back as it arrives, and records the exchange once it is complete. */
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, url: string, raw: Buffer, fail: (status: number, message: string) => void) => {
    const path = confinedPath(url);
    const { upstream, basePath } = anthropic && req.headers["anthropic-version"] !== undefined ? anthropic : main;
    const codec = req.method === "POST" ? codecForPath(path) : undefined;
    let body: unknown;
    if (codec) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined; // forwarded as is, not recorded
      }
    }
    const target = new URL(upstream.origin);
    target.pathname = (basePath.endsWith("/v1") && path.startsWith("/v1/") ? basePath.slice(0, -3) : basePath) + path;
    target.search = new URL(url, "http://x").search;
    if (target.origin !== upstream.origin || (basePath && target.pathname !== basePath && !target.pathname.startsWith(basePath + "/"))) {
      throw new HttpError(400, "the request path is refused: it leaves the upstream's base path");
    }
    const headers = forwardedHeaders(req.headers);
    headers["accept-encoding"] = "identity";
    if (raw.length) headers["content-length"] = String(raw.length);
    const t0 = performance.now();
    let settled = false; // the failure (error or timeout) is answered once
    const failed = (status: number, message: string) => {
      if (settled) return;
      settled = true;
      if (res.headersSent) res.destroy();
      else fail(status, message);
      if (codec && body && typeof body === "object") record(codec, req, body, { error: message, durationMs: performance.now() - t0 }, target.href);
    };
    const up = (target.protocol === "https:" ? https : http).request(target, { method: req.method, headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, answerHeaders(upRes.headers));
      const got: Buffer[] = [];
      let gotBytes = 0;
      upRes.on("data", (c: Buffer) => {
        res.write(c);
        gotBytes += c.length;
        if (gotBytes <= maxBody) got.push(c);
      });
      upRes.on("end", () => {
        if (settled) return;
        settled = true;
        res.end();
        if (!codec || !body || typeof body !== "object") return;
        const durationMs = performance.now() - t0;
        const text = Buffer.concat(got).toString("utf8");
        const status = upRes.statusCode ?? 0;
        if (gotBytes > maxBody) return record(codec, req, body, { error: `response over ${maxBody >> 20} MB: not recorded`, durationMs }, target.href);
        if (status >= 400) return record(codec, req, body, { error: `HTTP ${status}: ${text.slice(0, 500)}`, durationMs }, target.href);
        const streamed = (body as { stream?: unknown }).stream === true || String(upRes.headers["content-type"] ?? "").includes("text/event-stream");
        let response: unknown;
        try {
          response = streamed ? codec.accumulate(sseData(text)) : JSON.parse(text);
        } catch {
          return record(codec, req, body, { error: "the response is not JSON", durationMs }, target.href);
        }
        record(codec, req, body, { response, durationMs }, target.href);
      });
      upRes.on("error", (err) => failed(502, `upstream ${target.host} failed mid-answer: ${err.message}`));
      upRes.on("aborted", () => failed(502, `upstream ${target.host} closed mid-answer`));
    });
    // connect: the socket must connect in time; then no silence longer than the idle timeout
    up.on("socket", (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        failed(504, `upstream ${target.host} did not accept the connection within ${connectTimeoutMs} ms`);
        up.destroy();
      }, connectTimeoutMs);
      timer.unref();
      socket.once("connect", () => clearTimeout(timer));
      socket.once("close", () => clearTimeout(timer));
    });
    up.setTimeout(idleTimeoutMs, () => {
      failed(504, `upstream ${target.host} sent nothing for ${idleTimeoutMs} ms`);
      up.destroy();
    });
    up.on("error", (err) => failed(502, `upstream ${target.host} failed: ${err.message}`));
    // a client that goes away takes its upstream request with it
    res.on("close", () => {
      if (!res.writableFinished) {
        settled = true;
        up.destroy();
      }
    });
    up.end(raw);
  };

  const server = http.createServer((req, res) => {
    if (!guard.admit(req, res, { key: principalKey(req) })) return;
    const fail = (status: number, message: string) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "causeway_gateway_error", message } }));
    };
    if (!hostAllowed(req.headers.host, host)) {
      req.resume();
      return fail(403, "host not allowed");
    }
    let url = req.url ?? "";
    if (!url.startsWith("/") || url.startsWith("//")) {
      req.resume();
      return fail(400, "the request target must be a path (this is not a forward proxy)");
    }
    if (prefix !== undefined) {
      if (!url.startsWith(prefix + "/")) {
        req.resume();
        return fail(404, "no such path on this gateway");
      }
      url = url.slice(prefix.length);
    }
    // before the body is read: nothing of a refused request is forwarded or recorded
    try {
      checkOrigin(req.headers, opts.allowOrigins);
      confinedPath(url);
      checkJsonBody(req.headers);
    } catch (err) {
      req.resume();
      return fail(err instanceof HttpError ? err.status : 400, (err as Error).message);
    }
    readBody(req, maxBody).then(
      (raw) => {
        runs.begin(req);
        res.once("close", () => runs.settled());
        try {
          forward(req, res, url, raw, fail);
        } catch (err) {
          fail(err instanceof HttpError ? err.status : 400, errorText(err));
        }
      },
      (err) => fail(err instanceof HttpError ? err.status : 400, err instanceof Error ? err.message : String(err)),
    );
  });

  const guard = new ConnectionGuard(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 7789, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    runs: () => runs.folders(),
    async close(outcome?: Record<string, unknown>) {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await runs.close(outcome);
    },
  };
}

/** The data of each server-sent event ("[DONE]" and non-JSON data dropped). */
export function sseData(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data || data === "[DONE]") continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      /* a comment or a keep-alive */
    }
  }
  return out;
}
