/**
 * Replays from the editor, without vscode: whether replays are on (workspace trust), the worker
 * requests (each with the user's approval of its program: logic/approvals.ts), and one-line
 * descriptions of results. Every replay runs in the worker process (core/replay/client.ts);
 * nothing here runs agent code.
 */
import type { ActionView, Candidate } from "../../core/analysis/types";
import type { Approval } from "../../core/replay/approval";
import type { WorkerRequest } from "../../core/replay/worker-protocol";
import { pct, signed } from "../../core/util/numbers";
import { count, t } from "./l10n";

/** Why replays are unavailable, or undefined when they are available. */
export function replayUnavailableReason(trusted: boolean): string | undefined {
  return trusted
    ? undefined
    : t(
        "Replays run the agent program's code, so they are off in Restricted Mode. Trust this workspace to run Find the cause, Run test and Replay; everything else works.",
      );
}

export interface ReplaySettings {
  allowed: string[];
  n: number;
  nMax: number;
  workers: number;
  /** After Find the cause, narrow each confirmed input to its causing span (causeway.findCause.spans). */
  spans?: boolean;
}

export type ReplayJob =
  | { op: "test"; run: string; intervention: string | string[]; target: string; n?: number; nMax?: number }
  | { op: "attribute"; run: string; target: string; suspects?: string[]; n?: number; nMax?: number }
  | { op: "fixCheck"; run: string; fix: string[]; harm: string; keep?: string[]; n?: number; nMax?: number }
  | { op: "replay"; run: string; remove?: string[]; seed?: number };

/** The worker request for a job on a run recorded by `program`, resolved against `root`, under the user's `approval` (none: a built-in). */
export function buildRequest(job: ReplayJob, program: string, root: string, s: ReplaySettings, approval?: Approval): WorkerRequest {
  const base = { run: job.run, program, root, ...(approval ? { approval: { program: approval.program, file: approval.file, sha256: approval.sha256 } } : {}) };
  switch (job.op) {
    case "test":
      return { op: "test", ...base, intervention: job.intervention, target: job.target, n: job.n ?? s.n, nMax: job.nMax ?? s.nMax, workers: s.workers };
    case "attribute":
      return {
        op: "attribute",
        ...base,
        target: job.target,
        suspects: job.suspects?.length ? job.suspects : undefined,
        n: job.n ?? s.n,
        nMax: job.nMax ?? s.nMax,
        workers: s.workers,
        spans: s.spans !== false,
      };
    case "fixCheck":
      // a fix check compares rates: at least 40 pairs before its first look
      return {
        op: "fixCheck",
        ...base,
        fix: job.fix,
        harm: job.harm,
        keep: job.keep,
        n: job.n ?? Math.max(40, s.n),
        nMax: job.nMax ?? Math.max(160, s.nMax),
        workers: s.workers,
      };
    case "replay":
      return { op: "replay", ...base, remove: job.remove?.length ? job.remove : undefined, seed: job.seed };
  }
}

/** One sentence about a finished job, for a notification (saying so when it replayed without the program). */
export function describeResult(op: ReplayJob["op"], result: unknown): string {
  const text = describeOutcome(op, result);
  const r = (result ?? {}) as Record<string, unknown>;
  if (r.rung === 1) return t("{0} (rung 1: the one recorded call that made the action re-sent, without the program)", text);
  return r.rung === 2 ? t("{0} (rung 2: replayed without the program, tools from the recording)", text) : text;
}

