/**
 * The preload: `node --import causeway-vscode/register agent.mjs` records an unmodified program
 * that calls models through the official `openai` / `@anthropic-ai/sdk` clients and tools through
 * MCP (`@modelcontextprotocol/sdk`), and replays it under an intervention.
 *
 * - Model calls are taken where the clients send them (`fetch`, which both clients use), read with
 *   the adapters' codecs and recorded by the adapters' ConversationRecorder: one recorder per
 *   agent, the agent named by an `x-causeway-agent` header, CAUSEWAY_AGENT, or a stable name
 *   derived from the system prompt. The clients' `post` is wrapped (ESM: module hooks; CJS:
 *   Module._load) only to note the user's call site and agent scope for the request it starts.
 * - MCP `Client.callTool` / `readResource` are actions linked (by name and arguments) to the tool
 *   call the model asked for; their results are untrusted inputs named by server, tool and
 *   arguments (`mcp:docs/fetch_doc {"name":"vendor-note"}`) or by resource URI.
 * - Another agent's output sent as a prompt becomes a message between the two agents.
 * - The AI SDK (`ai`) is taken at its language-model layer and tool `execute` (see ai-sdk.ts):
 *   its model calls go through the same {@link Preload.beginCall} / {@link Preload.endCall}, and
 *   the requests its providers send on the wire are not recorded a second time.
 *
 * Replay (CAUSEWAY_REPLAY, set by the replay engine): nothing is written; in every model request
 * the blocks the interventions match are replaced by a placeholder, OpenAI requests carry the
 * pair's seed, tool and MCP calls are served from the recorded run's tape (off-tape: stubbed and
 * counted; live only with liveTools), and a summary (actions, counts, problems) is written to a
 * file for the engine when the program exits.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ChildProcess } from "node:child_process";
import fs from "node:fs";
import Module from "node:module";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { codecForPath, type ApiName, type Codec } from "../adapters/codecs";
import { ConversationRecorder } from "../adapters/shared";
import { canonical, deriveSeed } from "../log/hash";
import type { Site } from "../log/events";
import { FileSink, MemorySink, NullSink } from "../log/writer";
import { memoryTrace } from "../log/trace";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { parseIntervention, removes } from "../specs/grammar";
import { RunTape } from "../replay/engine";
import { Runtime, type Agent, type Item } from "../sdk/runtime";
import { AI_SDK_AGENTS, AI_SDK_ENTRIES, HOOKS_SOURCE, aiSdkEntry, clientKind } from "./hooks";
import { AiSdkHooks, type AiSdkHost, type ModelCallHandle } from "./ai-sdk";
import { patchAgentsSdk } from "./openai-agents";
import { carriedContent, findCarried } from "../adapters/handoffs";
import { agentFromPrompt } from "../adapters/agent-names";
import { loadConfig, PRELOAD_TAG, SUPPORTED, versionOk, type PreloadConfig, type ReplaySummary } from "./config";

type Obj = Record<string, unknown>;

interface Scope {
  site?: Site;
  agent?: string;
  /** Inside a model call taken above the wire (the AI SDK's model layer): fetch lets it through. */
  belowModel?: boolean;
}

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

export class Preload implements AiSdkHost {
  readonly rt: Runtime;
  /** Frameworks that know which of their agents is making the current model call (the OpenAI Agents SDK). */
  readonly agentHints: (() => string | undefined)[] = [];
  private readonly als = new AsyncLocalStorage<Scope>();
  private readonly recorders = new Map<string, ConversationRecorder>();
  private readonly calls = new Map<string, number>();
  /** Text of decision outputs and tool results → the item (to link prompts built from them). */
  private readonly texts = new Map<string, { agent: Agent; item: Item; output: boolean }>();
  private readonly messages = new Map<string, Item>();
  private readonly uncaptured = new Set<string>();
  private readonly children: string[] = [];
  readonly problems: string[] = [];
  private readonly tape?: RunTape;
  private readonly interventions;
  private lastAgent: string | undefined;
  private site: Site | undefined;
  private toolSeq = 0;
  private readonly origFetch: typeof fetch;
  private readonly patched = new WeakSet<object>();
  /** The program's own tool modules: absolute file → export names. */
  private readonly toolFiles = new Map<string, string[]>();
  private readonly wrappedModules = new Map<string, unknown>();
  private readonly aiSdk = new AiSdkHooks(this);
  /** AI SDK entry modules seen (file → supported version). */
  private readonly aiSdkFiles = new Map<string, boolean>();

