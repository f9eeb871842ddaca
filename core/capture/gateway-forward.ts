/**
 * Forwarding one request the gateway took: to the upstream its client is for, confined to that
 * upstream's base path, the answer streamed back as it arrives and the exchange recorded once it
 * is complete. An upstream that does not connect in time, or goes silent, is answered 504 (or,
 * mid-stream, the client's connection is closed), and the call is recorded as failed.
 */
import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import { codecForPath } from "../adapters/codecs";
import type { Codec } from "../adapters/codec";
import { HttpError } from "../store/http";
import { answerHeaders, forwardedHeaders } from "./gateway-boundary";
import type { ExchangeOutcome, GatewayRecorder } from "./gateway-record";
import { parseSse } from "../util/sse";

/** An upstream and its base path (no trailing slash). */
export interface UpstreamBase {
  upstream: URL;
  basePath: string;
}

export interface ForwardSettings {
  main: UpstreamBase;
  /** Where requests an Anthropic client sends go, when not to `main`. */
  anthropic?: UpstreamBase;
  maxBody: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  recorder: GatewayRecorder;
}

type Fail = (status: number, message: string) => void;

/** The request's codec (a POST to an API path it knows) and its JSON body (undefined: forwarded as is, not recorded). */
function exchangeOf(req: http.IncomingMessage, path: string, raw: Buffer): { codec?: Codec; body: unknown } {
  const codec = req.method === "POST" ? codecForPath(path) : undefined;
  let body: unknown;
  if (codec) {
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      body = undefined; // forwarded as is, not recorded
    }
  }
  return { codec, body };
}

/** The upstream URL of a request's confined path; 400 if it would leave the upstream's base path. */
function targetOf(s: ForwardSettings, req: http.IncomingMessage, path: string, url: string): URL {
  const { upstream, basePath } = s.anthropic && req.headers["anthropic-version"] !== undefined ? s.anthropic : s.main;
  const target = new URL(upstream.origin);
  target.pathname = (basePath.endsWith("/v1") && path.startsWith("/v1/") ? basePath.slice(0, -3) : basePath) + path;
  target.search = new URL(url, "http://x").search;
  if (target.origin !== upstream.origin || (basePath && target.pathname !== basePath && !target.pathname.startsWith(basePath + "/"))) {
    throw new HttpError(400, "the request path is refused: it leaves the upstream's base path");
  }
  return target;
}

/** What a complete answer says: the response (streamed ones accumulated), or why it is not recorded as one. */
function outcomeOf(
  codec: Codec,
  body: object,
  upRes: http.IncomingMessage,
  got: Buffer[],
  gotBytes: number,
  maxBody: number,
): Omit<ExchangeOutcome, "durationMs"> {
  const text = Buffer.concat(got).toString("utf8");
  const status = upRes.statusCode ?? 0;
  if (gotBytes > maxBody) return { error: `response over ${maxBody >> 20} MB: not recorded` };
  if (status >= 400) return { error: `HTTP ${status}: ${text.slice(0, 500)}` };
  const streamed = (body as { stream?: unknown }).stream === true || String(upRes.headers["content-type"] ?? "").includes("text/event-stream");
  try {
    return { response: streamed ? codec.accumulate(sseData(text)) : JSON.parse(text) };
  } catch {
    return { error: "the response is not JSON" };
  }
}

/** The socket must connect within the connect timeout; then no silence longer than the idle timeout. */
function limitUpstream(up: http.ClientRequest, target: URL, s: ForwardSettings, failed: Fail): void {
  up.on("socket", (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => {
      failed(504, `upstream ${target.host} did not accept the connection within ${s.connectTimeoutMs} ms`);
      up.destroy();
    }, s.connectTimeoutMs);
    timer.unref();
    socket.once("connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
  up.setTimeout(s.idleTimeoutMs, () => {
    failed(504, `upstream ${target.host} sent nothing for ${s.idleTimeoutMs} ms`);
    up.destroy();
  });
}

/** Sends a request (its path already confined) upstream, streams the answer back as it arrives, and records the exchange once it is complete. */
export function forward(s: ForwardSettings, req: http.IncomingMessage, res: http.ServerResponse, path: string, url: string, raw: Buffer, fail: Fail): void {
  const { codec, body } = exchangeOf(req, path, raw);
  const target = targetOf(s, req, path, url);
  const headers = forwardedHeaders(req.headers);
  headers["accept-encoding"] = "identity";
  if (raw.length) headers["content-length"] = String(raw.length);
  const t0 = performance.now();
  let settled = false; // the failure (error or timeout) is answered once
  const failed: Fail = (status, message) => {
    if (settled) return;
    settled = true;
    if (res.headersSent) res.destroy();
    else fail(status, message);
    if (codec && body && typeof body === "object") s.recorder.record(codec, req, body, { error: message, durationMs: performance.now() - t0 }, target.href);
  };
  const up = (target.protocol === "https:" ? https : http).request(target, { method: req.method, headers }, (upRes) => {
    res.writeHead(upRes.statusCode ?? 502, answerHeaders(upRes.headers));
    const got: Buffer[] = [];
    let gotBytes = 0;
    upRes.on("data", (c: Buffer) => {
      res.write(c);
      gotBytes += c.length;
      if (gotBytes <= s.maxBody) got.push(c);
    });
    upRes.on("end", () => {
      if (settled) return;
      settled = true;
      res.end();
      if (!codec || !body || typeof body !== "object") return;
      const durationMs = performance.now() - t0;
      s.recorder.record(codec, req, body, { ...outcomeOf(codec, body, upRes, got, gotBytes, s.maxBody), durationMs }, target.href);
    });
    upRes.on("error", (err) => failed(502, `upstream ${target.host} failed mid-answer: ${err.message}`));
    upRes.on("aborted", () => failed(502, `upstream ${target.host} closed mid-answer`));
  });
  limitUpstream(up, target, s, failed);
  up.on("error", (err) => failed(502, `upstream ${target.host} failed: ${err.message}`));
  // a client that goes away takes its upstream request with it
  res.on("close", () => {
    if (!res.writableFinished) {
      settled = true;
      up.destroy();
    }
  });
  up.end(raw);
}

/** The data of each server-sent event ("[DONE]" and non-JSON data, comments and keep-alives, dropped). */
export const sseData = (text: string): unknown[] => parseSse(text, { skipBad: true });
