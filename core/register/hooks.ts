/**
 * The module hooks of the preload, as the source of an ES module registered with
 * `module.register` (they run on Node's loader thread, apart from the program). They change
 * nothing but three files of the client packages, by appending a line that hands the module's
 * own exports to the preload (`globalThis.__causewayPatch`) once the module has run; CommonJS
 * copies of the same packages are patched through `Module._load` (see preload.ts).
 */

/** File (URL or path, forward slashes) → which client it holds, or undefined. */
export function clientKind(file: string): "openai" | "anthropic" | "mcp" | undefined {
  const f = file.replace(/\\/g, "/").split("?")[0];
  if (/\/node_modules\/openai\/client\.m?js$/.test(f)) return "openai";
  if (/\/node_modules\/@anthropic-ai\/sdk\/client\.m?js$/.test(f)) return "anthropic";
  if (/\/node_modules\/@modelcontextprotocol\/sdk\/dist\/(esm|cjs)\/client\/index\.js$/.test(f)) return "mcp";
  return undefined;
}

/** The hooks module's source (ESM). */
export const HOOKS_SOURCE = `
const kindOf = ${clientKind.toString()};
export async function load(url, context, nextLoad) {
  const r = await nextLoad(url, context);
  const kind = url.startsWith("file:") ? kindOf(url) : undefined;
  if (!kind || r.format !== "module" || r.source == null) return r;
  const src = typeof r.source === "string" ? r.source : new TextDecoder().decode(r.source);
  const tail = "\\n;import * as __causeway_self from " + JSON.stringify(url) + ";\\n" +
    "globalThis.__causewayPatch?.(" + JSON.stringify(kind) + ", __causeway_self, " + JSON.stringify(url) + ");\\n";
  return { ...r, source: src + tail };
}
`;
