/**
 * Turns a replay plan (approval.ts) into the System the engine replays, for the CLI and the
 * worker. A built-in loads this package's module; a module loads the planned file, whose sha256
 * is checked before and after it loads (so the file that ran is the one whose hash was shown or
 * approved); a command runs the planned argv, its file's hash checked again before every spawn.
 */
import type { RunData } from "../log/reader";
import type { System } from "../sdk/system";
import { ApprovalError, checkFile, type ReplayPlan } from "./approval";
import { CommandSystem } from "./command";
import { loadProgram, resolveProgram } from "./loader";

export interface LoadedPlan {
  system: System;
  /** The sha256 of the program file that was loaded (undefined for a built-in). */
  sha256?: string;
}

/** Loads what `plan` names. `expected`: the approved sha256 (the extension's stored approval, the CLI's pin). */
export async function loadPlan(plan: ReplayPlan, run: RunData, expected?: string): Promise<LoadedPlan> {
  if (plan.kind === "builtin") return { system: await loadProgram(resolveProgram(plan.program, process.cwd())) };
  const sha256 = checkFile(plan.file, expected);
  if (plan.kind === "command") return { system: new CommandSystem(run, { root: plan.root, command: plan.argv, pin: { file: plan.file, sha256 } }), sha256 };
  const system = await loadProgram({ spec: plan.program, file: plan.file, exportName: plan.exportName, root: plan.root, builtin: false });
  if (checkFile(plan.file) !== sha256) throw new ApprovalError(`the program file ${plan.file} changed while it was loading (sha256 ${sha256} before)`);
  return { system, sha256 };
}
