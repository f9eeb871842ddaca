/**
 * Where the CLI finds a program (`MODULE:EXPORT`) for `record`, and how it reports one it cannot
 * load. A program resolves against the working directory only, never against a run's folders
 * (a replay's program: replay-program.ts, on the same rule).
 *
 * A malformed spec, a missing file or a module without the named System are the user's to fix:
 * usage errors (exit 2). A module that throws while loading is a program failure (exit 1).
 */
import fs from "node:fs";
import { UsageError } from "./args";
import { loadProgram, resolveProgram, ProgramError, type ParsedProgram } from "../replay/loader";
import type { System } from "../sdk/system";

/** Resolves `spec` (typed for `record` or `--system`) against the working directory only. */
export function findProgram(spec: string, opts: { cwd: string }): ParsedProgram {
  let p: ParsedProgram;
  try {
    p = resolveProgram(spec, opts.cwd);
  } catch (err) {
    if (err instanceof ProgramError) throw new UsageError(err.message);
    throw err;
  }
  if (p.builtin || (fs.existsSync(p.file) && fs.statSync(p.file).isFile())) return p;
  throw new UsageError(`program file for ${spec} not found; tried ${p.file}`);
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
