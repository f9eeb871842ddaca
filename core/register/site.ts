/**
 * Where a call of the program comes from, for the preload's parts: the scope a call runs in (its
 * site, its agent), the user's call site from the stack, a header's value, a package's version.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Site } from "../log/events";

type Obj = Record<string, unknown>;

/** What a call of the program runs in (an AsyncLocalStorage store). */
export interface Scope {
  site?: Site;
  agent?: string;
  /** Inside a model call taken above the wire (the AI SDK's model layer): fetch lets it through. */
  belowModel?: boolean;
}

export function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 2000) : String(err).slice(0, 2000);
}

export function headerOf(h: unknown, name: string): string | undefined {
  if (!h || typeof h !== "object") return undefined;
  try {
    if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? undefined;
    if (Array.isArray(h)) {
      for (const x of h) {
        const v = headerOf(x, name);
        if (v) return v;
      }
      return undefined;
    }
    for (const [k, v] of Object.entries(h as Obj)) if (k.toLowerCase() === name && typeof v === "string" && v) return v;
    // openai's buildHeaders keeps values in a nested structure
    const values = (h as { values?: unknown }).values;
    if (values && typeof (values as Headers).get === "function") return (values as Headers).get(name) ?? undefined;
  } catch {
    /* unreadable headers */
  }
  return undefined;
}

/** The package.json version of the package a file belongs to. */
export function packageVersion(file: string): string | undefined {
  let dir = path.dirname(file);
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, "package.json");
    try {
      const j = JSON.parse(fs.readFileSync(pj, "utf8"));
      if (typeof j.name === "string" && typeof j.version === "string") return j.version;
    } catch {
      /* keep looking */
    }
    dir = path.dirname(dir);
  }
  return undefined;
}

let selfFile: string | undefined;

/** The first stack frame in the user's own code (not Node, not node_modules, not this preload). */
export function userSite(root: string): Site | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = saved;
  for (const line of stack.split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    let file = m[1];
    if (file.startsWith("file://")) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    selfFile ??= file;
    if (file === selfFile || !path.isAbsolute(file) || /[\\/]node_modules[\\/]/.test(file)) continue;
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (rel.startsWith("..")) continue;
    return { file: rel, line: Number(m[2]) };
  }
  return undefined;
}
