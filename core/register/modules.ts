/**
 * The preload's module interception: ES modules through the module hooks (hooks.ts, on Node's
 * loader thread, which hand the preload a client module's exports, a wrapper of a declared tool
 * module or of the AI SDK), CommonJS through `Module._load`. A client's `post` is wrapped only to
 * note the user's call site and agent header for the request it starts; MCP clients, the OpenAI
 * Agents SDK and LangGraph are patched by their own parts.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import Module from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { AI_SDK_AGENTS, AI_SDK_ENTRIES, HOOKS_SOURCE, aiSdkEntry, clientKind } from "./hooks";
import type { AiSdkHooks } from "./ai-sdk";
import { SUPPORTED, versionOk } from "./config";
import type { PreloadConfig } from "../replay/preload-contract";
import { patchLangGraph } from "./langgraph";
import { patchLlamaIndex, patchMastra } from "./framework-agents";
import type { ToolCalls } from "./tool-calls";
import { headerOf, packageVersion, userSite, type Scope } from "./site";

type Obj = Record<string, unknown>;

/** What the module interception uses of the preload. */
export interface ModuleHost {
  readonly cfg: PreloadConfig;
  readonly als: AsyncLocalStorage<Scope>;
  readonly problems: string[];
  readonly tools: ToolCalls;
  readonly aiSdk: AiSdkHooks;
  readonly agentHints: (() => string | undefined)[];
  /** The OpenAI Agents SDK's core module: its classes patched. */
  patchAgentsSdk(ns: Obj): void;
}

export class Modules {
  private readonly patched = new WeakSet<object>();
  /** AI SDK entry modules seen (file → supported version). */
  private readonly aiSdkFiles = new Map<string, boolean>();

  constructor(private readonly host: ModuleHost) {}

  /** Takes the globals the module hooks call, hooks `require`, and registers the ES module hooks. */
  install(): void {
    const g = globalThis as Obj;
    const file = (url: string | undefined) => (url?.startsWith("file:") ? fileURLToPath(url.split("?")[0]) : undefined);
    g.__causewayPatch = (kind: string, ns: Obj, url: string) => this.patch(kind, ns, file(url) ?? url);
    g.__causewayTool = (name: string, value: unknown, ns?: Obj, url?: string) =>
      this.host.tools.declaredTool(name, value, ns ? Object.keys(ns) : undefined, file(url));
    g.__causewayAi = (name: string, fn: unknown, url?: string) =>
      typeof fn === "function" && this.aiSdkSupported(file(url)) ? this.host.aiSdk.entry(name, fn as (...a: unknown[]) => unknown) : fn;
    this.hookRequire();
    try {
      const tools: Record<string, string[]> = {};
      for (const [f, names] of this.host.tools.toolFiles) tools[pathToFileURL(f).href] = names;
      (Module as unknown as { register?: (u: string, o?: unknown) => void }).register?.("data:text/javascript," + encodeURIComponent(HOOKS_SOURCE), {
        data: { tools },
      });
    } catch (err) {
      this.host.problems.push(`ES module hooks could not be registered: ${(err as Error).message}`);
    }
  }

  private hookRequire(): void {
    const M = Module as unknown as { _load: (...a: unknown[]) => unknown; _resolveFilename: (...a: unknown[]) => string };
    const load = M._load;
    const self = this;
    M._load = function (request: unknown, parent: unknown, isMain: unknown) {
      const exp = load.apply(this, [request, parent, isMain]);
      if (typeof request === "string" && self.host.tools.toolFiles.size) {
        try {
          const file = M._resolveFilename(request, parent, isMain);
          const names = self.host.tools.toolFiles.get(file);
          if (names) {
            const keys = exp && (typeof exp === "object" || typeof exp === "function") ? Object.keys(exp) : [];
            return self.host.tools.wrapExports(file, exp as Obj, names, (name, v) => self.host.tools.declaredTool(name, v, keys, file), true);
          }
        } catch {
          /* not one of the program's tool modules */
        }
      }
      if (typeof request === "string" && /(^|[/@-])ai($|[/@-])/.test(request)) {
        try {
          const file = M._resolveFilename(request, parent, isMain);
          if (aiSdkEntry(file, (p) => fs.readFileSync(p, "utf8")) && self.aiSdkSupported(file))
            return self.host.tools.wrapExports(file, exp as Obj, [...AI_SDK_ENTRIES, ...AI_SDK_AGENTS], (name, fn) => self.host.aiSdk.entry(name, fn));
        } catch {
          /* not the AI SDK */
        }
      }
      if (typeof request === "string" && /openai|anthropic|modelcontextprotocol|client|pregel|workflow|agent/.test(request)) {
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
      this.host.problems.push(`unsupported ${SUPPORTED[kind].name} version ${version} (supported: ${SUPPORTED[kind].range})`);
      return;
    }
    if (kind === "openai-agents") {
      if (!this.patched.has(ns)) this.host.patchAgentsSdk(ns);
      this.patched.add(ns);
      return;
    }
    if (kind === "langgraph") {
      patchLangGraph(this.host, ns);
      return;
    }
    if (kind === "llamaindex" || kind === "mastra") {
      (kind === "llamaindex" ? patchLlamaIndex : patchMastra)(this.host, ns);
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
        this.host.tools.wrapMcp(proto);
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
      if (!ok)
        this.host.problems.push(
          `unsupported ${SUPPORTED.ai.name} version ${version} (supported: ${SUPPORTED.ai.range}); its model calls are recorded on the wire only`,
        );
      this.aiSdkFiles.set(file, ok);
    }
    return ok;
  }

  /** The client's post: note the caller's site and agent header for the request it starts. */
  private wrapPost(proto: Obj): void {
    const post = proto.post as (...a: unknown[]) => unknown;
    const self = this;
    proto.post = function (p: unknown, opts: unknown) {
      const o = (opts ?? {}) as { headers?: unknown };
      const scope: Scope = { site: userSite(self.host.cfg.root), agent: headerOf(o.headers, "x-causeway-agent") };
      return self.host.als.run(scope, () => post.call(this, p, opts));
    };
  }
}
