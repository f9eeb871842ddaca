/**
 * Recorded sites (`site: {file, line}`, relative to the program's root) → files on disk. A site
 * is tried against the folder holding the run's program, each workspace folder, and, for the
 * built-in demo, the extension's own copy of its sources. A site never resolves outside the root
 * it was resolved against (a run is attacker-written: "../../" goes nowhere).
 */
import fs from "node:fs";
import path from "node:path";
import { BUILTIN_PROGRAMS } from "../../core/replay/programs";
import { isInside } from "./glob";

export interface ResolvedSite {
  /** Absolute path of the source file. */
  file: string;
  /** The file is inside a workspace folder (diagnostics go only there). */
  inWorkspace: boolean;
}

export interface SiteContext {
  /** Workspace folders (absolute). */
  folders: readonly string[];
  /** The extension's install folder (built-in programs' sources ship there). */
  extensionPath: string;
}

/**
 * The module part of `path/file.ts:EXPORT`, or the script of a recorded command (`node
 * path/agent.mjs ARGS`, as `causeway record -- COMMAND` writes it), or undefined for built-ins
 * and malformed specs.
 */
export function programModule(program: string): string | undefined {
  if (!program || program in BUILTIN_PROGRAMS) return undefined;
  if (/^(node|\S+\.[cm]?[jt]sx?)(\s|$)/.test(program)) return program.split(/\s+/).find((p) => !p.startsWith("-") && /\.[cm]?[jt]sx?$/.test(p));
  const at = program.lastIndexOf(":");
  if (at <= 0 || at === program.length - 1) return undefined;
  const mod = program.slice(0, at);
  return /^[A-Za-z]$/.test(mod) ? undefined : mod;
}

export class SiteResolver {
  private exists = new Map<string, boolean>();
  private programRoots = new Map<string, string | undefined>();

  constructor(private ctx: SiteContext) {}

  /** Forget what was seen on disk (files come and go). */
  reset(ctx?: SiteContext): void {
    if (ctx) this.ctx = ctx;
    this.exists.clear();
    this.programRoots.clear();
  }

  private isFile(p: string): boolean {
    let v = this.exists.get(p);
    if (v === undefined) {
      try {
        v = fs.statSync(p).isFile();
      } catch {
        v = false;
      }
      this.exists.set(p, v);
    }
    return v;
  }

  /** The workspace folder holding `p`, if any. */
  folderOf(p: string): string | undefined {
    let best: string | undefined;
    for (const f of this.ctx.folders) if (isInside(p, f) && (!best || f.length > best.length)) best = f;
    return best;
  }

  /**
   * The folder a workspace program was recorded from: the nearest folder at or above the run
   * (inside its workspace folder) that holds the program's module.
   */
  programRoot(runDir: string, program: string): string | undefined {
    const key = `${runDir}\0${program}`;
    if (this.programRoots.has(key)) return this.programRoots.get(key);
    let found: string | undefined;
    const mod = programModule(program);
    const top = this.folderOf(runDir);
    if (mod && top) {
      for (let d = path.dirname(runDir); isInside(d, top); d = path.dirname(d)) {
        const f = path.resolve(d, mod);
        if (isInside(f, d) && this.isFile(f)) {
          found = d;
          break;
        }
        if (d === top) break;
      }
    }
    this.programRoots.set(key, found);
    return found;
  }

  /** The roots a run's sites are tried against, in order. */
  rootsFor(runDir: string, program: string): string[] {
    const roots: string[] = [];
    const pr = this.programRoot(runDir, program);
    if (pr) roots.push(pr);
    const own = this.folderOf(runDir);
    if (own) roots.push(own);
    roots.push(...this.ctx.folders);
    if (program in BUILTIN_PROGRAMS) roots.push(this.ctx.extensionPath);
    return [...new Set(roots)];
  }

  /** The file a recorded site names, or undefined when none of the roots holds it. */
  resolve(site: string, runDir: string, program: string): ResolvedSite | undefined {
    const norm = site.replace(/\\/g, "/");
    if (path.isAbsolute(norm)) {
      const abs = path.normalize(norm);
      const inWs = this.folderOf(abs) !== undefined;
      const inExt = isInside(abs, this.ctx.extensionPath);
      return (inWs || inExt) && this.isFile(abs) ? { file: abs, inWorkspace: inWs } : undefined;
    }
    for (const root of this.rootsFor(runDir, program)) {
      const abs = path.resolve(root, norm);
      if (!isInside(abs, root) || !this.isFile(abs)) continue;
      return { file: abs, inWorkspace: this.folderOf(abs) !== undefined };
    }
    return undefined;
  }
}
