/**
 * LlamaIndex.TS and Mastra agents under the preload: the framework's own agent name names the
 * agent of the model calls made while that agent works, as langgraph.ts does for LangGraph.
 *
 * - LlamaIndex.TS: `FunctionAgent` (what `agent({ name })` and `multiAgent` run) calls its model
 *   in `takeStep`; each step runs in a scope holding the agent's `name` (the default "Agent"
 *   names nothing);
 * - Mastra: `Agent` (`new Agent({ name })`) calls its model in `generate` and `stream` (and their
 *   legacy forms); each runs in a scope holding the agent's `name`.
 *
 * The innermost scope names the call (an agent used as another's tool names its own calls).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { AgentHintHost } from "./langgraph";

type Obj = Record<string, unknown>;
type Fn = (...a: unknown[]) => unknown;

const agents = new AsyncLocalStorage<string>();
const patched = new WeakSet<object>();
const hosts = new WeakSet<object>();

function hint(host: AgentHintHost): void {
  if (hosts.has(host)) return;
  hosts.add(host);
  host.agentHints.push(() => agents.getStore());
}

/** `proto[method]` run in a scope holding the instance's name, when `nameOf` gives one. */
function scoped(proto: Obj, method: string, nameOf: (self: Obj) => string | undefined): void {
  const orig = proto[method];
  if (typeof orig !== "function") return;
  proto[method] = function (this: Obj, ...args: unknown[]) {
    const name = nameOf(this);
    return name ? agents.run(name, () => (orig as Fn).apply(this, args)) : (orig as Fn).apply(this, args);
  };
}

const named = (v: unknown, unnamed?: string): string | undefined => (typeof v === "string" && v && v !== unnamed ? v : undefined);

/** `@llamaindex/workflow`'s entry module: its FunctionAgent class patched once. */
export function patchLlamaIndex(host: AgentHintHost, ns: Obj): void {
  hint(host);
  const proto = (ns?.FunctionAgent as { prototype?: Obj } | undefined)?.prototype;
  if (!proto || patched.has(proto)) return;
  patched.add(proto);
  scoped(proto, "takeStep", (self) => named(self.name, "Agent"));
}

/** `@mastra/core/agent`'s module: its Agent class patched once. */
export function patchMastra(host: AgentHintHost, ns: Obj): void {
  hint(host);
  const proto = (ns?.Agent as { prototype?: Obj } | undefined)?.prototype;
  if (!proto || patched.has(proto)) return;
  patched.add(proto);
  for (const m of ["generate", "stream", "generateLegacy", "streamLegacy"]) scoped(proto, m, (self) => named(self.name));
}
