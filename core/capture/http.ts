/**
 * HTTP helpers shared by the collector and the gateway: which Host headers a loopback server
 * answers (DNS rebinding), reading a body with a size limit, measuring JSON nesting before parsing,
 * and run ids that are safe folder names.
 */
import type http from "node:http";

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

/** Reads a request body; rejects with 413 as soon as it passes `limit` bytes (announced or sent). */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
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
    req.on("data", (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        reject(new HttpError(413, `body is over the ${limit}-byte limit`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (!done) {
        done = true;
        resolve(Buffer.concat(chunks));
      }
    });
    req.on("error", (err) => {
      if (!done) {
        done = true;
        reject(err);
      }
    });
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
