/**
 * The extension's approvals of replay programs, apart from VS Code. An approval is stored in the
 * extension's workspace state (never in a settings file a folder can ship): the exact program
 * string, the absolute file it resolves to in the workspace folder, and that file's sha256. A
 * replay runs without asking only when all three match; a changed file asks again.
 *
 * `causeway.allowedPrograms` approves nothing by itself: a settings value has no hash, and a
 * workspace's `.vscode/settings.json` is written by whoever made the folder. A program it lists
 * is asked about once like any other (the question says that the setting lists it).
 */
import { checkFile, planReplay, type Approval, type ReplayPlan } from "../../core/replay/approval";
import { recordedCommand } from "../../core/replay/command";
import { RunModel } from "../../core/graph/model";
import type { RunData } from "../../core/log/reader";
import { t } from "./l10n";

export interface StoredApproval extends Approval {
  /** The folder the program resolved against (the workspace folder). */
  root: string;
  /** When it was approved (ISO time). */
  at: string;
}

export type ApprovalState =
  { status: "builtin" } | { status: "approved"; approval: StoredApproval } | { status: "changed"; previous: StoredApproval } | { status: "ask" };

/** Well-formed stored approvals (the state is ours, but read it as data). */
export function parseApprovals(v: unknown): StoredApproval[] {
  if (!Array.isArray(v)) return [];
  return v.filter(
    (a): a is StoredApproval =>
      !!a &&
      typeof a === "object" &&
      typeof a.program === "string" &&
      typeof a.file === "string" &&
      typeof a.root === "string" &&
      typeof a.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(a.sha256),
  );
}

/** Is `plan`, whose file now hashes to `sha256`, approved, approved for other contents, or new? */
export function approvalState(plan: ReplayPlan, stored: readonly StoredApproval[], sha256: string): ApprovalState {
  if (plan.kind === "builtin") return { status: "builtin" };
  const same = stored.filter((a) => a.program === plan.program && a.file === plan.file);
  const hit = same.find((a) => a.sha256 === sha256);
  if (hit) return { status: "approved", approval: hit };
  return same.length ? { status: "changed", previous: same[same.length - 1] } : { status: "ask" };
}

/** The list with `a` in place of any earlier approval of the same program and file. */
export function withApproval(stored: readonly StoredApproval[], a: StoredApproval): StoredApproval[] {
  return [...stored.filter((x) => !(x.program === a.program && x.file === a.file)), a];
}

/** The modal's question and detail: the full command or module, the absolute file, its hash. */
export function approvalPrompt(
  plan: Exclude<ReplayPlan, { kind: "builtin" }>,
  sha256: string,
  o: { previous?: StoredApproval; listedInSettings?: boolean },
): { message: string; detail: string } {
  const message = o.previous
    ? t("{0} changed since you allowed it. Allow Causeway to run it for replays?", plan.file)
    : t("Allow Causeway to run {0} for replays?", plan.program);
  const what =
    plan.kind === "command"
      ? t("Command: {0}\nRuns in: {1}\nProgram file: {2}", plan.program, plan.root, plan.file)
      : t("Module: {0} (export {1})", plan.file, plan.exportName);
  const lines = [what, `sha256: ${sha256}`];
  if (o.previous) lines.push(t("Allowed before with sha256: {0}", o.previous.sha256));
  if (o.listedInSettings) lines.push(t("causeway.allowedPrograms lists it, but a settings value cannot approve code: a folder can ship its own settings."));
  lines.push(
    t(
      "Replaying loads and runs this program's code in a separate process, with the recorded tool results served from the log. Only allow programs you trust. The approval is kept for this file with this hash; if the file changes, Causeway asks again.",
    ),
  );
  return { message, detail: lines.join("\n") };
}

/** What replaying a run needs from the user: nothing (a built-in, a matching approval), a question, or a refusal. */
export type PermitDecision =
  { kind: "run"; approval?: Approval } | { kind: "ask"; approval: Approval; message: string; detail: string } | { kind: "refuse"; reason: string };

/**
 * The decision for replaying `program` of `run` with programs resolved against `root` (the
 * workspace folder), given the stored approvals and whether the settings list the program.
 */
export function decidePermit(
  program: string,
  root: string,
  run: RunData | undefined,
  stored: readonly StoredApproval[],
  listedInSettings: boolean,
): PermitDecision {
  if (!program) return { kind: "refuse", reason: t("this run recorded no program (run.start.program), so it cannot be replayed") };
  let plan: ReplayPlan;
  try {
    plan = planReplay({ program, command: run ? recordedCommand(new RunModel(run)) : undefined }, root);
  } catch (err) {
    return { kind: "refuse", reason: (err as Error).message };
  }
  if (plan.kind === "builtin") return { kind: "run" };
  let sha256: string;
  try {
    sha256 = checkFile(plan.file);
  } catch {
    return { kind: "refuse", reason: t("the program {0} is not in this workspace folder (looked for {1})", program, plan.file) };
  }
  const approval = { program, file: plan.file, sha256 };
  const state = approvalState(plan, stored, sha256);
  if (state.status === "approved") return { kind: "run", approval };
  return { kind: "ask", approval, ...approvalPrompt(plan, sha256, { previous: state.status === "changed" ? state.previous : undefined, listedInSettings }) };
}
