/**
 * The gateway's HTTP boundary: which requests a loopback proxy that holds a user's API key may take
 * at all, and which headers cross it in each direction.
 *
 * A web page can send a "simple" cross-origin POST (`text/plain`, no preflight) to any loopback
 * port; the browser marks it with `Origin` (and `Sec-Fetch-Site`). The gateway's clients are
 * programs (SDKs, curl, the preload), which send neither, and it serves no page, so every request
 * a browser marks as coming from a page is refused with 403, whatever the page:
 * - `Origin: null` comes from sandboxed frames, `file:` and `data:` pages: any hostile page can
 *   send it;
 * - loopback origins (`http://localhost:3000`) are other local web servers — a dev server, a
 *   notebook — and a page one of them serves is no more trusted than any other page;
 * - only the origins named in `allowOrigins` pass (a browser-based agent its user vouches for).
 * A request with a body must say it is JSON (`application/json`, optionally `; charset=utf-8`):
 * anything else is refused with 415, which also keeps out every body a page can send without a
 * preflight. Both checks come before the body is read, so nothing is forwarded or recorded.
 */
import type http from "node:http";
import { HttpError } from "../store/http";

/** Headers of one connection (RFC 9110 §7.6.1), never forwarded in either direction. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade",
]);
/** Set by the gateway itself for the upstream. */
const SET_BY_GATEWAY = new Set(["host", "content-length", "accept-encoding"]);

/** Refuses (403) a request a browser sent on behalf of a page: an `Origin` not in `allowOrigins`, or a cross-site `Sec-Fetch-Site`. */
export function checkOrigin(headers: http.IncomingHttpHeaders, allowOrigins: readonly string[] = []): void {
  const origin = headers.origin;
  if (origin !== undefined) {
    const o = Array.isArray(origin) ? origin.join(",") : origin;
    if (!allowOrigins.some((a) => a.toLowerCase() === o.trim().toLowerCase())) {
      throw new HttpError(
        403,
        `requests from web pages are refused (Origin: ${JSON.stringify(o.slice(0, 100))}); the gateway takes requests from programs only`,
      );
    }
    return;
  }
  const site = headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") throw new HttpError(403, `requests from web pages are refused (Sec-Fetch-Site: ${site})`);
}

/** Refuses (415) a request with a body that is not declared JSON: `application/json`, optionally with `charset=utf-8`. */
export function checkJsonBody(headers: http.IncomingHttpHeaders): void {
  const length = headers["content-length"];
  const hasBody = headers["transfer-encoding"] !== undefined || (length !== undefined && length.trim() !== "0");
  if (!hasBody) return;
  const type = headers["content-type"] ?? "";
  const [media, ...params] = type.split(";").map((p) => p.trim().toLowerCase());
  const paramsOk = params.every((p) => /^charset\s*=\s*"?utf-?8"?$/.test(p));
  if (media !== "application/json" || !paramsOk) {
    throw new HttpError(415, `the body must be JSON sent as content-type: application/json (got ${JSON.stringify(type.slice(0, 100)) || "none"})`);
  }
}

/** The header names a `Connection` header lists: hop-by-hop for this message only. */
function connectionNames(headers: http.IncomingHttpHeaders): Set<string> {
  const c = headers.connection;
  const text = Array.isArray(c) ? c.join(",") : (c ?? "");
  return new Set(
    text
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * What is forwarded upstream from a client's headers: not hop-by-hop ones, not those the
 * `Connection` header names, not `X-Forwarded-*` / `Forwarded` / `Via` (the gateway is no proxy
 * that vouches for a client's address), not the gateway's own `x-causeway-*`.
 */
export function forwardedHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const named = connectionNames(headers);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || SET_BY_GATEWAY.has(k) || named.has(k)) continue;
    if (k.startsWith("x-forwarded-") || k === "forwarded" || k === "via" || k.startsWith("x-causeway-")) continue;
    out[k] = v;
  }
  return out;
}

/**
 * What is passed back to the client from the upstream's answer: not hop-by-hop headers or those
 * its `Connection` names, and never CORS (`access-control-*`) or cookies (`set-cookie`), which
 * would let a page read the answer or plant state for the gateway's origin.
 */
export function answerHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const named = connectionNames(headers);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.has(k) || k === "content-length") continue;
    if (k.startsWith("access-control-") || k === "set-cookie" || k === "set-cookie2") continue;
    out[k] = v;
  }
  if (headers["content-length"] && !headers["transfer-encoding"]) out["content-length"] = headers["content-length"];
  return out;
}
