/**
 * Recording an unmodified program from the editor, without VS Code: which tool names a program's
 * source mentions and which of them are likely sensitive or return outside content (the quick
 * picks' defaults), the `causeway record` arguments, and the launch.json configuration that
 * records a debug session through the preload.
 */
import path from "node:path";
import { freeRunId, slug } from "../../core/sdk/system";
import { COMMANDS } from "./command-ids";

/** What the user said about a program's tools (remembered per program). */
export interface ProgramTools {
  sensitive: string[];
  /** Tools whose results are outside content; every other tool listed is trusted. */
  untrusted: string[];
  trusted: string[];
}

export const JS_FILE = /\.(m?js|cjs)$/i;
export const TS_FILE = /\.(m?ts|cts)$/i;
/** A Python program: recorded behind `causeway record`'s built-in gateway (it reads the clients' base URLs). */
export const PY_FILE = /\.py$/i;

/** Snake_case names of the model APIs themselves, not tools. */
const WIRE_NAMES =
  /^(tool_|function_|max_|stop_|end_turn$|input_schema$|response_format$|reasoning_effort$|top_p$|top_k$|parallel_tool_calls$|json_schema$|json_object$|input_text$|output_text$)/;

/**
 * Tool names the source mentions, in order of first mention: `tool({ name: "…" })` (OpenAI Agents
 * SDK), else the key or variable a `tool({…})` is held in (AI SDK `fetch_doc: tool({…})`,
 * `const fetch_doc = tool({…})`), MCP `server.tool("…")` / `registerTool("…")`, and
 * quoted snake_case names (tool lists handed to a model, MCP `callTool({ name })`, a Python
 * program's tool table) that are not schema properties. Only reads text.
 */
