/**
 * How the preload is configured: by `causeway record` / the replay engine (CAUSEWAY_CONFIG, JSON),
 * or, used on its own (`node --import causeway-vscode/register agent.mjs`), by environment
 * variables and a `causeway` key in the program's package.json:
 *
 *   CAUSEWAY_OUT=runs               where runs are written (recording is on when this is set)
 *   CAUSEWAY_RUN_ID, CAUSEWAY_SEED  the run's id; a seed sent (derived per call) with OpenAI requests
 *   CAUSEWAY_SENSITIVE=a,b          sensitive tools; CAUSEWAY_UNTRUSTED=a,b untrusted tools
 *   CAUSEWAY_TRUSTED=a,b            MCP tools or resource URIs whose results are trusted
 *   CAUSEWAY_AGENT=name             the agent of every model call (else header or system prompt)
 *   CAUSEWAY_TOOLS=lib/tools.mjs:fetch_doc,send_email   tools the program runs in its own code:
 *                                   these exports (functions, or framework tool objects: see
 *                                   framework-tools.ts) are wrapped (recorded; served from the tape in replays)
 *
 *   package.json: { "causeway": { "out": "runs", "sensitiveTools": [], "untrustedTools": [], "trustedTools": [],
 *                                 "tools": { "lib/tools.mjs": ["fetch_doc", "send_email"] } } }
 */
import fs from "node:fs";
import path from "node:path";
import { formatCommand, redactArgv } from "../log/argv";
import { allowSpecFiles } from "../specs/files";
import type { PreloadConfig } from "../replay/preload-contract";

// the contract with the replay engine lives in replay/ (register/ sits above replay/, never below)

/** `FILE:EXPORT[,EXPORT…]` (or several joined by `;`) → {file: [exports]}. */
export function parseToolSpecs(specs: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const spec of specs
    .flatMap((s) => s.split(";"))
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = spec.lastIndexOf(":");
    if (at <= 0) throw new Error(`"${spec}" is not FILE:EXPORT[,EXPORT…]`);
    const names = spec
      .slice(at + 1)
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    if (!names.length) throw new Error(`"${spec}" names no export`);
    for (const n of names) {
      if (!/^[A-Za-z_$][\w$]*$/.test(n)) throw new Error(`"${spec}": ${JSON.stringify(n)} is not an export name`);
      if (n === "default") throw new Error(`"${spec}": a default export can't be declared; export the tool under a name`);
    }
    const file = spec.slice(0, at);
    out[file] = [...new Set([...(out[file] ?? []), ...names])];
  }
  return out;
}

function toolsOf(conf: unknown): Record<string, string[]> | undefined {
  if (!conf || typeof conf !== "object" || Array.isArray(conf)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [file, names] of Object.entries(conf)) {
    const list = strings(names);
    if (list?.length) out[file] = list;
  }
  return out;
}

export const SUPPORTED: Record<string, { name: string; range: string; ok: (major: number, minor: number) => boolean }> = {
  openai: { name: "openai", range: "4.x to 7.x", ok: (m) => m >= 4 && m <= 7 },
  anthropic: { name: "@anthropic-ai/sdk", range: "0.20 to 1.x", ok: (m, n) => (m === 0 && n >= 20) || m === 1 },
  mcp: { name: "@modelcontextprotocol/sdk", range: "1.x", ok: (m) => m === 1 },
  ai: { name: "ai (the AI SDK)", range: "5.x to 7.x", ok: (m) => m >= 5 && m <= 7 },
  "openai-agents": { name: "@openai/agents-core", range: "0.1 to 0.x", ok: (m, n) => m === 0 && n >= 1 },
  langgraph: { name: "@langchain/langgraph", range: "0.2 to 1.x", ok: (m, n) => (m === 0 && n >= 2) || m === 1 },
  llamaindex: { name: "@llamaindex/workflow", range: "1.x", ok: (m) => m === 1 },
  mastra: { name: "@mastra/core", range: "1.x", ok: (m) => m === 1 },
};

