/**
 * The runs-folder setting (a glob such as "**\/runs/**") turned into what discovery and the file
 * watchers need, and the path checks that keep node_modules and blob folders out.
 */
import path from "node:path";

export const DEFAULT_RUNS_GLOB = "**/runs/**";

/** The setting's value, cleaned: no leading "./" or "/", no trailing "/". Empty → the default. */
export function normalizeRunsGlob(glob: unknown): string {
  let g = typeof glob === "string" ? glob.trim().replace(/\\/g, "/") : "";
  g = g
    .replace(/^(\.\/)+/, "")
    .replace(/^\/+/, "")
    .replace(/\/+$/, "");
  return g || DEFAULT_RUNS_GLOB;
}

/** The glob of the events.jsonl files of runs under the runs folders. */
export function eventsGlob(runsGlob: unknown): string {
  return `${normalizeRunsGlob(runsGlob)}/events.jsonl`;
}

/** The glob of the files whose change means a run changed (its events and its tests). */
export function runFilesGlob(runsGlob: unknown): string {
  return `${normalizeRunsGlob(runsGlob)}/{events,tests}.jsonl`;
}

/** A run folder we accept: not inside node_modules, not a run's own blobs folder, not a dot-folder. */
export function isRunDirAllowed(dir: string): boolean {
  const parts = dir.split(/[\\/]+/);
  if (parts.includes("node_modules")) return false;
  if (parts[parts.length - 1] === "blobs") return false;
  return !parts.slice(-3).some((p) => p.startsWith(".") && p !== "." && p !== "..");
}

/** The run folder of a changed file (events.jsonl or tests.jsonl), or undefined for other files. */
export function runDirOfFile(file: string): { dir: string; kind: "events" | "tests" } | undefined {
  const base = path.basename(file);
  if (base !== "events.jsonl" && base !== "tests.jsonl") return undefined;
  const dir = path.dirname(file);
  if (!isRunDirAllowed(dir)) return undefined;
  return { dir, kind: base === "events.jsonl" ? "events" : "tests" };
}

/** Is `p` equal to `parent` or inside it? */
export function isInside(p: string, parent: string): boolean {
  const rel = path.relative(parent, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * A glob (the subset VS Code's settings use: **, *, ?, {a,b}) as a RegExp over "/"-separated
 * relative paths. "**\/" matches any number of folders, including none.
 */
export function globToRegExp(glob: string): RegExp {
  const hit = compiled.get(glob);
  if (hit) return hit;
  let re = "";
  let inBraces = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        re += slash ? "(?:[^/]*/)*" : ".*";
        i += slash ? 2 : 1;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "{") {
      inBraces = true;
      re += "(?:";
    } else if (c === "}" && inBraces) {
      inBraces = false;
      re += ")";
    } else if (c === "," && inBraces) re += "|";
    else re += c.replace(/[.+^$()|[\]\\]/g, "\\$&");
  }
  const out = new RegExp(`^${re}$`);
  if (compiled.size > 50) compiled.clear();
  compiled.set(glob, out);
  return out;
}
const compiled = new Map<string, RegExp>();

/** Would a run folder at `dir` (absolute) be found under `folder` with the runs glob? */
export function isUnderRunsGlob(dir: string, folder: string, runsGlob: unknown): boolean {
  const rel = path.relative(folder, path.join(dir, "events.jsonl")).split(path.sep).join("/");
  if (rel.startsWith("..") || path.isAbsolute(rel)) return false;
  return isRunDirAllowed(dir) && globToRegExp(eventsGlob(runsGlob)).test(rel);
}
