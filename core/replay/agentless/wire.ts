/**
 * The wire side of an agentless replay: where calls go (the caller's endpoint and key, never the
 * run's), how a request is edited (blocks replaced so it stays valid, an upstream answer carried
 * into a downstream prompt) and how a turn is appended (the answer, then its tool results, as the
 * provider's message format requires).
 */
import { CODECS } from "../../adapters/codecs";
import type { ApiName, Codec, ToolCallOut } from "../../adapters/codec";
import { getAt, setAt } from "../../util/json-path";
import { checkDefaultEndpoint, endpointFor, EndpointError, postJson, type SendFn } from "../endpoint-replay";
import { cloneJson } from "../../adapters/shared";
import { Redactor } from "../../log/redact";

export interface EndpointOptions {
  /** Base URL for every API (a flag); else OPENAI_BASE_URL / ANTHROPIC_BASE_URL. */
  baseUrl?: string;
  /** The key (from the variable a flag names); else OPENAI_API_KEY / ANTHROPIC_API_KEY. */
  apiKey?: string;
  timeoutMs?: number;
  /** More headers for every call (after the key's). */
  headers?: Record<string, string>;
  /** Replaces the HTTP POST (tests). */
  send?: SendFn;
}

/** Where one API's calls go, with the headers that carry the key. */
export interface Route {
  url: string;
  headers: Record<string, string>;
  send: SendFn;
  /** Keeps the key, and any credential of the URL or the headers, out of what is printed or written. */
  redactor: Redactor;
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);

/**
 * The route of an API's calls from the caller's flags and environment. A run recorded against an
 * address other than the official one is refused unless the caller names the endpoint (the
 * recorded address is shown, never used).
 */
export function routeFor(api: ApiName, recordedUrl: unknown, o: EndpointOptions, env: NodeJS.ProcessEnv = process.env): Route {
  const codec = CODECS[api];
  const anthropic = api === "anthropic.messages";
  checkDefaultEndpoint(codec, recordedUrl, o.baseUrl);
  const url = endpointFor(codec, o.baseUrl);
  const key = o.apiKey ?? (anthropic ? env.ANTHROPIC_API_KEY : env.OPENAI_API_KEY);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(anthropic ? { "anthropic-version": "2023-06-01", ...(key ? { "x-api-key": key } : {}) } : key ? { authorization: `Bearer ${key}` } : {}),
    ...o.headers,
  };
  const redactor = Redactor.fromEnv(env);
  redactor.add(key);
  redactor.addUrl(url);
  redactor.addHeaders(headers);
  const post = o.send ?? ((u: string, h: Record<string, string>, b: unknown) => postJson(u, h, b, o.timeoutMs ?? 120_000));
  const send: SendFn = (u, h, b) =>
    post(u, h, b).catch((err: unknown) => {
      // the key (and any credential in the URL or headers) is never printed, even when echoed back
      const msg = redactor.text(err instanceof Error ? err.message : String(err));
      throw new EndpointError(msg, err instanceof EndpointError ? err.status : undefined);
    });
  return { url, headers, send, redactor };
}

/** A body ready to send: never streamed, never stored by the provider; the pair's seed where the API takes one. */
export function sendable(codec: Codec, body: unknown, seed: number): unknown {
  const b = cloneJson(body) as Record<string, unknown>;
  delete b.stream;
  delete b.stream_options;
  if (codec.api === "openai.responses") b.store = false;
  if (codec.api === "openai.chat") b.seed = seed;
  return b;
}

/** Appends the model's answer and the results of the tools it asked for, as the API's next request holds them. */
export function appendTurn(codec: Codec, body: unknown, response: unknown, results: { call: ToolCallOut; result: unknown; isError: boolean }[]): boolean {
  if (!isObj(body)) return false;
  const blocks = results.map((r) => codec.toolResultBlock(r.call.id, r.result, r.isError));
  switch (codec.api) {
    case "openai.chat": {
      if (!Array.isArray(body.messages)) return false;
      body.messages.push(cloneJson(codec.output(response)), ...blocks);
      return true;
    }
    case "anthropic.messages": {
      if (!Array.isArray(body.messages)) return false;
      body.messages.push(cloneJson(codec.output(response)), { role: "user", content: blocks });
      return true;
    }
    case "openai.responses": {
      if (typeof body.input === "string") body.input = [{ role: "user", content: body.input }];
      if (!Array.isArray(body.input)) return false;
      const out = codec.output(response);
      body.input.push(...(Array.isArray(out) ? (cloneJson(out) as unknown[]) : []), ...blocks);
      return true;
    }
    default:
      return false;
  }
}

/** Replaces every occurrence of `old` inside the string at `path` by `now`; false when it isn't there. */
export function carryInto(body: unknown, path: (string | number)[], old: string, now: string): boolean {
  const v = getAt(body, path);
  if (typeof v !== "string" || !old || !v.includes(old)) return false;
  return setAt(body, path, v.split(old).join(now));
}
