/**
 * The program's own tools declared with `--tool FILE:EXPORT` / CAUSEWAY_TOOLS: what an export is,
 * and how each kind is wrapped so that its runs are recorded actions (served from the tape in a
 * replay, never run there without live tools).
 *
 * - a plain function: each call is an action named after the export (the caller wraps it);
 * - LangChain / LangGraph tools (`tool()` from @langchain/core/tools, any StructuredTool or
 *   DynamicStructuredTool, DynamicTool): the instance's `_call` is wrapped in place, so every use
 *   of the object (a ToolNode, createReactAgent, `tool.invoke`) goes through it; the action is
 *   named by the tool's `name` and linked to the model's call by the tool call's id;
 * - LlamaIndex.TS FunctionTool (`FunctionTool.from`, `tool()`): its `call` is wrapped, the action
 *   named by `metadata.name`;
 * - Mastra tools (`createTool`): `execute` is wrapped, the action named by `id`;
 * - AI SDK tools (`tool()` from `ai`) and OpenAI Agents SDK function tools (`tool()` from
 *   @openai/agents): accepted and left as they are, since the preload already records their
 *   executions where those SDKs run them (wrapping them again would record each run twice).
 *
 * Anything else, and a missing export, is an error naming what was found and what to do.
 */
import { canonical } from "../log/hash";

type Obj = Record<string, unknown>;
type Fn = (...a: unknown[]) => unknown;
const isObj = (x: unknown): x is Obj => !!x && typeof x === "object" && !Array.isArray(x);

export type ToolKind = "function" | "langchain" | "llamaindex" | "mastra" | "ai-sdk" | "openai-agents";

/** What the wrappers use of the preload (a subset of AiSdkHost). */
export interface ToolHost {
  readonly trusted: readonly string[];
  tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link: boolean, callId?: string): Promise<unknown>;
}

/** The tool kinds `--tool` accepts, as said in errors. */
export const ACCEPTED =
  "a function, or a tool object of LangChain/LangGraph (tool() from @langchain/core/tools), LlamaIndex.TS (FunctionTool), Mastra (createTool), the AI SDK (tool() from ai) or the OpenAI Agents SDK (tool())";

const nameOf = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** Which kind of tool a value is, or undefined. */
export function toolKind(v: unknown): ToolKind | undefined {
  if (typeof v === "function") return "function";
  if (!isObj(v)) return undefined;
  // LangChain: a Runnable tool (lc_namespace ["langchain", "tools"] and the _call every tool class has)
  if (typeof v._call === "function" && typeof v.invoke === "function" && nameOf(v.name)) return "langchain";
  // OpenAI Agents SDK: { type: "function", name, invoke(runContext, input) }
  if (v.type === "function" && typeof v.invoke === "function" && nameOf(v.name)) return "openai-agents";
  // LlamaIndex.TS: { metadata: { name, description, parameters }, call(input) }
  if (typeof v.call === "function" && isObj(v.metadata) && nameOf(v.metadata.name)) return "llamaindex";
  // Mastra: { id, description, inputSchema, execute }
  if (typeof v.execute === "function" && nameOf(v.id)) return "mastra";
  // AI SDK: { description, inputSchema | parameters, execute } (its name is the key it is given under)
  if (typeof v.execute === "function" && ("inputSchema" in v || "parameters" in v)) return "ai-sdk";
  return undefined;
}

/** A value as said in an error: its type, class and first keys. */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v !== "object") return typeof v === "undefined" ? "undefined" : `a ${typeof v}`;
  const cls = (v as { constructor?: { name?: unknown } }).constructor?.name;
  const keys = Object.keys(v).slice(0, 12);
  const of = typeof cls === "string" && cls && cls !== "Object" ? `an object of class ${cls}` : "an object";
  return `${of} with ${keys.length ? `keys ${keys.join(", ")}${Object.keys(v).length > keys.length ? ", …" : ""}` : "no keys"}`;
}

/** The error for an export that is missing or not a tool. `exports` are the module's export names. */
export function toolError(file: string, name: string, value: unknown, exports: readonly string[] | undefined): string | undefined {
  if (exports && !exports.includes(name)) {
    const have = exports.filter((e) => e !== "default");
    return `${file} has no export ${name} (its exports: ${have.length ? have.slice(0, 20).join(", ") : "none"}): name an exported tool, e.g. --tool ${file}:${have[0] ?? "fetch_doc"}`;
  }
  if (toolKind(value)) return undefined;
  return `${file}:${name} is ${describe(value)}, not a tool: export ${ACCEPTED}`;
}

/** The arguments recorded for a call: an object as it is, anything else under `input`. */
const argsOf = (x: unknown): Obj => (isObj(x) ? x : x === undefined ? {} : { input: x });

/** A wrapper's action: the host's tool path, untrusted unless declared trusted. */
function run(host: ToolHost, name: string, args: Obj, go: () => unknown, callId?: string): Promise<unknown> {
  return host.tool(name, args, `tool:${name} ${canonical(args)}`, !host.trusted.includes(name), async () => go(), true, callId);
}

const wrapped = new WeakSet<object>();

/**
 * A framework tool object wrapped in place (every holder of the object sees the wrapper), once.
 * Returns the same object. Functions are not handled here (see Preload.wrapTool).
 */
export function wrapFrameworkTool(host: ToolHost, value: unknown): unknown {
  const kind = toolKind(value);
  if (!isObj(value) || wrapped.has(value) || !kind || kind === "function" || kind === "ai-sdk" || kind === "openai-agents") return value;
  wrapped.add(value);
  const t = value;
  if (kind === "langchain") {
    const orig = t._call as Fn;
    // the arguments as the model sent them (a tool call's), else as the schema parsed them
    t._call = function (this: unknown, arg: unknown, runManager: unknown, config: unknown) {
      const call = isObj(config) && isObj(config.toolCall) ? config.toolCall : undefined;
      const args = isObj(call?.args) ? call.args : argsOf(arg);
      const id = typeof call?.id === "string" && call.id ? call.id : undefined;
      return run(host, String(t.name), args, () => orig.call(this, arg, runManager, config), id);
    };
  } else if (kind === "llamaindex") {
    const orig = t.call as Fn;
    const name = String((t.metadata as Obj).name);
    t.call = function (this: unknown, input: unknown, ...rest: unknown[]) {
      return run(host, name, argsOf(input), () => orig.call(this, input, ...rest));
    };
  } else if (kind === "mastra") {
    const orig = t.execute as Fn;
    const name = String(t.id);
    t.execute = function (this: unknown, input: unknown, ...rest: unknown[]) {
      // Mastra 0.x passes { context: input, runtimeContext, … }; 1.x passes (input, context)
      const v0 = isObj(input) && isObj(input.context) && ("runtimeContext" in input || "mastra" in input);
      return run(host, name, argsOf(v0 ? input.context : input), () => orig.call(this, input, ...rest));
    };
  }
  return t;
}