function describeOutcome(op: ReplayJob["op"], result: unknown): string {
  const r = (result ?? {}) as Record<string, unknown>;
  if (op === "attribute") {
    if (typeof r.summary === "string" && r.summary) return r.summary;
    const causes = Array.isArray(r.causes) ? (r.causes as { spec: string; effect: number; role: string }[]) : [];
    return causes.length ? t("Cause: {0}", causes.map((c) => `${c.spec} ${signed(c.effect)} (${c.role})`).join(", ")) : t("No single cause found.");
  }
  if (op === "fixCheck") return typeof r.summary === "string" ? t("Fix check: {0}", r.summary) : t("Fix check finished.");
  if (op === "test") {
    const ci = Array.isArray(r.ci) ? r.ci : [];
    const verdict = String(r.verdict ?? "inconclusive").toUpperCase();
    return t(
      "Removing {0}: {1} happens in {2} of replays instead of {3} — effect {4} [{5}, {6}], n = {7}: {8}.",
      String(r.intervention),
      String(r.target),
      pct(r.p_without),
      pct(r.p_with),
      signed(r.effect),
      signed(ci[0]),
      signed(ci[1]),
      String(r.n),
      verdict + (r.role ? ` (${String(r.role)})` : ""),
    );
  }
  const diffs = Array.isArray(r.diffs) ? r.diffs.length : 0;
  const actions = Array.isArray(r.actions) ? r.actions.length : 0;
  const calls = count(actions, "{0} tool call", "{0} tool calls");
  return diffs
    ? t("The replay differs from the recording in {0} ({1}).", count(diffs, "{0} place", "{0} places"), calls)
    : t("The replay matches the recording ({0}).", calls);
}

/** Multi-line text of a replay-and-diff result, for the output channel. */
export function describeReplay(result: unknown): string[] {
  const r = (result ?? {}) as {
    diffs?: { at: unknown[]; change: string; original?: string; replay?: string }[];
    actions?: { tool?: string; agent?: string }[];
    offTape?: number;
    modelCalls?: number;
  };
  const lines = [
    `tool calls in the replay: ${(r.actions ?? []).map((a) => a.tool).join(", ") || "none"}`,
    `off the tape: ${r.offTape ?? 0}; model calls: ${r.modelCalls ?? 0}`,
  ];
  for (const d of r.diffs ?? []) {
    lines.push(`  ${d.change} at ${(d.at ?? []).join(" ")}: ${d.original ?? ""}${d.replay !== undefined ? ` → ${d.replay}` : ""}`.slice(0, 500));
  }
  return lines;
}

// ------------------------------------------------------------------ Run test suggestions

export interface Suggestion {
  label: string;
  description?: string;
  detail?: string;
  value: string;
  picked?: boolean;
}

const STATUS_TEXT: Record<Candidate["status"], string> = {
  primary: "tested: primary cause",
  contributing: "tested: contributing",
  confirmed: "tested: confirmed cause",
  joint: "tested: joint cause",
  suppressive: "tested: suppressive",
  inconclusive: "tested: inconclusive",
  "no-effect-seen": "tested: no effect seen",
  "ruled-out": "tested: ruled out",
  untested: "not tested",
};

/** What to remove: the action's candidate causes, untrusted untested ones first. */
export function interventionSuggestions(action: ActionView | undefined): Suggestion[] {
  if (!action) return [];
  const rows = [...action.candidates].sort(
    (a, b) => Number(a.status !== "untested") - Number(b.status !== "untested") || Number(a.trust !== "untrusted") - Number(b.trust !== "untrusted"),
  );
  return rows.map((c, i) => ({
    label: c.intervention,
    description: `${c.trust} ${c.kind}${c.agent ? ` → ${c.agent}` : ""}`,
    detail: c.test
      ? `${STATUS_TEXT[c.status]} (effect ${signed(c.test.effect)} [${signed(c.test.ci[0])}, ${signed(c.test.ci[1])}], n = ${c.test.n})`
      : STATUS_TEXT[c.status],
    value: c.intervention,
    picked: i === 0,
  }));
}

/** The target: the call's suggested spec, then the bare tool. */
export function targetSuggestions(action: ActionView | undefined): Suggestion[] {
  if (!action) return [];
  const out: Suggestion[] = [{ label: action.target, description: "this call (suggested)", value: action.target }];
  const bare = `tool=${action.tool}`;
  if (bare !== action.target) out.push({ label: bare, description: `any ${action.tool} call`, value: bare });
  return out;
}

/** n and n-max from an input box: positive integers, n ≤ n-max ≤ 10000. */
export function parseSampleSize(text: string, min = 1, max = 10000): number | undefined {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const v = Number(t);
  return v >= min && v <= max ? v : undefined;
}
