/**
 * The preload's model calls: requests the program sends through the global `fetch` to a model API
 * (read with the adapters' codecs), and calls taken above the wire (the AI SDK's model layer),
 * go through one begin/end pair: the agent (the scope's, a header's, a framework's hint,
 * CAUSEWAY_AGENT or the system prompt's), the seed derived per agent and call, in a replay the
 * interventions' blocks replaced by a placeholder, and the exchange recorded by the agent's
 * ConversationRecorder.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import { performance } from "node:perf_hooks";
import { codecForPath } from "../adapters/codecs";
import type { ApiName, Codec } from "../adapters/codec";
import type { ConversationRecorder } from "../adapters/shared";
import { agentFromPrompt } from "../adapters/agent-names";
import { deriveSeed } from "../log/hash";
import type { Site } from "../log/events";
import type { Item } from "../sdk/items";
import type { Runtime } from "../sdk/runtime";
import { removes, type Intervention } from "../specs/grammar";
import type { ModelCallHandle } from "./ai-sdk";
import type { PreloadConfig } from "../replay/preload-contract";
import type { Links } from "./links";
import { errText, headerOf, type Scope } from "./site";
import { parseSse } from "../util/sse";
import { getAt, setAt } from "../util/json-path";

type Obj = Record<string, unknown>;

/** One model call between beginCall and endCall. */
interface ModelCall extends ModelCallHandle {
  codec: Codec;
  rec: ConversationRecorder;
  original: Obj;
  sent: Obj;
  scope?: Scope;
  t0: number;
}

/** APIs whose requests take a seed (derived per agent and call from the run's or the pair's seed). */
const SEEDED = new Set<ApiName>(["openai.chat", "ai-sdk.model"]);

/** What the model calls use of the preload. */
export interface ModelCallHost {
  readonly cfg: PreloadConfig;
  readonly rt: Runtime;
  readonly links: Links;
  readonly als: AsyncLocalStorage<Scope>;
  readonly interventions: readonly Intervention[];
  readonly problems: string[];
  /** Tools whose results reached a model without an intercepted execution. */
  readonly uncaptured: Set<string>;
  /** The agent a framework says is making the current call, if any. */
  hintedAgent(): string | undefined;
}

export class ModelCalls {
  /** The agent of the latest model call (tool calls outside any scope are its). */
  lastAgent: string | undefined;
  /** The site of the call being recorded (read by the runtime). */
  site: Site | undefined;
  private readonly calls = new Map<string, number>();
  private readonly origFetch: typeof fetch = globalThis.fetch;

  constructor(private readonly host: ModelCallHost) {}

  /** The global fetch the program gets: model requests recorded, anything else passed through. */
  async fetch(input: any, init?: any): Promise<Response> {
    this.noteCredentials(input, init);
    if (this.host.als.getStore()?.belowModel) return this.origFetch(input, init);
    let url: string;
    try {
      url = typeof input === "string" ? input : input instanceof URL ? input.href : String(input?.url ?? "");
    } catch {
      return this.origFetch(input, init);
    }
    const method = String(init?.method ?? input?.method ?? "GET").toUpperCase();
    let codec: Codec | undefined;
    try {
      codec = method === "POST" ? codecForPath(new URL(url).pathname) : undefined;
    } catch {
      codec = undefined;
    }
    if (!codec || typeof init?.body !== "string") return this.origFetch(input, init);
    let body: Obj;
    try {
      body = JSON.parse(init.body);
    } catch {
      this.host.problems.push(`a model call to ${new URL(url).pathname} could not be read (its body is not JSON)`);
      return this.origFetch(input, init);
    }
    if (!body || typeof body !== "object" || typeof body.model !== "string") return this.origFetch(input, init);
    return this.modelCall(codec, url, body, input, init);
  }

  /**
   * The credentials a request of the program carries (its credential headers, the credential
   * parameters of its URL) are redacted from everything this run records, whatever answers it.
   */
  private noteCredentials(input: any, init?: any): void {
    if (this.host.cfg.replay) return;
    try {
      const r = this.host.rt.redactor;
      r.addUrl(typeof input === "string" ? input : input instanceof URL ? input.href : input?.url);
      if (input && typeof input === "object" && !(input instanceof URL)) r.addHeaders(input.headers);
      r.addHeaders(init?.headers);
    } catch {
      /* unreadable: nothing to note */
    }
  }