  constructor(readonly cfg: PreloadConfig) {
    const replay = cfg.replay;
    this.interventions = (replay?.interventions ?? []).map(parseIntervention);
    if (replay) this.tape = new RunTape(new RunModel(readRun(replay.run)));
    this.rt = new Runtime({
      runId: cfg.runId,
      seed: replay?.seed ?? cfg.seed ?? 0,
      sink: replay ? (replay.trace ? new MemorySink() : new NullSink()) : new FileSink(cfg.dir!),
      program: cfg.program,
      models: {},
      tools: {},
      sensitiveTools: cfg.sensitive,
      untrustedTools: cfg.untrusted,
      meta: { recorded_by: PRELOAD_TAG, command: cfg.command ?? null, ...(cfg.tools && Object.keys(cfg.tools).length ? { tool_modules: cfg.tools } : {}) },
      root: cfg.root,
      captureSites: !replay,
      chain: !replay,
      interventions: this.interventions,
    });
    // sites come from the user's call (noted when the client's request started), not from here
    (this.rt as unknown as { site: () => Site | undefined }).site = () => (replay ? undefined : (this.site ?? this.als.getStore()?.site));
    this.origFetch = globalThis.fetch;
    for (const [file, names] of Object.entries(cfg.tools ?? {})) this.toolFiles.set(path.resolve(cfg.root, file), names);
  }

  install(): void {
    this.rt.start();
    const self = this;
    globalThis.fetch = function causewayFetch(input: any, init?: any): Promise<Response> {
      return self.fetch(input, init);
    } as typeof fetch;
    (globalThis as Obj).__causewayPatch = (kind: string, ns: Obj, url: string) => this.patch(kind, ns, url.startsWith("file:") ? fileURLToPath(url) : url);
    (globalThis as Obj).__causewayTool = (name: string, fn: unknown) => (typeof fn === "function" ? this.wrapTool(name, fn as (...a: unknown[]) => unknown) : fn);
    (globalThis as Obj).__causewayAi = (name: string, fn: unknown, url?: string) =>
      typeof fn === "function" && this.aiSdkSupported(url?.startsWith("file:") ? fileURLToPath(url.split("?")[0]) : undefined) ? this.aiSdk.entry(name, fn as (...a: unknown[]) => unknown) : fn;
    this.hookRequire();
    try {
      const tools: Record<string, string[]> = {};
      for (const [file, names] of this.toolFiles) tools[pathToFileURL(file).href] = names;
      (Module as unknown as { register?: (u: string, o?: unknown) => void }).register?.("data:text/javascript," + encodeURIComponent(HOOKS_SOURCE), { data: { tools } });
    } catch (err) {
      this.problems.push(`ES module hooks could not be registered: ${(err as Error).message}`);
    }
    this.watchChildren();
    process.on("exit", (code) => this.finish(code));
  }

  // ------------------------------------------------------------------------- module interception

  private hookRequire(): void {
    const M = Module as unknown as { _load: (...a: unknown[]) => unknown; _resolveFilename: (...a: unknown[]) => string };
    const load = M._load;
    const self = this;
    M._load = function (request: unknown, parent: unknown, isMain: unknown) {
      const exp = load.apply(this, [request, parent, isMain]);
      if (typeof request === "string" && self.toolFiles.size) {
        try {
          const file = M._resolveFilename(request, parent, isMain);
          const names = self.toolFiles.get(file);
          if (names) return self.wrapExports(file, exp as Obj, names, (name, fn) => self.wrapTool(name, fn));
        } catch {
          /* not one of the program's tool modules */
        }
      }
      if (typeof request === "string" && /(^|[/@-])ai($|[/@-])/.test(request)) {
        try {
          const file = M._resolveFilename(request, parent, isMain);
          if (aiSdkEntry(file, (p) => fs.readFileSync(p, "utf8")) && self.aiSdkSupported(file)) return self.wrapExports(file, exp as Obj, [...AI_SDK_ENTRIES, ...AI_SDK_AGENTS], (name, fn) => self.aiSdk.entry(name, fn));
        } catch {
          /* not the AI SDK */
        }
      }
      if (typeof request === "string" && /openai|anthropic|modelcontextprotocol|client/.test(request)) {
        try {
          const file = M._resolveFilename(request, parent, isMain);
          const kind = clientKind(file);
          if (kind) self.patch(kind, exp as Obj, file);
        } catch {
          /* not a file we know */
        }
      }
      return exp;
    };
  }

