/**
 * Decision replay over HTTP: re-send one recorded model call (recorded by an SDK adapter or the
 * gateway) to an endpoint, with the blocks an intervention matches replaced by a placeholder (so
 * the request stays valid), against the same request re-sent unchanged (a no-removal control
 * call: hosted models ignore seeds, so the recorded output is not the baseline). The result has
 * the shape of the in-process decision test (scope "decision") and is appended to tests.jsonl.
 *
 * The URL and the key come from the caller (flags, environment), never from the run: a run file is
 * attacker-controlled, and sending a key to an address it names would leak the key.
 */
import http from "node:http";
import https from "node:https";
import { canonical } from "../log/hash";
import type { DecisionEvent } from "../log/events";
import type { RunData } from "../log/reader";
import { appendTest } from "../log/testslog";
import { RunModel } from "../graph/model";
import { concerns, matchesTarget, parseIntervention, parseTarget, removes } from "../specs";
import { applyEdit, recordChanges } from "../interventions";
import { newcombe, sequentialLooks, verdictFor, zFor, type Verdict } from "../stats";
import { bettingNMax, decisionRecord, sequentialBetting } from "../replay/engine";
import { CODECS, getAt, resultText, setAt, type ApiName, type Codec } from "./codecs";
import type { RecordedBlock, RecordedRequest } from "./shared";
import { cloneJson } from "./shared";
import { Redactor } from "../log/redact";

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

export interface EndpointTestOptions {
  /** Seq or id of the decision. */
  decision: number | string;
  intervention: string;
  /** Hit: the output's canonical JSON contains this text. */
  contains?: string;
  /** Hit: a tool call of the response matches these tool=/arg~ clauses. */
  target?: string;
  n?: number;
  nMax?: number;
  /** Betting: no verdict before this many pairs (the CLI's --n). */
  minPairs?: number;
  family?: number;
  minEffect?: number;
  /** Base URL (OpenAI: …/v1 or the bare host, which gets /v1; Anthropic: the host, or …/v1). Default: environment, else the official endpoint. */
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { phase: string; done: number; total: number }) => void;
  send?: SendFn;
  /** "betting" (default: the paired betting sequence, sequential up to nMax, or n) or "newcombe" (the reference's looks). */
  method?: "betting" | "newcombe";
  alpha?: number;
}

/** The recorded request of a decision, rebuilt from its template and its context items. */
export interface RebuiltRequest {
  codec: Codec;
  record: RecordedRequest;
  body: unknown;
  decision: DecisionEvent & { line: number };
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);

function validBlock(b: unknown, contexts: number): b is RecordedBlock {
  if (!isObj(b) || !Array.isArray(b.path) || b.path.length === 0 || b.path.length > 32) return false;
  if (!b.path.every((k) => typeof k === "string" || (typeof k === "number" && Number.isInteger(k) && k >= 0))) return false;
  if (typeof b.context !== "number" || !Number.isInteger(b.context) || b.context < 0 || b.context >= contexts) return false;
  return b.fill === undefined || b.fill === "value" || b.fill === "json";
}

