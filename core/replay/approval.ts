/**
 * What a replay will run, worked out from the program string the user approves and nothing else,
 * and the checks that it is what they approved. No transpiler here: the extension host uses it.
 *
 * - A built-in name (`causeway:demo`) loads only this package's own module; a command the run
 *   carries is ignored.
 * - `MODULE:EXPORT` loads MODULE resolved against the root the caller chose (the working
 *   directory, the workspace folder), never against the run's folder.
 * - A run recorded by the preload names its command line in `run.start.program`
 *   (formatCommand of `meta.command`); the two must be the same string, else the run is refused
 *   naming both. What is spawned is parseCommand of the approved string: no other field of the
 *   run chooses it.
 *
 * An approval is for one program string, one resolved file and that file's sha256.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { formatCommand, parseCommand } from "../log/argv";
import { isBuiltin, splitSpec } from "./programs";

export class ApprovalError extends Error {
  readonly kind = "not-allowed" as const;
  constructor(
    message: string,
    /** mismatch: the run contradicts itself or the approval; unknown: no program to plan; file: the file is missing or changed. */
    readonly code: "mismatch" | "unknown" | "file" | "not-approved" = "mismatch",
  ) {
    super(message);
    this.name = "ApprovalError";
  }
}

export type ReplayPlan =
  | { kind: "builtin"; program: string }
  | { kind: "module"; program: string; file: string; exportName: string; root: string }
  | { kind: "command"; program: string; argv: string[]; file: string; root: string };

/** An approval: the exact program string, the absolute file it resolved to, and the file's sha256. */
export interface Approval {
  program: string;
  file: string;
  sha256: string;
}

/** What the plan needs from a run: its `run.start.program`, and `meta.command` when the preload recorded it. */
export interface RunProgram {
  program: string;
  command?: readonly string[];
}

export function sha256File(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Node options that take the next argument as their value. */
const NODE_VALUE_OPTS = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "--env-file",
  "--input-type",
  "--title",
  "--stack-size",
]);
const SCRIPT = /\.[cm]?[jt]sx?$/;

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const f = path.join(dir, name);
    try {
      if (fs.statSync(f).isFile()) return f;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/**
 * The file a command runs: for `node [OPTIONS] SCRIPT …` the script; for a script run by itself
 * (`agent.mjs …`) that file; else the executable (a path, or found on PATH). Relative paths resolve
 * against `root`. Undefined when there is none (`node -e CODE`, an executable not on PATH).
 */
export function commandFile(argv: readonly string[], root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const [first] = argv;
  if (!first) return undefined;
  if (first === "node" || path.basename(first) === "node") {
    for (let i = 1; i < argv.length; i++) {
      const a = argv[i];
      if (a === "-e" || a === "--eval" || a === "-p" || a === "--print") return undefined;
      if (a === "--") return argv[i + 1] ? path.resolve(root, argv[i + 1]) : undefined;
      if (a.startsWith("-")) {
        if (NODE_VALUE_OPTS.has(a)) i++;
        continue;
      }
      return path.resolve(root, a);
    }
    return undefined;
  }
  if (SCRIPT.test(first) || first.includes("/") || first.includes(path.sep)) return path.resolve(root, first);
  return onPath(first, env);
}

/**
 * What replaying a run with program `run.program` runs, resolved against `root`. Throws
 * ApprovalError when the run contradicts itself (its command is not the one its program names).
 */
export function planReplay(run: RunProgram, root: string, env: NodeJS.ProcessEnv = process.env): ReplayPlan {
  const program = run.program;
  if (isBuiltin(program)) return { kind: "builtin", program };
  if (run.command) {
    const recorded = formatCommand(run.command);
    if (recorded !== program) {
      throw new ApprovalError(
        `the run names the program ${JSON.stringify(program)} but records the command ${JSON.stringify(recorded)}; a replay runs exactly what was approved, so this run is refused`,
      );
    }
    if (splitSpec(program) && !/\s/.test(program))
      throw new ApprovalError(`the run names the module ${JSON.stringify(program)} but records a command; it is refused`);
    const argv = parseCommand(program);
    if (formatCommand(argv) !== recorded) throw new ApprovalError(`the command ${JSON.stringify(program)} does not read back as itself`);
    const file = commandFile(argv, root, env);
    if (!file) throw new ApprovalError(`can't tell which program file the command ${JSON.stringify(program)} runs, so it can't be approved`, "unknown");
    return { kind: "command", program, argv, file, root: path.resolve(root) };
  }
  const parts = splitSpec(program);
  if (!parts)
    throw new ApprovalError(`the run names the program ${JSON.stringify(program)}, which is neither MODULE:EXPORT nor a command it recorded`, "unknown");
  return { kind: "module", program, file: path.resolve(root, parts.mod), exportName: parts.exportName, root: path.resolve(root) };
}

/** One line saying what the plan runs: the full command or module, the absolute file, its hash. */
export function describePlan(plan: ReplayPlan, sha256?: string): string {
  const hash = sha256 ? `, sha256 ${sha256}` : "";
  if (plan.kind === "builtin") return `the built-in program ${plan.program}`;
  if (plan.kind === "module") return `${plan.file} (export ${plan.exportName}${hash})`;
  return `the command ${plan.program} in ${plan.root} (program file ${plan.file}${hash})`;
}

/**
 * The sha256 of the plan's file, checked against `expected` when given. Throws ApprovalError when
 * the file is missing or its hash is not the approved one.
 */
export function checkFile(file: string, expected?: string): string {
  let sha: string;
  try {
    sha = sha256File(file);
  } catch {
    throw new ApprovalError(`the program file ${file} does not exist`, "file");
  }
  if (expected !== undefined && sha !== expected)
    throw new ApprovalError(`the program file ${file} changed since it was approved (approved sha256 ${expected}, now ${sha})`, "file");
  return sha;
}

/**
 * Does `approval` cover `plan`? The same program string and the same resolved file; the hash is
 * checked apart (checkFile), when the file is read.
 */
export function checkApproval(plan: ReplayPlan, approval: Approval | undefined): void {
  if (plan.kind === "builtin") return;
  if (!approval || approval.program !== plan.program) {
    throw new ApprovalError(
      `program ${JSON.stringify(plan.program)} is not approved; replaying runs ${describePlan(plan)}, so approve it first`,
      "not-approved",
    );
  }
  if (path.resolve(approval.file) !== plan.file) {
    throw new ApprovalError(`the approval of ${JSON.stringify(plan.program)} is for ${approval.file}, but here it runs ${plan.file}`);
  }
}