  private patch(kind: string, ns: Obj, file: string): void {
    const version = packageVersion(file);
    if (version && !versionOk(kind, version)) {
      this.problems.push(`unsupported ${SUPPORTED[kind].name} version ${version} (supported: ${SUPPORTED[kind].range})`);
      return;
    }
    if (kind === "openai-agents") {
      if (!this.patched.has(ns)) patchAgentsSdk(this, ns);
      this.patched.add(ns);
      return;
    }
    for (const v of new Set(Object.values(ns ?? {}))) {
      if (typeof v !== "function" || !v.prototype || this.patched.has(v.prototype)) continue;
      const proto = v.prototype as Obj;
      if (kind !== "mcp" && Object.prototype.hasOwnProperty.call(proto, "post") && typeof proto.post === "function") {
        this.patched.add(proto);
        this.wrapPost(proto);
      }
      if (kind === "mcp" && typeof proto.callTool === "function" && typeof proto.readResource === "function") {
        this.patched.add(proto);
        this.wrapMcp(proto);
      }
    }
  }

  /** Whether the AI SDK at this file is a version the preload supports (a problem is noted once when not). */
  private aiSdkSupported(file: string | undefined): boolean {
    if (!file) return true;
    let ok = this.aiSdkFiles.get(file);
    if (ok === undefined) {
      const version = packageVersion(file);
      ok = !version || versionOk("ai", version);
      if (!ok) this.problems.push(`unsupported ${SUPPORTED.ai.name} version ${version} (supported: ${SUPPORTED.ai.range}); its model calls are recorded on the wire only`);
      this.aiSdkFiles.set(file, ok);
    }
    return ok;
  }

  // ------------------------------------------------------------------------- AiSdkHost

  get trusted(): readonly string[] {
    return this.cfg.trusted;
  }

  /** A call of the program into the AI SDK: its site, and its own agent (a nested call is not its caller's agent). */
  enter<T>(agent: string | undefined, headers: unknown, fn: () => T): T {
    const cur = this.als.getStore();
    const scope: Scope = { ...cur, site: this.cfg.replay ? undefined : (userSite(this.cfg.root) ?? cur?.site), agent: headerOf(headers, "x-causeway-agent") ?? agent, belowModel: undefined };
    return this.als.run(scope, fn);
  }

  belowModel<T>(fn: () => T): T {
    return this.als.run({ ...this.als.getStore(), belowModel: true }, fn);
  }

  /** The client's post: note the caller's site and agent header for the request it starts. */
  private wrapPost(proto: Obj): void {
    const post = proto.post as (...a: unknown[]) => unknown;
    const self = this;
    proto.post = function (p: unknown, opts: unknown) {
      const o = (opts ?? {}) as { headers?: unknown };
      const scope: Scope = { site: userSite(self.cfg.root), agent: headerOf(o.headers, "x-causeway-agent") };
      return self.als.run(scope, () => post.call(this, p, opts));
    };
  }

  // ------------------------------------------------------------------------- model calls

  private async fetch(input: any, init?: any): Promise<Response> {
    this.noteCredentials(input, init);
    if (this.als.getStore()?.belowModel) return this.origFetch(input, init);
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
      this.problems.push(`a model call to ${new URL(url).pathname} could not be read (its body is not JSON)`);
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
    if (this.cfg.replay) return;
    try {
      const r = this.rt.redactor;
      r.addUrl(typeof input === "string" ? input : input instanceof URL ? input.href : input?.url);
      if (input && typeof input === "object" && !(input instanceof URL)) r.addHeaders(input.headers);
      r.addHeaders(init?.headers);
    } catch {
      /* unreadable: nothing to note */
    }
  }

  recorderFor(name: string): ConversationRecorder {
    let r = this.recorders.get(name);
    if (!r) {
      r = new ConversationRecorder(this.rt.agent(name), { link: (v, a) => this.link(v, a), linkCall: (id, part, a) => this.linkCall(id, part, a) });
      this.recorders.set(name, r);
    }
    return r;
  }