export function toolNamesIn(source: string): string[] {
  const text = source.length > 500_000 ? source.slice(0, 500_000) : source;
  const found: { at: number; name: string }[] = [];
  const add = (re: RegExp, group = 1) => {
    for (const m of text.matchAll(re)) found.push({ at: m.index ?? 0, name: m[group] });
  };
  // tool({ name: "…" }) names itself (Agents SDK); else the key or variable it is assigned to (AI SDK)
  for (const m of text.matchAll(/\btool\s*\(\s*\{/g)) {
    const at = m.index ?? 0;
    const own = /\bname\s*:\s*["'`]([\w.-]+)["'`]/.exec(objectAt(text, at + m[0].length - 1));
    const held = /(?:\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=|["']?([A-Za-z_$][\w$]*)["']?\s*:)\s*$/.exec(text.slice(Math.max(0, at - 80), at));
    const name = own?.[1] ?? held?.[1] ?? held?.[2];
    if (name) found.push({ at, name });
  }
  add(/\.(?:registerTool|tool)\s*\(\s*["'`]([\w.-]+)["'`]/g);
  // not a JSON-schema property (`"order_id": {"type": …}`, as Python and JSON write them)
  add(/["'`]([a-z][a-z0-9]*(?:_[a-z0-9]+)+)["'`](?!\s*:\s*\{\s*["']?type["']?\s*:)/g);
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.name).filter((n) => n.length <= 64 && !WIRE_NAMES.test(n)))];
}

/** The text of the object literal whose "{" is at `open` (up to 4,000 characters; strings not parsed). */
function objectAt(text: string, open: number): string {
  let depth = 0;
  const end = Math.min(text.length, open + 4000);
  for (let i = open; i < end; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open, end);
}

const READS = /^(fetch|read|get|search|browse|download|scrape|load|open|lookup|look_up|query|list|find|retrieve|crawl|view|check)/i;
const ACTS =
  /(send|e?mail|refund|pay|transfer|delete|remove|drop|export|write|post|publish|order|purchase|buy|exec|shell|run_|deploy|charge|update|create|upload|wire|book|cancel|grant|approve)/i;
const OUTSIDE = /(web|doc|page|url|inbox|message|file|search|fetch|browse|scrape|crawl|download|email|ticket|note|review|comment)/i;

/** Likely sensitive: acts on the world (sends, pays, deletes, exports…) and is not a read. */
export function looksSensitive(name: string): boolean {
  return !READS.test(name) && ACTS.test(name);
}

/** Likely returns outside content: a read of documents, pages, messages… and not sensitive. */
export function looksUntrusted(name: string): boolean {
  return !looksSensitive(name) && (READS.test(name) || OUTSIDE.test(name));
}

/** The picks' defaults for a program: what was remembered, else guessed from the names. */
export function defaultTools(names: readonly string[], remembered?: ProgramTools): ProgramTools {
  if (remembered) return remembered;
  const sensitive = names.filter(looksSensitive);
  const untrusted = names.filter(looksUntrusted);
  return { sensitive, untrusted, trusted: names.filter((n) => !untrusted.includes(n)) };
}

/** Tools picked as untrusted out of `names`: the rest are trusted. */
export function withUntrusted(names: readonly string[], sensitive: readonly string[], untrusted: readonly string[]): ProgramTools {
  const all = [...new Set([...names, ...sensitive, ...untrusted])];
  return { sensitive: [...sensitive], untrusted: [...untrusted], trusted: all.filter((n) => !untrusted.includes(n)) };
}

/** Parsed from the workspace state; anything malformed is dropped. */
export function rememberedTools(state: unknown, program: string): ProgramTools | undefined {
  if (!state || typeof state !== "object" || Array.isArray(state) || !Object.prototype.hasOwnProperty.call(state, program)) return undefined;
  const t = (state as Record<string, unknown>)[program];
  if (!t || typeof t !== "object") return undefined;
  const list = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : []);
  const o = t as Record<string, unknown>;
  return { sensitive: list(o.sensitive), untrusted: list(o.untrusted), trusted: list(o.trusted) };
}

/**
 * How a file is run: JavaScript by `node`, TypeScript through tsx when the project has it (both
 * under the preload), Python by `python3` (`python` on Windows) behind the built-in gateway.
 */
export function programCommand(rel: string, o: { tsx: boolean; platform?: NodeJS.Platform }): { command: string[]; via?: "gateway" } | { error: string } {
  const file = rel.split(path.sep).join("/");
  if (JS_FILE.test(file)) return { command: ["node", file] };
  if (TS_FILE.test(file)) {
    if (o.tsx) return { command: ["node", "--import", "tsx", file] };
    return {
      error: `${path.basename(file)} is TypeScript: Causeway runs it through tsx. Install it in this project (npm install --save-dev tsx), or build the program to JavaScript and record that.`,
    };
  }
  if (PY_FILE.test(file)) return { command: [(o.platform ?? process.platform) === "win32" ? "python" : "python3", file], via: "gateway" };
  return { error: `${path.basename(file)} is not a JavaScript, TypeScript or Python file` };
}

/** The run id `causeway record` gets: the program's name and the time, free in `out`. */
export function runIdFor(out: string, file: string, now: Date): string {
  return freeRunId(out, `${slug(file)}-${now.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`);
}

/** `causeway record` arguments for a command. */
export function recordArgs(o: { out: string; runId: string; tools: ProgramTools; command: readonly string[]; via?: "gateway" }): string[] {
  return [
    "record",
    "--out",
    o.out,
    "--run-id",
    o.runId,
    ...(o.via ? ["--via", o.via] : []),
    ...o.tools.sensitive.flatMap((t) => ["--sensitive", t]),
    ...o.tools.untrusted.flatMap((t) => ["--untrusted-tool", t]),
    ...o.tools.trusted.flatMap((t) => ["--trusted-tool", t]),
    "--",
    ...o.command,
  ];
}

/** The command (internal, hidden) whose value launch.json's `${command:…}` turns into the preload's URL. */
export const PRELOAD_COMMAND = COMMANDS.preloadPath;
export const LAUNCH_NAME = "Record with Causeway";

/** A launch.json configuration (js-debug, type node) that records the program into `out` through the preload. */
export function launchConfiguration(o: { program: string; tools: ProgramTools; out?: string; name?: string; tsx?: boolean }): Record<string, unknown> {
  const env: Record<string, string> = { CAUSEWAY_OUT: o.out ?? "${workspaceFolder}/runs" };
  if (o.tools.sensitive.length) env.CAUSEWAY_SENSITIVE = o.tools.sensitive.join(",");
  if (o.tools.untrusted.length) env.CAUSEWAY_UNTRUSTED = o.tools.untrusted.join(",");
  if (o.tools.trusted.length) env.CAUSEWAY_TRUSTED = o.tools.trusted.join(",");
  return {
    type: "node",
    request: "launch",
    name: o.name ?? LAUNCH_NAME,
    program: o.program,
    cwd: "${workspaceFolder}",
    runtimeArgs: [...(o.tsx ? ["--import", "tsx"] : []), "--import", `\${command:${PRELOAD_COMMAND}}`],
    env,
    skipFiles: ["<node_internals>/**"],
  };
}

/** The folder a debug session records into: its CAUSEWAY_OUT, relative to its cwd. Undefined: it does not record. */
export function sessionOut(configuration: object, folder: string | undefined): string | undefined {
  const config = configuration as { env?: unknown; cwd?: unknown };
  const env = config.env && typeof config.env === "object" ? (config.env as Record<string, unknown>) : undefined;
  const out = env?.CAUSEWAY_OUT;
  if (typeof out !== "string" || !out.trim()) return undefined;
  const cwd = typeof config.cwd === "string" && config.cwd ? config.cwd : folder;
  return cwd ? path.resolve(cwd, out) : path.isAbsolute(out) ? out : undefined;
}
