/**
 * The wire side of re-sending recorded model calls (the decision replay, replay/endpoint-test.ts,
 * and the agentless replay, replay/agentless/): a decision's recorded request rebuilt from its
 * template and context items, an intervention's blocks replaced by a placeholder, where a call
 * goes and the POST itself. Imports no other replay module, so replays of every rung can use it.
 *
 * The URL and the key come from the caller (flags, environment), never from the run: a run file is
 * attacker-controlled, and sending a key to an address it names would leak the key.
 */
import http from "node:http";
import https from "node:https";
import type { DecisionEvent } from "../log/events";
import { RunModel } from "../graph/model";
import { concerns, parseIntervention, removes } from "../specs/grammar";
import { applyEdit } from "../specs/apply";
import { CODECS } from "../adapters/codecs";
import { resultText } from "../adapters/codec-parts";
import type { ApiName, Codec } from "../adapters/codec";
import { getAt, setAt } from "../util/json-path";
import { isRecord } from "../util/guards";
import type { RecordedBlock, RecordedRequest } from "../adapters/shared";
import { cloneJson } from "../adapters/shared";

export class EndpointError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "EndpointError";
  }
}

/** Sends one JSON request, returns the parsed response (throws EndpointError on HTTP errors). */
export type SendFn = (url: string, headers: Record<string, string>, body: unknown) => Promise<unknown>;

/** The recorded request of a decision, rebuilt from its template and its context items. */
export interface RebuiltRequest {
  codec: Codec;
  record: RecordedRequest;
  body: unknown;
  decision: DecisionEvent & { line: number };
}

function validBlock(b: unknown, contexts: number): b is RecordedBlock {
  if (!isRecord(b) || !Array.isArray(b.path) || b.path.length === 0 || b.path.length > 32) return false;
  if (!b.path.every((k) => typeof k === "string" || (typeof k === "number" && Number.isInteger(k) && k >= 0))) return false;
  if (typeof b.context !== "number" || !Number.isInteger(b.context) || b.context < 0 || b.context >= contexts) return false;
  return b.fill === undefined || b.fill === "value" || b.fill === "json";
}

/** Rebuilds the request a decision sent. Throws EndpointError when it was not recorded or can't be rebuilt. */
export function rebuildRequest(m: RunModel, decision: number | string): RebuiltRequest {
  const ev = m.decisions.find((d) => d.seq === Number(decision) || d.id === decision);
  if (!ev)
    throw new EndpointError(
      `no decision ${JSON.stringify(decision)} in the run (its decisions are at seq ${m.decisions.map((d) => d.seq).join(", ") || "none"})`,
    );
  const ref = (ev as unknown as { request?: unknown }).request;
  if (typeof ref !== "string") throw new EndpointError(`decision #${ev.seq} has no recorded request (it was not recorded by an SDK adapter or the gateway)`);
  const record = m.value(ref);
  if (!isRecord(record) || typeof record.api !== "string" || !(record.api in CODECS) || !Array.isArray(record.blocks) || !isRecord(record.body)) {
    throw new EndpointError(`decision #${ev.seq}: its recorded request is missing or malformed (${m.blobProblem(ref) ?? "unexpected shape"})`);
  }
  const ctx = Array.isArray(ev.context) ? ev.context : [];
  const body = cloneJson(record.body);
  for (const b of record.blocks as unknown[]) {
    if (!validBlock(b, ctx.length)) throw new EndpointError(`decision #${ev.seq}: its recorded request has a malformed block`);
    if (!b.fill) continue;
    const value = m.value(ctx[b.context].ref);
    if (value === undefined)
      throw new EndpointError(`decision #${ev.seq}: the content of context item ${b.context} is missing (${m.blobProblem(ctx[b.context].ref)})`);
    if (!setAt(body, b.path, b.fill === "json" ? resultText(value) : value))
      throw new EndpointError(`decision #${ev.seq}: block ${JSON.stringify(b.path)} does not fit the recorded request`);
  }
  return { codec: CODECS[record.api as ApiName], record: record as unknown as RecordedRequest, body, decision: ev };
}

/**
 * The request with every block of the matching context items replaced by a placeholder, or, for an
 * edit (redact:, replace:, span:), with the edit applied to the block's content.
 */