  /**
   * Starts one model call, whatever layer it was taken at: its agent (the scope's, a header's,
   * CAUSEWAY_AGENT or the system prompt's), the seed derived for it, and in a replay the request
   * with the interventions' blocks replaced (`sent`).
   */
  beginCall(codec: Codec, body: Obj, header?: string): ModelCall {
    const scope = this.als.getStore();
    const name = scope?.agent ?? header ?? this.hintedAgent() ?? this.cfg.agent ?? agentFromPrompt(codec.blocks(body));
    this.lastAgent = name;
    const rec = this.recorderFor(name);
    const k = this.calls.get(name) ?? 0;
    this.calls.set(name, k + 1);
    const replay = this.cfg.replay;
    const baseSeed = replay ? replay.seed : this.cfg.seed;
    let sent = body;
    if (baseSeed !== undefined && SEEDED.has(codec.api)) sent = { ...sent, seed: deriveSeed(baseSeed, name, k) };
    // tool results the program produced without an intercepted execution
    const asked = new Map(codec.callsInRequest(body).map((c) => [c.id, c.name]));
    for (const b of codec.blocks(body)) if (b.role === "tool" && b.toolCallId && !this.answered(b.toolCallId)) this.uncaptured.add(asked.get(b.toolCallId) ?? "?");
    if (replay && this.interventions.length) {
      const { body: without, removed } = this.without(rec, codec, sent);
      sent = without as Obj;
      this.rt.stats.ablated += removed;
    }
    this.rt.stats.modelCalls++;
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
    const item = this.exchange(c.rec, c.codec, this.cfg.replay ? c.original : c.sent, { response: out.response, durationMs, url: out.url }, c.scope);
    const said = c.codec.assistantText(c.codec.output(out.response));
    if (said && item) this.texts.set(said, { agent: c.rec.agent, item, output: true });
    return item;
  }

  private async modelCall(codec: Codec, url: string, body: Obj, input: any, init: any): Promise<Response> {
    const call = this.beginCall(codec, body, headerOf(init?.headers, "x-causeway-agent"));
    const send = () => this.origFetch(input, { ...init, body: JSON.stringify(call.sent) });
    let res: Response;
    try {
      res = this.cfg.replay ? await withBackoff(send) : await send();
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
      this.problems.push(`the answer to a model call (${codec.api}, agent ${call.rec.agent.name}) could not be parsed`);
      this.endCall(call, { error: "unparsable response", url });
      return again();
    }
    this.endCall(call, { response, url });
    return again();
  }

  private exchange(rec: ConversationRecorder, codec: Codec, body: unknown, out: Parameters<ConversationRecorder["exchange"]>[2], scope?: Scope): Item | undefined {
    this.site = scope?.site;
    try {
      return rec.exchange(codec, body, out);
    } catch (err) {
      this.problems.push(`recording a model call failed: ${errText(err)}`);
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
      if (!item || !block.removable || item.kind === "output" || !removes(this.interventions, item)) continue;
      if (setPath(copy, block.path, codec.placeholder(getPath(copy, block.path)))) removed++;
    }
    return { body: copy, removed };
  }

  private hintedAgent(): string | undefined {
    for (const hint of this.agentHints) {
      const name = hint();
      if (name) return name;
    }
    return undefined;
  }

  /** Some agent's recorder holds a result for this tool call. */
  private answered(id: string): boolean {
    for (const r of this.recorders.values()) if (r.hasResult(id)) return true;
    return false;
  }

  /** A prompt block made of content seen before: another agent's output (a message) or a fetched document. */
  private link(value: unknown, agent: Agent): Item | undefined {
    if (typeof value !== "string" || !value) return undefined;
    const hit = this.texts.get(value);
    if (!hit) return this.carriedMessage(value, agent);
    if (!hit.output) return hit.item;
    return hit.agent === agent ? undefined : this.messageFor(hit.agent, hit.item, agent.name);
  }

  /**
   * A prompt that carries another agent's output inside other text (`"Brief:\n" + brief`, or
   * trimmed): a message from that agent holding the prompt's own content, with the trust of the
   * output it carries and the evidence (`carried: {grade, size}`), recorded once.
   */
  private carriedMessage(value: string, agent: Agent): Item | undefined {
    const outputs = [...this.texts].filter(([, h]) => h.output && h.agent !== agent).map(([text, h]) => ({ text, of: h }));
    const c = findCarried(value, outputs);
    if (!c) return undefined;
    const { agent: from, item } = c.of;
    const key = `${from.name}\u0000${agent.name}\u0000${item.fromEvent}\u0000${value}`;
    let msg = this.messages.get(key);
    if (!msg) {
      msg = from.send(agent.name, carriedContent(from, item, value), { carried: { grade: c.grade, size: c.size } });
      this.messages.set(key, msg);
    }
    return msg;
  }

