/**
 * LangGraph.js under the preload: a compiled graph's own `name` (createReactAgent({ name }),
 * `graph.compile({ name })`) names the agent of the model calls made while it runs. The graph
 * class (`Pregel`, which every compiled graph is) gets its `_streamIterator`, which both `invoke`
 * and `stream` run through, wrapped so that each step of the run is taken in a scope holding the
 * graph's name; a subgraph's scope (an agent inside a supervisor) is inside its parent's, so the
 * innermost named graph names the call. Unnamed graphs change nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Obj = Record<string, unknown>;
type Fn = (...a: unknown[]) => unknown;

/** What the LangGraph hook uses of the preload. */
export interface AgentHintHost {
  /** Functions that name the agent making the current model call, when they know it. */
  readonly agentHints: (() => string | undefined)[];
}

const graphs = new AsyncLocalStorage<string>();
const patched = new WeakSet<object>();
const hosts = new WeakSet<object>();

/** The module that defines `Pregel` (`@langchain/langgraph/dist/pregel/index`): its class patched once. */
export function patchLangGraph(host: AgentHintHost, ns: Obj): void {
  if (!hosts.has(host)) {
    hosts.add(host);
    host.agentHints.push(() => graphs.getStore());
  }
  const cls = ns?.Pregel as { prototype?: Obj } | undefined;
  const proto = cls?.prototype;
  if (!proto || patched.has(proto) || typeof proto._streamIterator !== "function") return;
  patched.add(proto);
  const orig = proto._streamIterator as Fn;
  proto._streamIterator = function (this: { name?: unknown }, ...args: unknown[]) {
    const it = orig.apply(this, args) as AsyncGenerator<unknown>;
    const name = typeof this?.name === "string" && this.name ? this.name : undefined;
    if (!name || !it || typeof it.next !== "function") return it;
    const step = <T>(fn: () => T): T => graphs.run(name, fn);
    const wrapped = {
      next: (...v: [] | [unknown]) => step(() => it.next(...v)),
      return: (v: unknown) => step(() => it.return(v)),
      throw: (e: unknown) => step(() => it.throw(e)),
      [Symbol.asyncIterator]() {
        return wrapped;
      },
    };
    return wrapped;
  };
}
