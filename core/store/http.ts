/**
 * HTTP helpers shared by the collector and the gateway: which Host headers a loopback server
 * answers (DNS rebinding), reading a body with a size limit, measuring JSON nesting before parsing,
 * and run ids that are safe folder names.
 */
import type http from "node:http";
import { parseLossless, type JsonValue } from "../log/pyjson";

/** A run id that is a safe folder name: letters, digits, `._-`, at most 128, not starting with a dot. */
export const RUN_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

export function isLoopbackHost(h: string): boolean {
  return LOOPBACK_NAMES.has(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h.endsWith(".localhost");
}

/** The host name of a Host header ("127.0.0.1:7788" → "127.0.0.1", "[::1]:80" → "::1"), lower-cased. */
export function hostName(header: string | undefined): string {
  if (!header) return "";
  const h = header.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined);
  const colon = h.lastIndexOf(":");
  return colon > 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

/**
 * May a server bound to `bound` answer a request with this Host header? On a loopback bind only
 * loopback names are answered, which stops a web page that rebinds its own name to 127.0.0.1 from
 * reaching the server. Bound elsewhere, loopback names, the bound address and `extra` are.
 */
export function hostAllowed(header: string | undefined, bound: string, extra: readonly string[] = []): boolean {
  const h = hostName(header);
  if (!h) return false;
  if (isLoopbackHost(h)) return true;
  if (isLoopbackHost(bound.toLowerCase())) return false;
  return h === bound.toLowerCase() || extra.map((x) => x.toLowerCase()).includes(h);
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** Bytes held by the bodies being read at once, shared by the requests of one server. */
export interface BodyPool {
  used: number;
  max: number;
}

/**
 * Reads a request body; rejects with 413 as soon as it passes `limit` bytes (announced or sent),
 * and with 503 when the bodies being read at once would hold more than `pool.max` bytes (the
 * client may retry; HttpSink does).
 */
export function readBody(req: http.IncomingMessage, limit: number, pool?: BodyPool): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const announced = Number(req.headers["content-length"]);
    if (Number.isFinite(announced) && announced > limit) {
      reject(new HttpError(413, `body of ${announced} bytes is over the ${limit}-byte limit`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      done = true;
      if (pool) pool.used -= size;
    };
    req.on("data", (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (pool) pool.used += c.length;
      if (size > limit) {
        finish();
        reject(new HttpError(413, `body is over the ${limit}-byte limit`));
        req.resume();
        return;
      }
      if (pool && pool.used > pool.max) {
        finish();
        reject(new HttpError(503, "the server is busy receiving other bodies; retry later"));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (!done) {
        finish();
        resolve(Buffer.concat(chunks));
      }
    });
    const fail = (err: Error) => {
      if (!done) {
        finish();
        reject(err);
      }
    };
    req.on("error", fail);
    req.on("close", () => fail(new HttpError(400, "the client closed the connection before its body ended")));
  });
}

/** How deeply the JSON text nests objects and arrays (strings are skipped), counted without parsing. */
export function jsonDepth(buf: Uint8Array, stopAt = Infinity): number {
  let depth = 0;
  let max = 0;
  let inStr = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inStr) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inStr = false;
    } else if (c === 0x22) inStr = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Writes a JSON answer with the headers every answer carries. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(data.length),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  });
  res.end(data);
}

/** What one request body may cost to parse (checked by {@link scanJson} before parsing). */
export interface JsonBudget {
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /**
   * Longest number literal, in characters. Python (3.11+) refuses to read an integer of more than
   * 4300 digits, and turning a huge literal into a bigint and back costs time that grows faster
   * than its length, so one line of digits could hold the server busy for a minute.
   */
  maxNumberChars: number;
  /** Most values (numbers, strings, literals, objects, arrays) in the whole body: the parse work. */
  maxValues: number;
}

export const DEFAULT_JSON_BUDGET: JsonBudget = { maxDepth: 64, maxNumberChars: 4300, maxValues: 2_000_000 };

/**
 * Checks, in one linear pass without parsing, that a JSON text stays within `budget`; returns
 * what is over it (or undefined). Strings are skipped; only structure and literals are counted.
 */
export function scanJson(buf: Uint8Array, budget: JsonBudget): { status: 413 | 422; message: string } | undefined {
  let depth = 0;
  let values = 0;
  let numRun = 0;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    // a literal outside strings: a number, true, false, null, NaN, Infinity (or garbage the parser refuses)
    const word = (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
    if (word) {
      if (numRun === 0) values++;
      if (++numRun > budget.maxNumberChars) return { status: 422, message: `a number in the body is longer than ${budget.maxNumberChars} characters` };
    } else {
      numRun = 0;
      if (c === 0x22) {
        values++;
        for (i++; i < buf.length; i++) {
          const s = buf[i];
          if (s === 0x5c) i++;
          else if (s === 0x22) break;
        }
      } else if (c === 0x7b || c === 0x5b) {
        values++;
        if (++depth > budget.maxDepth) return { status: 422, message: `the body nests deeper than ${budget.maxDepth} levels` };
      } else if (c === 0x7d || c === 0x5d) depth--;
    }
    if (values > budget.maxValues)
      return { status: 413, message: `the body holds more than ${budget.maxValues} JSON values (the parse budget of one request)` };
  }
  return undefined;
}

/** Reads a JSON body within the size limit, the shared pool and the parse budget (413/422/503), then parses it (400 if not JSON). */
export async function readJsonBody(req: http.IncomingMessage, limit: number, budget: JsonBudget, pool?: BodyPool): Promise<JsonValue> {
  const buf = await readBody(req, limit, pool);
  const over = scanJson(buf, budget);
  if (over) throw new HttpError(over.status, over.message);
  try {
    return parseLossless(buf.toString("utf8"));
  } catch (err) {
    throw new HttpError(400, `the body is not JSON (${(err as Error).message})`);
  }
}