  /**
   * A tool call of another agent's conversation in this agent's request (a handed-over history):
   * its result is the same item (a fetched document stays that document), the decision that asked
   * for it reaches this agent as a message from that agent.
   */
  private linkCall(id: string, part: "result" | "decision", agent: Agent): Item | undefined {
    for (const r of this.recorders.values()) {
      if (r.agent === agent) continue;
      if (part === "result") {
        const item = r.resultOf(id);
        if (item) return item;
      } else {
        const d = r.decisionOf(id);
        if (d) return this.messageFor(r.agent, d, agent.name);
      }
    }
    return undefined;
  }

  /** The message carrying one decision's output from one agent to another (recorded once). */
  messageFor(from: Agent, output: Item, to: string): Item {
    const key = `${from.name}\u0000${to}\u0000${output.fromEvent}`;
    let msg = this.messages.get(key);
    if (!msg) {
      msg = from.send(to, output);
      this.messages.set(key, msg);
    }
    return msg;
  }

  /** The agent output this text is, if any. */
  outputOf(text: string): { agent: Agent; item: Item } | undefined {
    const hit = this.texts.get(text);
    return hit?.output ? hit : undefined;
  }

  /** Notes content an agent produced, so that a prompt made of it reads as a message from that agent. */
  noteOutput(text: string, agent: Agent, item: Item): void {
    if (text && !this.texts.has(text)) this.texts.set(text, { agent, item, output: true });
  }

  // ------------------------------------------------------------------------- tools (own code, MCP)

  /** A CommonJS module (a tool module, the AI SDK): its named exports wrapped, once. */
  private wrapExports(file: string, exp: Obj, names: string[], wrap: (name: string, fn: (...a: unknown[]) => unknown) => unknown): unknown {
    const have = this.wrappedModules.get(file);
    if (have) return have;
    let out: Obj = exp;
    for (const name of names) {
      const fn = exp?.[name];
      if (typeof fn !== "function") continue;
      const wrapped = wrap(name, fn as (...a: unknown[]) => unknown);
      try {
        out[name] = wrapped;
        if (out[name] !== wrapped) throw new Error("read-only");
      } catch {
        out = out === exp ? Object.assign(Object.create(null), exp) : out;
        out[name] = wrapped;
      }
    }
    this.wrappedModules.set(file, out);
    return out;
  }

  /** A tool function of the program: each call is a recorded action (taped in a replay). Its result is awaited. */
  private wrapTool(name: string, fn: (...a: unknown[]) => unknown): (...a: unknown[]) => Promise<unknown> {
    const self = this;
    return function causewayTool(this: unknown, ...args: unknown[]) {
      const a = args.length === 1 && args[0] && typeof args[0] === "object" && !Array.isArray(args[0]) ? (args[0] as Obj) : { args };
      return self.tool(name, a, `tool:${name} ${canonical(a)}`, !self.cfg.trusted.includes(name), async () => fn.apply(this, args));
    };
  }

  private wrapMcp(proto: Obj): void {
    const callTool = proto.callTool as (...a: unknown[]) => Promise<unknown>;
    const readResource = proto.readResource as (...a: unknown[]) => Promise<unknown>;
    const self = this;
    proto.callTool = function (params: { name?: unknown; arguments?: unknown }, ...rest: unknown[]) {
      const server = serverName(this);
      const name = String(params?.name ?? "");
      const args = (params?.arguments ?? {}) as Obj;
      return self.tool(name, args, `mcp:${server}/${name} ${canonical(args)}`, !self.cfg.trusted.includes(name), () => callTool.call(this, params, ...rest));
    };
    proto.readResource = function (params: { uri?: unknown }, ...rest: unknown[]) {
      const uri = String(params?.uri ?? "");
      return self.tool("read_resource", { uri }, uri, !self.cfg.trusted.includes(uri), () => readResource.call(this, params, ...rest), false);
    };
  }