  /**
   * Starts one model call, whatever layer it was taken at: its agent (the scope's, a header's,
   * CAUSEWAY_AGENT or the system prompt's), the seed derived for it, and in a replay the request
   * with the interventions' blocks replaced (`sent`).
   */
  beginCall(codec: Codec, body: Obj, header?: string): ModelCall {
    const scope = this.host.als.getStore();
    const name = scope?.agent ?? header ?? this.host.hintedAgent() ?? this.host.cfg.agent ?? agentFromPrompt(codec.blocks(body));
    this.lastAgent = name;
    const rec = this.host.links.recorderFor(name);
    const k = this.calls.get(name) ?? 0;
    this.calls.set(name, k + 1);
    const replay = this.host.cfg.replay;
    const baseSeed = replay ? replay.seed : this.host.cfg.seed;
    let sent = body;
    if (baseSeed !== undefined && SEEDED.has(codec.api)) sent = { ...sent, seed: deriveSeed(baseSeed, name, k) };
    // tool results the program produced without an intercepted execution
    const asked = new Map(codec.callsInRequest(body).map((c) => [c.id, c.name]));
    for (const b of codec.blocks(body))
      if (b.role === "tool" && b.toolCallId && !this.host.links.answered(b.toolCallId)) this.host.uncaptured.add(asked.get(b.toolCallId) ?? "?");
    if (replay && this.host.interventions.length) {
      const { body: without, removed } = this.without(rec, codec, sent);
      sent = without as Obj;
      this.host.rt.stats.ablated += removed;
    }
    this.host.rt.stats.modelCalls++;
    return { codec, rec, original: body, sent, scope, t0: performance.now() };
  }

  /** Records a model call begun with {@link beginCall}: its answer, or its failure. */
  endCall(handle: ModelCallHandle, out: { response?: unknown; error?: string; url?: string }): Item | undefined {
    const c = handle as ModelCall;
    const durationMs = performance.now() - c.t0;
    if (out.error !== undefined) {
      this.exchange(c.rec, c.codec, c.sent, { error: out.error, durationMs, url: out.url }, c.scope);
      return undefined;
    }
    const item = this.exchange(c.rec, c.codec, this.host.cfg.replay ? c.original : c.sent, { response: out.response, durationMs, url: out.url }, c.scope);
    const said = c.codec.assistantText(c.codec.output(out.response));
    if (said && item) this.host.links.noteDecision(said, c.rec.agent, item);
    return item;
  }

  private async modelCall(codec: Codec, url: string, body: Obj, input: any, init: any): Promise<Response> {
    const call = this.beginCall(codec, body, headerOf(init?.headers, "x-causeway-agent"));
    const send = () => this.origFetch(input, { ...init, body: JSON.stringify(call.sent) });
    let res: Response;
    try {
      res = this.host.cfg.replay ? await withBackoff(send) : await send();
    } catch (err) {
      this.endCall(call, { error: errText(err), url });
      throw err;
    }
    const text = await res.text();
    const headers = new Headers(res.headers);
    headers.delete("content-encoding");
    headers.delete("content-length");
    const again = () => new Response(text, { status: res.status, statusText: res.statusText, headers });
    if (!res.ok) {
      this.endCall(call, { error: `HTTP ${res.status}: ${text.slice(0, 300)}`, url });
      return again();
    }
    let response: unknown;
    const streamed = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    try {
      response = streamed ? codec.accumulate(parseSse(text)) : JSON.parse(text);
    } catch {
      this.host.problems.push(`the answer to a model call (${codec.api}, agent ${call.rec.agent.name}) could not be parsed`);
      this.endCall(call, { error: "unparsable response", url });
      return again();
    }
    this.endCall(call, { response, url });
    return again();
  }

  private exchange(
    rec: ConversationRecorder,
    codec: Codec,
    body: unknown,
    out: Parameters<ConversationRecorder["exchange"]>[2],
    scope?: Scope,
  ): Item | undefined {
    this.site = scope?.site;
    try {
      return rec.exchange(codec, body, out);
    } catch (err) {
      this.host.problems.push(`recording a model call failed: ${errText(err)}`);
      return undefined;
    } finally {
      this.site = undefined;
    }
  }

  /** The request with the blocks of matching context items replaced by a placeholder. */
  private without(rec: ConversationRecorder, codec: Codec, body: Obj): { body: unknown; removed: number } {
    const copy = copyPlain(body);
    let removed = 0;
    for (const { block, item } of rec.itemsFor(codec, body)) {
      if (!item || !block.removable || item.kind === "output" || !removes(this.host.interventions, item)) continue;
      if (setAt(copy, block.path, codec.placeholder(getAt(copy, block.path)))) removed++;
    }
    return { body: copy, removed };
  }
}

/** A copy of the plain objects and arrays of a value; anything else (bytes, URLs…) is shared. */
function copyPlain(v: unknown): any {
  if (Array.isArray(v)) return v.map(copyPlain);
  if (!v || typeof v !== "object" || Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) out[k] = copyPlain(x);
  return out;
}

async function withBackoff(send: () => Promise<Response>): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await send();
    if ((res.status === 429 || res.status >= 500) && attempt < 5) {
      await res.arrayBuffer().catch(() => undefined);
      const after = Number(res.headers.get("retry-after"));
      const wait = Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 30_000) : 250 * 2 ** attempt * (1 + Math.random());
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    return res;
  }
}
