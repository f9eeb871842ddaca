/**
 * The program a CLI replay runs (test, attribute, matrix, replay, fix-check, case --investigate).
 *
 * - `--system MODULE:EXPORT` (or a built-in name): the user named it; MODULE resolves against the
 *   working directory.
 * - Else the run's own `run.start.program`: a built-in name loads the built-in module (whatever
 *   command the run carries); anything else runs only when `--allow-program` gives that exact
 *   string, and then exactly what it names: MODULE resolved against the working directory (never
 *   beside the run), or the recorded command line, which must be the one the run names.
 *
 * `--allow-program` approves for this invocation. The CLI prints on stderr what it loads or runs,
 * with the absolute file and its sha256, and checks that hash again when the module has loaded
 * and before every spawn of a command (the file that ran is the file whose hash was printed);
 * `--program-sha256 HEX` pins it in advance (a script's way to refuse a changed file).
 */
import path from "node:path";
import { UsageError, type Parsed } from "./args";
import { singleQuote } from "../log/argv";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { ApprovalError, checkFile, describePlan, planReplay, type ReplayPlan } from "../replay/approval";
import { loadPlan } from "../replay/approved";
import { commandRunRefusal, recordedCommand } from "../replay/command";
import { ReplayError } from "../replay/context";
import { ProgramError } from "../replay/loader";
import type { System } from "../sdk/system";

/** The flags every replaying command takes to name its program (or, without one, the endpoint: replay-rung.ts). */
export const PROGRAM_FLAGS = {
  system: "string",
  "allow-program": "strings",
  "program-sha256": "string",
  "base-url": "string",
  "api-key-env": "string",
  "timeout-s": "number",
} as const;

function usage<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof ApprovalError) throw new UsageError(err.message);
    throw err;
  }
}

function pinOf(p: Parsed): string | undefined {
  const pin = p.flags["program-sha256"] as string | undefined;
  if (pin !== undefined && !/^[0-9a-f]{64}$/.test(pin)) throw new UsageError("--program-sha256 must be 64 lowercase hex digits");
  return pin;
}

async function load(plan: ReplayPlan, p: Parsed, runDir: string): Promise<System> {
  const pin = pinOf(p);
  const sha = plan.kind === "builtin" ? undefined : usage(() => checkFile(plan.file, pin));
  process.stderr.write(`causeway: replaying with ${describePlan(plan, sha)}\n`);
  try {
    return (await loadPlan(plan, readRun(runDir), sha)).system;
  } catch (err) {
    if (err instanceof ProgramError && err.code !== "load") throw new UsageError(err.message);
    if (err instanceof ApprovalError) throw new UsageError(err.message);
    throw err;
  }
}

/** The System a replay of `runDir` runs, from the flags (see the header). */
export async function replayProgram(p: Parsed, runDir: string): Promise<System> {
  const cwd = process.cwd();
  const system = p.flags.system as string | undefined;
  if (system)
    return load(
      usage(() => planReplay({ program: system }, cwd)),
      p,
      runDir,
    );
  const model = new RunModel(readRun(runDir));
  const recorded = model.start.program;
  if (recorded === undefined || recorded === null || recorded === "") throw new UsageError("the run names no program; pass --system MODULE:EXPORT");
  const program = String(recorded);
  const command = recordedCommand(model);
  let plan: ReplayPlan | undefined;
  let why: ApprovalError | undefined;
  try {
    plan = planReplay({ program, command }, cwd);
  } catch (err) {
    if (!(err instanceof ApprovalError)) throw err;
    if (err.code === "mismatch") throw new UsageError(err.message);
    why = err;
  }
  if (plan?.kind !== "builtin") {
    const allowed = (p.flags["allow-program"] as string[] | undefined) ?? [];
    if (!allowed.includes(program)) {
      const given = allowed.length ? ` (--allow-program ${allowed.map(singleQuote).join(", ")} is not it)` : "";
      const runs = plan ? `; replaying runs ${describePlan(plan)}` : "";
      throw new UsageError(
        `the run names ${command ? "the command" : "program"} ${JSON.stringify(program)}${given}${runs}, so pass --allow-program ${singleQuote(program)} (or --system MODULE:EXPORT)`,
      );
    }
    if (why || !plan) throw new UsageError(why?.message ?? `can't replay ${program}`);
  }
  if (plan.kind === "command" && !p.flags["live-tools"]) {
    const refusal = commandRunRefusal(model);
    if (refusal) throw new ReplayError(`can't replay ${path.basename(runDir)}: ${refusal}`);
  }
  return load(plan, p, runDir);
}
