/**
 * The preload's tool calls: the program's own tools declared with --tool (functions and framework
 * tool objects, see framework-tools.ts) and MCP `Client.callTool` / `readResource`. Each execution
 * is an action linked to the model's tool call (by id, else by name and arguments), its result an
 * input named by tool and arguments (an MCP result by server, tool and arguments, a resource by
 * URI); in a replay it is served from the recorded run's tape (off-tape: stubbed and counted, run
 * only with live tools).
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import path from "node:path";
import type { ConversationRecorder } from "../adapters/shared";
import { canonical } from "../log/hash";
import type { RunTape } from "../replay/context";
import type { Runtime } from "../sdk/runtime";
import type { PreloadConfig } from "../replay/preload-contract";
import { toolError, toolKind, wrapFrameworkTool } from "./framework-tools";
import type { Links } from "./links";
import { userSite, type Scope } from "./site";

type Obj = Record<string, unknown>;

/** What the tool calls use of the preload. */
export interface ToolCallHost {
  readonly cfg: PreloadConfig;
  readonly rt: Runtime;
  readonly tape?: RunTape;
  readonly links: Links;
  readonly als: AsyncLocalStorage<Scope>;
  readonly trusted: readonly string[];
  /** The agent a framework says is making the current call, if any. */
  hintedAgent(): string | undefined;
  /** The agent of the latest model call. */
  lastAgent(): string | undefined;
}

export class ToolCalls {
  /** The program's own tool modules: absolute file → export names. */
  readonly toolFiles = new Map<string, string[]>();
  /** Absolute file → the file as declared (for messages); the ones the program loaded. */
  private readonly toolSpecs = new Map<string, string>();
  private readonly toolsLoaded = new Set<string>();
  /** A declared tool that is missing or not a tool: the program is stopped with this. */
  failure: string | undefined;
  private readonly wrappedModules = new Map<string, unknown>();
  private toolSeq = 0;

  constructor(private readonly host: ToolCallHost) {
    for (const [file, names] of Object.entries(host.cfg.tools ?? {})) {
      this.toolFiles.set(path.resolve(host.cfg.root, file), names);
      this.toolSpecs.set(path.resolve(host.cfg.root, file), file);
    }
  }

  get trusted(): readonly string[] {
    return this.host.trusted;
  }

  /** The declared tool modules the program never loaded, as problems. */
  unloaded(): string[] {
    if (this.host.cfg.replay || this.failure) return [];
    return [...this.toolSpecs]
      .filter(([file]) => !this.toolsLoaded.has(file))
      .map(([, spec]) => `the tool module ${spec} (--tool) was never loaded by the program: its tools were not recorded`);
  }