  /** One tool execution: linked to the model's tool call, served from the tape in a replay. */
  async tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link = true, callId?: string): Promise<unknown> {
    const canon = canonical(args);
    let rec: ConversationRecorder | undefined;
    let call: { id: string; name: string; args: unknown } | undefined;
    if (link && callId) {
      for (const r of this.recorders.values()) {
        call = r.pendingCall(callId);
        if (call) {
          rec = r;
          break;
        }
      }
    }
    if (link && !call) {
      // the call asked for by this name and these arguments (the current agent's first), else by the arguments alone
      const current = this.hintedAgent() ?? this.als.getStore()?.agent;
      const recs = [...this.recorders.values()].sort((a, b) => Number(b.agent.name === current) - Number(a.agent.name === current));
      const same = (c: { args?: unknown }) => canonical(c.args ?? {}) === canon;
      for (const match of [(c: { name: string; args?: unknown }) => c.name === name && same(c), same]) {
        for (const r of recs) {
          const p = r.pendingCalls().find(match);
          if (p) {
            rec = r;
            call = p;
            break;
          }
        }
        if (call) break;
      }
    }
    rec ??= this.recorderFor(this.als.getStore()?.agent ?? this.cfg.agent ?? this.lastAgent ?? "mcp");
    call ??= { id: `causeway-tool-${++this.toolSeq}`, name, args };
    const replay = this.cfg.replay;
    let mode: "live" | "tape" | "stub" = "live";
    let thrown: { err: unknown } | undefined;
    const fn = async () => {
      if (replay) {
        const occ = this.rt.nextOccurrence(`${rec.agent.name}\u0000${call.name}\u0000${canon}`);
        const hit = this.tape!.lookup(rec.agent.name, call.name, canon, occ);
        if (hit) {
          mode = "tape";
          return hit.result;
        }
        this.rt.stats.offTape++;
        if (!replay.liveTools) {
          mode = "stub";
          return { content: [{ type: "text", text: "(no recorded result: causeway replay)" }], isError: true, _unrecorded: true };
        }
      }
      try {
        return await run();
      } catch (err) {
        thrown = { err };
        throw err;
      }
    };
    const cur = this.als.getStore();
    const scope: Scope = { ...cur, site: this.cfg.replay ? undefined : (userSite(this.cfg.root) ?? cur?.site) };
    // the mode is read when the call is recorded: calls run side by side finish in any order
    const { result, item } = await this.als.run(scope, () => rec.runTool(call, fn, { source, untrusted, mode: () => mode }));
    if (thrown) throw thrown.err;
    for (const t of resultTexts(result)) if (!this.texts.has(t)) this.texts.set(t, { agent: rec.agent, item, output: false });
    return result;
  }

  // ------------------------------------------------------------------------- children, end

  private watchChildren(): void {
    const proto = ChildProcess.prototype as unknown as { spawn: (o: { file?: string; args?: string[] }) => unknown };
    const spawn = proto.spawn;
    const self = this;
    proto.spawn = function (o) {
      const stack = new Error().stack ?? "";
      // an MCP stdio server: its tool calls are intercepted in this process
      if (!/[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(stack)) self.children.push([o?.file, ...(o?.args ?? []).slice(1)].filter(Boolean).join(" ").slice(0, 200));
      return spawn.call(this, o);
    };
  }

  private finish(code: number): void {
    const outcome = {
      exit_code: code,
      ...(this.uncaptured.size ? { uncaptured_tool_calls: [...this.uncaptured].sort() } : {}),
      ...(this.children.length ? { child_processes: this.children } : {}),
      ...(this.problems.length ? { problems: this.problems } : {}),
    };
    const replay = this.cfg.replay;
    if (replay) {
      const summary: ReplaySummary = {
        exit_code: code,
        actions: this.rt.actions.map((a) => ({ seq: a.seq, agent: a.agent, tool: a.tool, args: a.args, result: a.result, mode: a.mode, status: a.status })),
        stats: { ...this.rt.stats },
        problems: [...this.problems, ...this.children.map((c) => `the program started a child process (${c}), which a replay can't follow`)],
        uncaptured: [...this.uncaptured],
        ...(this.rt.opts.sink instanceof MemorySink ? { trace: memoryTrace(this.rt.opts.sink.events, this.rt.opts.sink.blobs) } : {}),
      };
      try {
        fs.writeFileSync(replay.out, JSON.stringify(summary));
      } catch {
        /* the engine reports the missing summary */
      }
      return;
    }
    try {
      void this.rt.finish(outcome);
    } catch {
      /* the run folder went away */
    }
  }
}

