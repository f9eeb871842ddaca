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
 *
 * This file checks the options and routes a request; forwarding it is core/capture/gateway-forward.ts
 * and recording the exchange core/capture/gateway-record.ts.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { errorText } from "../adapters/shared";
import { HttpError, hostAllowed, readBody } from "../store/http";
import { GatewayRuns } from "./gateway-runs";
import { checkJsonBody, checkOrigin } from "./gateway-boundary";
import { forward, type ForwardSettings, type UpstreamBase } from "./gateway-forward";
import { GatewayRecorder } from "./gateway-record";
import { ConnectionGuard, principalKey, resolveLimits } from "./limits";
import type { GatewayOptions } from "./gateway-options";
import { Redactor } from "../log/redact";

export const GATEWAY_DEFAULTS = {
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 100_000,
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 120_000,
  maxConnections: 256,
} as const;

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

/** An upstream and its base path (no trailing slash). */
function upstreamOf(url: string): UpstreamBase {
  const upstream = new URL(url);
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new Error(`--upstream must be an http(s) URL, got ${url}`);
  return { upstream, basePath: upstream.pathname.replace(/\/+$/, "") };
}

/** The options checked and their defaults filled in; throws on an option out of range. */
function settingsOf(opts: GatewayOptions) {
  const main = upstreamOf(opts.upstream);
  const anthropic = opts.anthropicUpstream ? upstreamOf(opts.anthropicUpstream) : undefined;
  const prefix = opts.pathPrefix?.replace(/\/+$/, "");
  if (prefix !== undefined && !/^\/[A-Za-z0-9_-]{1,128}$/.test(prefix))
    throw new Error(`pathPrefix must be one path segment of letters, digits, '-' and '_', got ${JSON.stringify(opts.pathPrefix)}`);
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
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1 || maxConnections > 1 << 16)
    throw new Error(`maxConnections must be a whole number from 1 to 65536, got ${maxConnections}`);
  const limits = resolveLimits({ headerTimeoutMs, bodyTimeoutMs, maxConnections }, opts);
  return { main, anthropic, prefix, maxBody, connectTimeoutMs, idleTimeoutMs, limits, host: opts.host ?? "127.0.0.1" };
}

/**
 * Routing, before the body is read (nothing of a refused request is forwarded or recorded): the
 * Host, a path target, the secret path prefix, the origin, a path confined to the upstream's base
 * path, a JSON body. Returns the target (prefix removed) and its confined path, or the refusal.
 */
function routeOf(
  req: http.IncomingMessage,
  host: string,
  prefix: string | undefined,
  allowOrigins: readonly string[] | undefined,
): { url: string; path: string } | { status: number; message: string } {
  if (!hostAllowed(req.headers.host, host)) return { status: 403, message: "host not allowed" };
  let url = req.url ?? "";
  if (!url.startsWith("/") || url.startsWith("//")) return { status: 400, message: "the request target must be a path (this is not a forward proxy)" };
  if (prefix !== undefined) {
    if (!url.startsWith(prefix + "/")) return { status: 404, message: "no such path on this gateway" };
    url = url.slice(prefix.length);
  }
  try {
    checkOrigin(req.headers, allowOrigins);
    const path = confinedPath(url);
    checkJsonBody(req.headers);
    return { url, path };
  } catch (err) {
    return { status: err instanceof HttpError ? err.status : 400, message: (err as Error).message };
  }
}

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const s = settingsOf(opts);
  // the credentials of every request seen (and the gateway's own environment) never reach a run or a log line
  const redactor = Redactor.fromEnv(process.env);
  for (const key of Object.values(opts.agentKeys ?? {})) redactor.add(key);
  const log = (line: string) => opts.log?.(redactor.text(line));
  const upstreamMeta = (u: UpstreamBase) => u.upstream.origin + u.basePath;
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
    meta: { upstream: upstreamMeta(s.main), ...(s.anthropic ? { anthropic_upstream: upstreamMeta(s.anthropic) } : {}), ...(opts.meta ?? {}) },
    redactor,
    now: opts.now,
  });
  const fw: ForwardSettings = { ...s, recorder: new GatewayRecorder(runs, redactor, opts.agentKeys ?? {}, log) };

  const server = http.createServer((req, res) => {
    if (!guard.admit(req, res, { key: principalKey(req) })) return;
    const fail = (status: number, message: string) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "causeway_gateway_error", message } }));
    };
    const route = routeOf(req, s.host, s.prefix, opts.allowOrigins);
    if ("status" in route) {
      req.resume();
      return fail(route.status, route.message);
    }
    readBody(req, s.maxBody).then(
      (raw) => {
        runs.begin(req);
        res.once("close", () => runs.settled());
        try {
          forward(fw, req, res, route.path, route.url, raw, fail);
        } catch (err) {
          fail(err instanceof HttpError ? err.status : 400, errorText(err));
        }
      },
      (err) => fail(err instanceof HttpError ? err.status : 400, err instanceof Error ? err.message : String(err)),
    );
  });

  const guard = new ConnectionGuard(server, s.limits);
  return listen(server, s.host, opts.port ?? 7789, runs);
}

/** Listens, and hands back the gateway: its URL, its runs, and a close that ends them. */
async function listen(server: http.Server, host: string, port0: number, runs: GatewayRuns): Promise<Gateway> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port0, host, () => resolve());
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