  /** A CommonJS module (a tool module, the AI SDK): its named exports wrapped, once. */
  wrapExports(file: string, exp: Obj, names: string[], wrap: (name: string, fn: (...a: unknown[]) => unknown) => unknown, any = false): unknown {
    const have = this.wrappedModules.get(file);
    if (have) return have;
    let out: Obj = exp;
    for (const name of names) {
      const fn = exp?.[name];
      if (typeof fn !== "function" && !any) continue;
      const wrapped = wrap(name, fn as (...a: unknown[]) => unknown);
      if (wrapped === fn) continue;
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

  /**
   * An export declared with --tool (ESM: from the wrapper module; CJS: Module._load): a function
   * or a framework's tool object, wrapped; anything else, or a missing export, stops the program
   * (exit 2) with what was found, since running it unrecorded would make its results look trusted.
   */
  declaredTool(name: string, value: unknown, exports: string[] | undefined, file: string | undefined): unknown {
    if (file) this.toolsLoaded.add(file);
    const shown = (file && this.toolSpecs.get(file)) ?? (file ? path.relative(this.host.cfg.root, file) : "the tool module");
    const err = toolError(shown, name, value, exports);
    if (err) {
      this.failure = `--tool ${err}`;
      if (!this.host.cfg.quiet) process.stderr.write(`causeway: ${this.failure}\n`);
      process.exit(2);
    }
    return toolKind(value) === "function" ? this.wrapTool(name, value as (...a: unknown[]) => unknown) : wrapFrameworkTool(this, value);
  }

  /** A tool function of the program: each call is a recorded action (taped in a replay). Its result is awaited. */
  private wrapTool(name: string, fn: (...a: unknown[]) => unknown): (...a: unknown[]) => Promise<unknown> {
    const self = this;
    return function causewayTool(this: unknown, ...args: unknown[]) {
      const a = args.length === 1 && args[0] && typeof args[0] === "object" && !Array.isArray(args[0]) ? (args[0] as Obj) : { args };
      return self.tool(name, a, `tool:${name} ${canonical(a)}`, !self.host.trusted.includes(name), async () => fn.apply(this, args));
    };
  }

  wrapMcp(proto: Obj): void {
    const callTool = proto.callTool as (...a: unknown[]) => Promise<unknown>;
    const readResource = proto.readResource as (...a: unknown[]) => Promise<unknown>;
    const self = this;
    proto.callTool = function (params: { name?: unknown; arguments?: unknown }, ...rest: unknown[]) {
      const server = serverName(this);
      const name = String(params?.name ?? "");
      const args = (params?.arguments ?? {}) as Obj;
      return self.tool(name, args, `mcp:${server}/${name} ${canonical(args)}`, !self.host.trusted.includes(name), () => callTool.call(this, params, ...rest));
    };
    proto.readResource = function (params: { uri?: unknown }, ...rest: unknown[]) {
      const uri = String(params?.uri ?? "");
      return self.tool("read_resource", { uri }, uri, !self.host.trusted.includes(uri), () => readResource.call(this, params, ...rest), false);
    };
  }

  /** One tool execution: linked to the model's tool call, served from the tape in a replay. */
  async tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link = true, callId?: string): Promise<unknown> {
    const canon = canonical(args);
    let rec: ConversationRecorder | undefined;
    let call: { id: string; name: string; args: unknown } | undefined;
    if (link && callId) {
      for (const r of this.host.links.all()) {
        call = r.pendingCall(callId);
        if (call) {
          rec = r;
          break;
        }
      }
    }
    if (link && !call) {
      // the call asked for by this name and these arguments (the current agent's first), else by the arguments alone
      const current = this.host.hintedAgent() ?? this.host.als.getStore()?.agent;
      const recs = [...this.host.links.all()].sort((a, b) => Number(b.agent.name === current) - Number(a.agent.name === current));
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
    rec ??= this.host.links.recorderFor(this.host.als.getStore()?.agent ?? this.host.cfg.agent ?? this.host.lastAgent() ?? "mcp");
    call ??= { id: `causeway-tool-${++this.toolSeq}`, name, args };
    const replay = this.host.cfg.replay;
    let mode: "live" | "tape" | "stub" = "live";
    let thrown: { err: unknown } | undefined;
    const fn = async () => {
      if (replay) {
        const occ = this.host.rt.nextOccurrence(`${rec.agent.name}\u0000${call.name}\u0000${canon}`);
        const hit = this.host.tape!.lookup(rec.agent.name, call.name, canon, occ);
        if (hit) {
          mode = "tape";
          return hit.result;
        }
        this.host.rt.stats.offTape++;
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
    const cur = this.host.als.getStore();
    const scope: Scope = { ...cur, site: this.host.cfg.replay ? undefined : (userSite(this.host.cfg.root) ?? cur?.site) };
    // the mode is read when the call is recorded: calls run side by side finish in any order
    const { result, item } = await this.host.als.run(scope, () => rec.runTool(call, fn, { source, untrusted, mode: () => mode }));
    if (thrown) throw thrown.err;
    this.host.links.noteResult(resultTexts(result), rec.agent, item);
    return result;
  }
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
  const content = r && typeof r === "object" ? ((r as { content?: unknown; contents?: unknown }).content ?? (r as { contents?: unknown }).contents) : undefined;
  if (!Array.isArray(content)) return [];
  return content.map((c) => (c && typeof c === "object" && typeof (c as Obj).text === "string" ? ((c as Obj).text as string) : "")).filter(Boolean);
}
