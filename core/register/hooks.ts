/**
 * The module hooks of the preload, as the source of an ES module registered with
 * `module.register` (they run on Node's loader thread, apart from the program). They change
 * nothing but five files of the client packages (the OpenAI Agents SDK's core and LangGraph's
 * graph class among them), by
 * appending a line that hands the module's own exports to the preload (`globalThis.__causewayPatch`)
 * once the module has run, and the AI SDK's entry module (`ai`), which importers get through a
 * wrapper module whose model-calling functions are the preload's (`globalThis.__causewayAi`);
 * CommonJS copies of the same packages are patched through `Module._load` (see preload.ts).
 */

/** File (URL or path, forward slashes) → which client it holds, or undefined. */
export function clientKind(file: string): "openai" | "anthropic" | "mcp" | "openai-agents" | "langgraph" | "llamaindex" | "mastra" | undefined {
  const f = file.replace(/\\/g, "/").split("?")[0];
  if (/\/node_modules\/openai\/client\.m?js$/.test(f)) return "openai";
  if (/\/node_modules\/@anthropic-ai\/sdk\/client\.m?js$/.test(f)) return "anthropic";
  if (/\/node_modules\/@modelcontextprotocol\/sdk\/dist\/(esm|cjs)\/client\/index\.js$/.test(f)) return "mcp";
  if (/\/node_modules\/@openai\/agents-core\/dist\/index\.m?js$/.test(f)) return "openai-agents";
  if (/\/node_modules\/@langchain\/langgraph\/dist\/pregel\/index\.(?:m?js|cjs)$/.test(f)) return "langgraph";
  if (/\/node_modules\/@llamaindex\/workflow\/dist\/index\.(?:m?js|cjs)$/.test(f)) return "llamaindex";
  if (/\/node_modules\/@mastra\/core\/dist\/agent\/index\.(?:m?js|cjs)$/.test(f)) return "mastra";
  return undefined;
}

/** The AI SDK's functions that call a model, replaced by the preload's (core/register/ai-sdk.ts). */
export const AI_SDK_ENTRIES = ["generateText", "streamText", "generateObject", "streamObject"];
/** The AI SDK's agent classes (ai 5: Experimental_Agent; 6 and 7: ToolLoopAgent), patched in place. */
export const AI_SDK_AGENTS = ["ToolLoopAgent", "Experimental_Agent"];

/**
 * Whether a file (URL or path) is the entry module of the AI SDK: `<package>/dist/index.{js,mjs}`
 * of a package named "ai" (under any folder name, e.g. an npm alias). `read` reads a file's text.
 */
export function aiSdkEntry(file: string, read: (p: string) => string): boolean {
  const f = file.replace(/\\/g, "/").split("?")[0];
  const m = /^(?:file:\/\/)?(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\/dist\/index\.m?js$/.exec(f);
  if (!m) return false;
  try {
    const dir = f.startsWith("file:") ? decodeURIComponent(m[1]) : m[1];
    return JSON.parse(read(dir + "/package.json")).name === "ai";
  } catch {
    return false;
  }
}

/**
 * The hooks module's source (ESM). `data.tools` maps file URLs of the program's own tool modules
 * to the export names to wrap: an import of such a file gets a wrapper module instead, which
 * re-exports everything and replaces the named exports with recorded (and, in a replay, taped)
 * versions (`globalThis.__causewayTool`). The AI SDK's entry is wrapped the same way, its
 * model-calling functions replaced by `globalThis.__causewayAi(name, fn)`.
 */
export const HOOKS_SOURCE = `
import { readFileSync } from "node:fs";
const kindOf = ${clientKind.toString()};
const isAiSdk = ${aiSdkEntry.toString()};
const AI_SDK_ENTRIES = ${JSON.stringify(AI_SDK_ENTRIES)};
const AI_SDK_AGENTS = ${JSON.stringify(AI_SDK_AGENTS)};
const aiSdk = new Map();
let tools = {};
export function initialize(data) {
  tools = (data && data.tools) || {};
}
export async function resolve(specifier, context, nextResolve) {
  const r = await nextResolve(specifier, context);
  if (tools[r.url] && !(context.parentURL || "").endsWith("?causeway-wrap")) return { ...r, url: r.url + "?causeway-wrap", shortCircuit: true };
  if (r.url.startsWith("file:") && !r.url.includes("?") && !(context.parentURL || "").endsWith("?causeway-ai")) {
    if (!aiSdk.has(r.url)) aiSdk.set(r.url, isAiSdk(r.url, (p) => readFileSync(p, "utf8")));
    if (aiSdk.get(r.url)) return { ...r, url: r.url + "?causeway-ai", shortCircuit: true };
  }
  return r;
}
export async function load(url, context, nextLoad) {
  if (url.endsWith("?causeway-wrap")) {
    const file = url.slice(0, -"?causeway-wrap".length);
    const orig = JSON.stringify(file + "?causeway-orig");
    const lines = ["import * as __m from " + orig + ";", "export * from " + orig + ";"];
    for (const name of tools[file] || []) {
      if (!/^[A-Za-z_$][\\w$]*$/.test(name) || name === "default") continue;
      lines.push("export const " + name + " = globalThis.__causewayTool ? globalThis.__causewayTool(" + JSON.stringify(name) + ", __m." + name + ", __m, " + JSON.stringify(file) + ") : __m." + name + ";");
    }
    return { format: "module", source: lines.join("\\n"), shortCircuit: true };
  }
  if (url.endsWith("?causeway-ai")) {
    const orig = JSON.stringify(url.slice(0, -"?causeway-ai".length));
    const lines = ["import * as __m from " + orig + ";", "export * from " + orig + ";"];
    for (const name of AI_SDK_ENTRIES) {
      lines.push("export const " + name + " = globalThis.__causewayAi && typeof __m." + name + " === 'function' ? globalThis.__causewayAi(" + JSON.stringify(name) + ", __m." + name + ", " + orig + ") : __m." + name + ";");
    }
    for (const name of AI_SDK_AGENTS) {
      lines.push("if (typeof __m[" + JSON.stringify(name) + "] === 'function') globalThis.__causewayAi?.(" + JSON.stringify(name) + ", __m[" + JSON.stringify(name) + "], " + orig + ");");
    }
    return { format: "module", source: lines.join("\\n"), shortCircuit: true };
  }
  const r = await nextLoad(url, context);
  const kind = url.startsWith("file:") ? kindOf(url) : undefined;
  if (!kind || r.format !== "module" || r.source == null) return r;
  const src = typeof r.source === "string" ? r.source : new TextDecoder().decode(r.source);
  const tail = "\\n;import * as __causeway_self from " + JSON.stringify(url) + ";\\n" +
    "globalThis.__causewayPatch?.(" + JSON.stringify(kind) + ", __causeway_self, " + JSON.stringify(url) + ");\\n";
  return { ...r, source: src + tail };
}
`;