// ------------------------------------------------------------------------------ helpers

function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 2000) : String(err).slice(0, 2000);
}

function headerOf(h: unknown, name: string): string | undefined {
  if (!h || typeof h !== "object") return undefined;
  try {
    if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? undefined;
    if (Array.isArray(h)) {
      for (const x of h) {
        const v = headerOf(x, name);
        if (v) return v;
      }
      return undefined;
    }
    for (const [k, v] of Object.entries(h as Obj)) if (k.toLowerCase() === name && typeof v === "string" && v) return v;
    // openai's buildHeaders keeps values in a nested structure
    const values = (h as { values?: unknown }).values;
    if (values && typeof (values as Headers).get === "function") return (values as Headers).get(name) ?? undefined;
  } catch {
    /* unreadable headers */
  }
  return undefined;
}

function serverName(client: unknown): string {
  try {
    const v = (client as { getServerVersion?: () => { name?: unknown } | undefined }).getServerVersion?.();
    if (v && typeof v.name === "string" && v.name) return v.name.replace(/[\s|]+/g, "-");
  } catch {
    /* not connected */
  }
  return "mcp";
}

/** The text parts of a tool result (an MCP result's content, or a string). */
function resultTexts(r: unknown): string[] {
  if (typeof r === "string") return r ? [r] : [];
  const content = r && typeof r === "object" ? (r as { content?: unknown; contents?: unknown }).content ?? (r as { contents?: unknown }).contents : undefined;
  if (!Array.isArray(content)) return [];
  return content.map((c) => (c && typeof c === "object" && typeof (c as Obj).text === "string" ? ((c as Obj).text as string) : "")).filter(Boolean);
}

/** A copy of the plain objects and arrays of a value; anything else (bytes, URLs…) is shared. */
function copyPlain(v: unknown): any {
  if (Array.isArray(v)) return v.map(copyPlain);
  if (!v || typeof v !== "object" || Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) out[k] = copyPlain(x);
  return out;
}

/** Server-sent events → the JSON of each `data:` line (ignoring [DONE]). */
function parseSse(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data || data === "[DONE]") continue;
    out.push(JSON.parse(data));
  }
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

function getPath(root: unknown, p: (string | number)[]): unknown {
  let v: unknown = root;
  for (const k of p) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function setPath(root: unknown, p: (string | number)[], value: unknown): boolean {
  const parent = getPath(root, p.slice(0, -1));
  if (parent === null || typeof parent !== "object" || !p.length) return false;
  (parent as Record<string | number, unknown>)[p[p.length - 1]] = value;
  return true;
}

/** The package.json version of the package a file belongs to. */
function packageVersion(file: string): string | undefined {
  let dir = path.dirname(file);
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, "package.json");
    try {
      const j = JSON.parse(fs.readFileSync(pj, "utf8"));
      if (typeof j.name === "string" && typeof j.version === "string") return j.version;
    } catch {
      /* keep looking */
    }
    dir = path.dirname(dir);
  }
  return undefined;
}

let selfFile: string | undefined;

/** The first stack frame in the user's own code (not Node, not node_modules, not this preload). */
export function userSite(root: string): Site | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = saved;
  for (const line of stack.split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    let file = m[1];
    if (file.startsWith("file://")) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    selfFile ??= file;
    if (file === selfFile || !path.isAbsolute(file) || /[\\/]node_modules[\\/]/.test(file)) continue;
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (rel.startsWith("..")) continue;
    return { file: rel, line: Number(m[2]) };
  }
  return undefined;
}

// ------------------------------------------------------------------------------ start

function start(): void {
  const g = globalThis as Obj;
  if (g.__causewayPreload || process.env.CAUSEWAY_DISABLE === "1") return;
  let cfg: PreloadConfig | null;
  try {
    cfg = loadConfig(process.env, process.cwd(), process.argv);
  } catch (err) {
    process.stderr.write(`causeway: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (!cfg) return;
  // child processes of the program are not recorded into this run
  delete process.env.CAUSEWAY_CONFIG;
  process.env.CAUSEWAY_DISABLE = "1";
  const p = new Preload(cfg);
  g.__causewayPreload = p;
  p.install();
}

userSite(process.cwd()); // notes this file's own name for the stack filter
start();