/** Rebuilds the request a decision sent. Throws EndpointError when it was not recorded or can't be rebuilt. */
export function rebuildRequest(m: RunModel, decision: number | string): RebuiltRequest {
  const ev = m.decisions.find((d) => d.seq === Number(decision) || d.id === decision);
  if (!ev) throw new EndpointError(`no decision ${JSON.stringify(decision)} in the run (its decisions are at seq ${m.decisions.map((d) => d.seq).join(", ") || "none"})`);
  const ref = (ev as unknown as { request?: unknown }).request;
  if (typeof ref !== "string") throw new EndpointError(`decision #${ev.seq} has no recorded request (it was not recorded by an SDK adapter or the gateway)`);
  const record = m.value(ref);
  if (!isObj(record) || typeof record.api !== "string" || !(record.api in CODECS) || !Array.isArray(record.blocks) || !isObj(record.body)) {
    throw new EndpointError(`decision #${ev.seq}: its recorded request is missing or malformed (${m.blobProblem(ref) ?? "unexpected shape"})`);
  }
  const ctx = Array.isArray(ev.context) ? ev.context : [];
  const body = cloneJson(record.body);
  for (const b of record.blocks as unknown[]) {
    if (!validBlock(b, ctx.length)) throw new EndpointError(`decision #${ev.seq}: its recorded request has a malformed block`);
    if (!b.fill) continue;
    const value = m.value(ctx[b.context].ref);
    if (value === undefined) throw new EndpointError(`decision #${ev.seq}: the content of context item ${b.context} is missing (${m.blobProblem(ctx[b.context].ref)})`);
    if (!setAt(body, b.path, b.fill === "json" ? resultText(value) : value)) throw new EndpointError(`decision #${ev.seq}: block ${JSON.stringify(b.path)} does not fit the recorded request`);
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
  const base = (baseUrl ?? (anthropic ? process.env.ANTHROPIC_BASE_URL : process.env.OPENAI_BASE_URL) ?? (anthropic ? OFFICIAL.anthropic : OFFICIAL.openai)).replace(/\/+$/, "");
  if (!/^https?:\/\//i.test(base)) throw new EndpointError(`base URL ${JSON.stringify(base)} is not http(s)`);
  // either form of a base URL is accepted, with or without /v1: OpenAI's SDK takes …/v1,
  // Anthropic's takes the host (its path starts with /v1)
  const bare = new URL(base).pathname.replace(/\/+$/, "") === "";
  if (!anthropic && bare) return base + "/v1" + codec.path;
  if (anthropic && /\/v1$/.test(base) && codec.path.startsWith("/v1/")) return base.slice(0, -3) + codec.path;
  return base + codec.path;
}

function authHeaders(codec: Codec, key: string | undefined): Record<string, string> {
  if (codec.api === "anthropic.messages") return { "anthropic-version": "2023-06-01", ...(key ? { "x-api-key": key } : {}) };
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** Prepares a body for re-sending: never streamed, never stored by the provider. */
function sendable(codec: Codec, body: unknown): unknown {
  const b = cloneJson(body) as Record<string, unknown>;
  delete b.stream;
  delete b.stream_options;
  if (codec.api === "openai.responses") b.store = false;
  return b;
}

export async function endpointDecisionTest(run: RunData, opts: EndpointTestOptions): Promise<Record<string, unknown>> {
  const m = new RunModel(run);
  const r = rebuildRequest(m, opts.decision);
  const { codec, decision: ev } = r;
  const why = codec.notReplayable(r.body, m.value(ev.output));
  if (why) throw new EndpointError(`decision #${ev.seq} can't be re-sent: ${why}`);
  if (opts.contains === undefined && opts.target === undefined) throw new EndpointError("say what to measure: --contains TEXT or --target tool=NAME[,arg~TEXT]");
  const target = opts.target !== undefined ? parseTarget(opts.target) : undefined;
  const { body: without, removed: dropped, kept, edited } = withoutBlocks(r, opts.intervention);
  const removed = dropped + edited;
  checkDefaultEndpoint(codec, r.record.url, opts.baseUrl);
  const url = endpointFor(codec, opts.baseUrl);
  const key = opts.apiKey ?? (codec.api === "anthropic.messages" ? process.env.ANTHROPIC_API_KEY : process.env.OPENAI_API_KEY);
  const headers = { "content-type": "application/json", ...authHeaders(codec, key), ...(opts.headers ?? {}) };
  // the key (and any credential of the URL or the headers) is never printed or written, even when the endpoint echoes it
  const redactor = Redactor.fromEnv(process.env);
  redactor.add(key);
  redactor.addUrl(url);
  redactor.addHeaders(headers);
  const sendOnce = opts.send ?? ((u, h, b) => postJson(u, h, b, opts.timeoutMs ?? 120_000));
  const send: SendFn = (u, h, b) =>
    sendOnce(u, h, b).catch((err: unknown) => {
      if (err instanceof Error) err.message = redactor.text(err.message);
      throw err;
    });
  const control = sendable(codec, r.body);
  const treated = sendable(codec, without);
  let calls = 0;
  const hit = async (body: unknown): Promise<boolean> => {
    if (opts.signal?.aborted) throw Object.assign(new Error("cancelled"), { name: "AbortError" });
    calls++;
    const res = await send(url, headers, body);
    if (target) return codec.toolCalls(res).some((c) => matchesTarget(target, { tool: c.name, agent: String(ev.agent), args: canonical(c.args ?? {}), result: "" }));
    return canonical(codec.output(res) ?? null).includes(opts.contains!);
  };
  const minEffect = opts.minEffect ?? 0.2;
  let kWith = 0;
  let kWithout = 0;
  let i = 0;
  let ci: [number, number] = [-1, 1];
  let verdict: Verdict = "inconclusive";
  const what = target ? `tool call ${opts.target}` : `output~${opts.contains}`;
  const r4 = (x: number) => Math.round(x * 10000) / 10000;
  /** The tests.jsonl record, either method: the rates so far and the method's own fields. */
  const record = (plan: number[], fields: Record<string, unknown>) => {
    const q = Math.max(1, i);
    return decisionRecord(ev, { n: i, plan, ci, verdict, minEffect }, {
      intervention: opts.intervention,
      target: `decision#${ev.seq} ${what}`,
      p_with: r4(kWith / q),
      p_without: r4(kWithout / q),
      effect: r4((kWith - kWithout) / q),
      noise: null,
      model_calls: calls,
      removed_blocks: dropped,
      kept_blocks: kept,
      ...(edited ? { edited_blocks: edited, changes: recordChanges(opts.save !== false ? run.dir : undefined, [opts.intervention], (ev.context ?? []).map((c) => ({ ...c, value: m.value(c.ref), fromEvent: c.from_event }))) } : {}),
      endpoint: { api: codec.api, url: redactor.text(url) },
      rung: 1,
      assumptions: ["one recorded call re-sent with and without the item; what the agent would have done next (tools, later calls, other agents) is not replayed"],
      ...fields,
    });
  };
  if ((opts.method ?? "betting") === "betting") {
    const alpha = opts.alpha ?? 0.05 / (opts.family ?? 1);
    const nMax = bettingNMax(opts.n, opts.nMax);
    const o = await sequentialBetting(
      { alpha, minEffect, nMax, minPairs: opts.minPairs, applied: removed > 0, onLook: (n) => opts.onProgress?.({ phase: "decision", done: n, total: nMax }) },
      () => Promise.all([hit(control), hit(treated)]),
      ([a, b]) => {
        kWith += +a;
        kWithout += +b;
        return +a - +b;
      },
    );
    i = o.n;
    verdict = o.verdict;
    ci = verdict === "not-applied" || i === 0 ? [-1, 1] : o.ci;
    const { stopped, p_value, e_value, stop_reason, n_needed: needed } = o;
    const result = record([nMax], {
      p_value,
      e_value,
      alpha,
      stopped,
      stop_reason,
      method: `re-send the recorded request with the item's blocks replaced by a placeholder, against the unchanged request (control call); betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))})`,
    });
    result.looks = i;
    result.n_needed = needed;
    if (opts.save !== false) appendTest(run.dir, redactor.value(result));
    return result;
  }
  const n = opts.n ?? 20;
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * (opts.family ?? 1));
  for (const size of plan) {
    while (i < size) {
      const [a, b] = await Promise.all([hit(control), removed ? hit(treated) : Promise.resolve(false)]);
      kWith += +a;
      kWithout += +b;
      i++;
      opts.onProgress?.({ phase: "decision", done: i, total: plan[plan.length - 1] });
    }
    ci = newcombe(kWith, i, kWithout, i, z);
    verdict = verdictFor(ci, removed > 0, minEffect);
    if (verdict !== "inconclusive" || (plan.length > 1 && i >= 2 * n && Math.abs((kWith - kWithout) / i) <= 0.05)) break;
  }
  const result = record(plan, { method: "re-send the recorded request with the item's blocks replaced by a placeholder, against the unchanged request (control call); Newcombe 95% CI" });
  if (opts.save !== false) appendTest(run.dir, redactor.value(result));
  return result;
}

const MAX_RESPONSE_BYTES = 32 << 20;

/** POSTs JSON with a timeout and a response size limit; retries 429 and 5xx twice. */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs: number): Promise<unknown> {
  const data = Buffer.from(JSON.stringify(body));
  for (let attempt = 0; ; attempt++) {
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = (u.protocol === "https:" ? https : http).request(u, { method: "POST", headers: { ...headers, "content-length": String(data.length) }, timeout: timeoutMs }, (resp) => {
        const chunks: Buffer[] = [];
        let size = 0;
        resp.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new EndpointError(`response over ${MAX_RESPONSE_BYTES >> 20} MB`));
          else chunks.push(c);
        });
        resp.on("end", () => resolve({ status: resp.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        resp.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new EndpointError(`no answer from ${u.host} within ${Math.round(timeoutMs / 1000)} s`)));
      // a network failure is one line naming the host (no stack): an unreachable or unnamed endpoint
      req.on("error", (err: Error & { code?: string }) => reject(err instanceof EndpointError ? err : new EndpointError(`can't reach ${u.host}: ${err.code ?? err.message}`)));
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