export function withoutBlocks(r: RebuiltRequest, intervention: string): { body: unknown; removed: number; kept: number; edited: number } {
  const iv = parseIntervention(intervention);
  if (iv.guard) throw new EndpointError("guard: fixes act on tool calls; a decision replay has none to guard");
  const ctx = r.decision.context ?? [];
  const body = cloneJson(r.body);
  let removed = 0;
  let kept = 0;
  let edited = 0;
  for (const b of r.record.blocks) {
    const c = ctx[b.context];
    if (c && iv.edit && concerns(iv, c)) {
      const e = applyEdit(iv.edit, getAt(body, b.path));
      if (e.changed && setAt(body, b.path, e.value)) edited++;
      continue;
    }
    if (!c || !removes([iv], c)) continue;
    if (b.keep || c.kind === "output") {
      kept++; // an assistant turn or the tool definitions: removing them would make the request invalid
      continue;
    }
    setAt(body, b.path, r.codec.placeholder(getAt(body, b.path)));
    removed++;
  }
  return { body, removed, kept, edited };
}

const OFFICIAL = { anthropic: "https://api.anthropic.com", openai: "https://api.openai.com/v1" };

/**
 * Refuses to fall back on the official endpoint (with the user's key) for a call the run says was
 * recorded against another upstream: the caller names the endpoint (flag or environment). The
 * recorded address is only ever shown, never used.
 */
export function checkDefaultEndpoint(codec: Codec, recordedUrl: unknown, baseUrl?: string): void {
  const anthropic = codec.api === "anthropic.messages";
  if (baseUrl ?? (anthropic ? process.env.ANTHROPIC_BASE_URL : process.env.OPENAI_BASE_URL)) return;
  if (typeof recordedUrl !== "string") return;
  let recorded: URL;
  try {
    recorded = new URL(recordedUrl);
  } catch {
    return;
  }
  const official = new URL(anthropic ? OFFICIAL.anthropic : OFFICIAL.openai);
  if (recorded.origin === official.origin) return;
  const shown = JSON.stringify((recorded.origin + recorded.pathname).slice(0, 200));
  throw new EndpointError(
    `this call was recorded against ${shown}, not ${official.origin}; say where to send it with --base-url URL (or ${anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL"}): a recorded address is never used, so a run can't choose where your key goes`,
  );
}

/** Where the API's SDK sends a call: the base URL (env or official default) plus the path. */
export function endpointFor(codec: Codec, baseUrl?: string): string {
  const anthropic = codec.api === "anthropic.messages";
  const base = (
    baseUrl ??
    (anthropic ? process.env.ANTHROPIC_BASE_URL : process.env.OPENAI_BASE_URL) ??
    (anthropic ? OFFICIAL.anthropic : OFFICIAL.openai)
  ).replace(/\/+$/, "");
  if (!/^https?:\/\//i.test(base)) throw new EndpointError(`base URL ${JSON.stringify(base)} is not http(s)`);
  // either form of a base URL is accepted, with or without /v1: OpenAI's SDK takes …/v1,
  // Anthropic's takes the host (its path starts with /v1)
  const bare = new URL(base).pathname.replace(/\/+$/, "") === "";
  if (!anthropic && bare) return base + "/v1" + codec.path;
  if (anthropic && /\/v1$/.test(base) && codec.path.startsWith("/v1/")) return base.slice(0, -3) + codec.path;
  return base + codec.path;
}

const MAX_RESPONSE_BYTES = 32 << 20;

/** POSTs JSON with a timeout and a response size limit; retries 429 and 5xx twice. */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs: number): Promise<unknown> {
  const data = Buffer.from(JSON.stringify(body));
  for (let attempt = 0; ; attempt++) {
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = (u.protocol === "https:" ? https : http).request(
        u,
        { method: "POST", headers: { ...headers, "content-length": String(data.length) }, timeout: timeoutMs },
        (resp) => {
          const chunks: Buffer[] = [];
          let size = 0;
          resp.on("data", (c: Buffer) => {
            size += c.length;
            if (size > MAX_RESPONSE_BYTES) req.destroy(new EndpointError(`response over ${MAX_RESPONSE_BYTES >> 20} MB`));
            else chunks.push(c);
          });
          resp.on("end", () => resolve({ status: resp.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          resp.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new EndpointError(`no answer from ${u.host} within ${Math.round(timeoutMs / 1000)} s`)));
      // a network failure is one line naming the host (no stack): an unreachable or unnamed endpoint
      req.on("error", (err: Error & { code?: string }) =>
        reject(err instanceof EndpointError ? err : new EndpointError(`can't reach ${u.host}: ${err.code ?? err.message}`)),
      );
      req.end(data);
    });
    if ((res.status === 429 || res.status >= 500) && attempt < 2) {
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      continue;
    }
    if (res.status >= 400) throw new EndpointError(`${url} answered HTTP ${res.status}: ${res.text.slice(0, 300)}`, res.status);
    try {
      return JSON.parse(res.text);
    } catch {
      throw new EndpointError(`${url} answered with something that is not JSON`);
    }
  }
}