export function versionOk(kind: string, version: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  const s = SUPPORTED[kind];
  return !s || (!!m && s.ok(Number(m[1]), Number(m[2])));
}

const list = (s: string | undefined): string[] | undefined =>
  s === undefined
    ? undefined
    : s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);
const strings = (x: unknown): string[] | undefined => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : undefined);

/** The `causeway` key of the nearest package.json above `dir`, and that folder. */
function packageConfig(dir: string): { root: string; conf: Record<string, unknown> } | undefined {
  let d = path.resolve(dir);
  for (let i = 0; i < 20; i++) {
    const pj = path.join(d, "package.json");
    if (fs.existsSync(pj)) {
      try {
        const j = JSON.parse(fs.readFileSync(pj, "utf8"));
        return { root: d, conf: j && typeof j.causeway === "object" && j.causeway ? j.causeway : {} };
      } catch {
        return undefined;
      }
    }
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return undefined;
}

/** The configuration, or null when the preload should stay out of the way. */
export function loadConfig(env: NodeJS.ProcessEnv, cwd: string, argv: string[]): PreloadConfig | null {
  if (env.CAUSEWAY_CONFIG) {
    const c = JSON.parse(env.CAUSEWAY_CONFIG) as PreloadConfig;
    if (!c || typeof c.runId !== "string" || typeof c.root !== "string") throw new Error("CAUSEWAY_CONFIG is malformed");
    // a replay order's fixes are the user's (replace:…=@FILE names a file on this machine)
    if (c.replay) allowSpecFiles();
    return { ...c, sensitive: c.sensitive ?? [], untrusted: c.untrusted ?? [], trusted: c.trusted ?? [] };
  }
  const pkg = packageConfig(cwd);
  const conf = pkg?.conf ?? {};
  const out = env.CAUSEWAY_OUT ?? (typeof conf.out === "string" ? conf.out : undefined);
  if (!out) return null;
  const root = cwd;
  const script = argv[1] ? path.relative(root, path.resolve(argv[1])).split(path.sep).join("/") : "";
  // secrets passed as flags never reach the run (--api-key=[redacted])
  const command = redactArgv(["node", script, ...argv.slice(2).map((a) => relativeArg(a, root))].filter(Boolean), env);
  const seed = env.CAUSEWAY_SEED ?? (typeof conf.seed === "number" ? String(conf.seed) : undefined);
  const base =
    env.CAUSEWAY_RUN_ID ??
    `${path.basename(script).replace(/\.[cm]?[jt]sx?$/, "") || "agent"}-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`;
  const outDir = path.resolve(cwd, out);
  let runId = base;
  for (let i = 2; fs.existsSync(path.join(outDir, runId, "events.jsonl")); i++) runId = `${base}-${i}`;
  return {
    dir: path.join(outDir, runId),
    runId,
    seed: seed !== undefined && /^-?\d+$/.test(seed) ? Number(seed) : undefined,
    sensitive: list(env.CAUSEWAY_SENSITIVE) ?? strings(conf.sensitiveTools) ?? [],
    untrusted: list(env.CAUSEWAY_UNTRUSTED) ?? strings(conf.untrustedTools) ?? [],
    trusted: list(env.CAUSEWAY_TRUSTED) ?? strings(conf.trustedTools) ?? [],
    program: formatCommand(command),
    command,
    root,
    agent: env.CAUSEWAY_AGENT || undefined,
    tools: env.CAUSEWAY_TOOLS ? parseToolSpecs([env.CAUSEWAY_TOOLS]) : toolsOf(conf.tools),
  };
}

/** An argument as recorded: a path inside the root becomes relative; anything else stays. */
export function relativeArg(a: string, root: string): string {
  if (!path.isAbsolute(a)) return a;
  const rel = path.relative(root, a);
  return rel.startsWith("..") ? a : rel.split(path.sep).join("/");
}
