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
 *
 * This file is the bootstrap: it reads the configuration, builds the runtime and starts recording
 * when imported. The parts, each with the narrow host interface it needs: modules.ts (module
 * hooks), model-calls.ts, links.ts, tool-calls.ts, finish.ts, site.ts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Codec } from "../adapters/codec";
import type { ConversationRecorder } from "../adapters/shared";
import type { Site } from "../log/events";
import { FileSink, MemorySink, NullSink } from "../log/writer";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { parseIntervention } from "../specs/grammar";
import { RunTape } from "../replay/context";
import { Runtime, type Agent } from "../sdk/runtime";
import type { Item } from "../sdk/items";
import { AiSdkHooks, type AiSdkHost, type ModelCallHandle } from "./ai-sdk";
import { patchAgentsSdk, type AgentsSdkHost } from "./openai-agents";
import { loadConfig } from "./config";
import { PRELOAD_TAG, type PreloadConfig } from "../replay/preload-contract";
import { Links } from "./links";
import { ModelCalls, type ModelCallHost } from "./model-calls";
import { ToolCalls, type ToolCallHost } from "./tool-calls";
import { Modules, type ModuleHost } from "./modules";
import { finish, watchChildren, type FinishHost } from "./finish";
import { headerOf, userSite, type Scope } from "./site";

type Obj = Record<string, unknown>;

export class Preload implements AiSdkHost, AgentsSdkHost, ModelCallHost, ToolCallHost, ModuleHost, FinishHost {
  readonly rt: Runtime;
  /** Frameworks that know which of their agents is making the current model call (the OpenAI Agents SDK, LangGraph). */
  readonly agentHints: (() => string | undefined)[] = [];
  readonly als = new AsyncLocalStorage<Scope>();
  readonly problems: string[] = [];
  readonly uncaptured = new Set<string>();
  readonly tape?: RunTape;
  readonly interventions;
  readonly links: Links;
  readonly calls: ModelCalls;
  readonly tools: ToolCalls;
  readonly aiSdk: AiSdkHooks;
  private readonly modules: Modules;
  private readonly children: string[] = [];

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
    this.links = new Links(this.rt);
    this.calls = new ModelCalls(this);
    this.tools = new ToolCalls(this);
    this.aiSdk = new AiSdkHooks(this);
    this.modules = new Modules(this);
    // sites come from the user's call (noted when the client's request started), not from here
    (this.rt as unknown as { site: () => Site | undefined }).site = () => (replay ? undefined : (this.calls.site ?? this.als.getStore()?.site));
  }

  install(): void {
    this.rt.start();
    const calls = this.calls;
    globalThis.fetch = function causewayFetch(input: any, init?: any): Promise<Response> {
      return calls.fetch(input, init);
    } as typeof fetch;
    this.modules.install();
    watchChildren(this.children);
    process.on("exit", (code) => finish(this, this.children, code));
  }

  // ------------------------------------------------------------------------- the parts' hosts

  get trusted(): readonly string[] {
    return this.cfg.trusted;
  }

  hintedAgent(): string | undefined {
    for (const hint of this.agentHints) {
      const name = hint();
      if (name) return name;
    }
    return undefined;
  }

  lastAgent(): string | undefined {
    return this.calls.lastAgent;
  }

  toolFailure(): string | undefined {
    return this.tools.failure;
  }

  unloadedTools(): string[] {
    return this.tools.unloaded();
  }

  patchAgentsSdk(ns: Obj): void {
    patchAgentsSdk(this, ns);
  }

  // ------------------------------------------------------------------------- AiSdkHost, and what the framework patches use

  /** A call of the program into the AI SDK: its site, and its own agent (a nested call is not its caller's agent). */
  enter<T>(agent: string | undefined, headers: unknown, fn: () => T): T {
    const cur = this.als.getStore();
    const scope: Scope = {
      ...cur,
      site: this.cfg.replay ? undefined : (userSite(this.cfg.root) ?? cur?.site),
      agent: headerOf(headers, "x-causeway-agent") ?? agent,
      belowModel: undefined,
    };
    return this.als.run(scope, fn);
  }

  belowModel<T>(fn: () => T): T {
    return this.als.run({ ...this.als.getStore(), belowModel: true }, fn);
  }

  beginCall(codec: Codec, body: Obj, header?: string): ModelCallHandle {
    return this.calls.beginCall(codec, body, header);
  }

  endCall(handle: ModelCallHandle, out: { response?: unknown; error?: string; url?: string }): Item | undefined {
    return this.calls.endCall(handle, out);
  }

  tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link = true, callId?: string): Promise<unknown> {
    return this.tools.tool(name, args, source, untrusted, run, link, callId);
  }

  recorderFor(name: string): ConversationRecorder {
    return this.links.recorderFor(name);
  }

  messageFor(from: Agent, output: Item, to: string): Item {
    return this.links.messageFor(from, output, to);
  }

  outputOf(text: string): { agent: Agent; item: Item } | undefined {
    return this.links.outputOf(text);
  }

  noteOutput(text: string, agent: Agent, item: Item): void {
    this.links.noteOutput(text, agent, item);
  }
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
