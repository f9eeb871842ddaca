/**
 * Where the CLI finds a program (`MODULE:EXPORT`) and how it reports one it cannot load.
 *
 * A run records its program relative to the folder it was recorded from (`run.start.program`),
 * and that folder is not written into the run. So a program named for a run is looked for in the
 * folders at and above the run (nearest first: the folder holding `runs/` is usually the root),
 * then in the working directory; a program typed for `record` or `--system` is looked for in the
 * working directory first. When no candidate exists the error lists every path tried.
 *
 * A malformed spec, a missing file or a module without the named System are the user's to fix:
 * usage errors (exit 2). A module that throws while loading is a program failure (exit 1).
 */
import fs from "node:fs";
import path from "node:path";
import { UsageError } from "./args";
import { loadProgram, resolveProgram, ProgramError, type ParsedProgram } from "../replay/loader";
import type { System } from "../sdk/system";

/** The folders a run's program is tried against: the run's ancestors, nearest first (at most 8). */
function runRoots(runDir: string): string[] {
  const roots: string[] = [];
  let d = path.dirname(path.resolve(runDir));
  for (let i = 0; i < 8; i++) {
    roots.push(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return roots;
}

/**
 * Resolves `spec` against the candidate roots; the first whose module file exists wins.
 * `runDir` adds the run's folders; `prefer` says whether they come before the working directory.
 */
export function findProgram(spec: string, opts: { cwd: string; runDir?: string; prefer?: "run" | "cwd" }): ParsedProgram {
  let first: ParsedProgram;
  try {
    first = resolveProgram(spec, opts.cwd);
  } catch (err) {
    if (err instanceof ProgramError) throw new UsageError(err.message);
    throw err;
  }
  if (first.builtin) return first;
  const fromRun = opts.runDir ? runRoots(opts.runDir) : [];
  const order = opts.prefer === "run" ? [...fromRun, opts.cwd] : [opts.cwd, ...fromRun];
  const roots = [...new Set(order.map((r) => path.resolve(r)))];
  const tried: string[] = [];
  for (const root of roots) {
    const p = resolveProgram(spec, root);
    if (tried.includes(p.file)) continue;
    tried.push(p.file);
    if (fs.existsSync(p.file) && fs.statSync(p.file).isFile()) return p;
  }
  throw new UsageError(`program file for ${spec} not found; tried ${tried.join(", ")}`);
}

/** Loads a program, turning the user's mistakes (no such export) into usage errors. */
export async function loadCliProgram(p: ParsedProgram): Promise<System> {
  try {
    return await loadProgram(p);
  } catch (err) {
    if (err instanceof ProgramError && err.code !== "load") throw new UsageError(err.message);
    throw err;
  }
}
