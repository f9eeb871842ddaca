/**
 * What the tree, the diagnostics, the status bar and the code lenses need of one run: the core's
 * lite investigation (summary and alerts) plus where in the agents' sources each event was
 * recorded. Computed by core; nothing here judges a run.
 */
import { safeText } from "../../core/log/sanitize";
import { investigateLite } from "../../core/analysis/investigate";
import { REACH_NAMED } from "../../core/analysis/alerts";
import type { Alert, RunSummary } from "../../core/analysis/types";
import type { RunData } from "../../core/log/reader";
import type { Problem } from "../../core/log/problems";
import { replayableWithoutProgram } from "./agentless";

/** One event recorded at a source site. */
export interface SiteHit {
  /** The site's file as recorded (relative to the program's root, or absolute). */
  file: string;
  /** 1-based line. */
  line: number;
  /** The event type: action, decision, input, message, agent.start, … */
  type: string;
  agent: string;
  seq: number;
  /** 1-based line of the event in events.jsonl. */
  eventLine: number;
  /** The tool of an action. */
  tool?: string;
  /** What the call was about: the tool, the decision's purpose, the input's source, the recipient. */
  label: string;
}

export interface RunAnalysis {
  summary: RunSummary;
  alerts: Alert[];
  /** Every problem the reader found (events.jsonl and tests.jsonl). */
  problems: Problem[];
  sites: SiteHit[];
  /** run.start's program ("" when none was recorded). */
  program: string;
  /** The run replays without its program: every model call's full request was recorded (rung 2), or a call that made an action can be re-sent alone (rung 1). */
  agentless: boolean;
  /** How it replays without its program (undefined when it can't). */
  agentlessRung?: 1 | 2;
  /** Milliseconds the analysis took. */
  ms: number;
}

const MAX_SITE_FILE = 1024;

function agentlessOf(rung: 1 | 2 | undefined): Pick<RunAnalysis, "agentless" | "agentlessRung"> {
  return rung ? { agentless: true, agentlessRung: rung } : { agentless: false };
}

/** A recorded site we can use: a short path without control characters, and a positive line. */
export function validSite(site: unknown): { file: string; line: number } | undefined {
  if (!site || typeof site !== "object") return undefined;
  const { file, line } = site as { file?: unknown; line?: unknown };
  // eslint-disable-next-line no-control-regex -- a recorded path with control characters is refused
  if (typeof file !== "string" || !file || file.length > MAX_SITE_FILE || /[\u0000-\u001f]/.test(file)) return undefined;
  if (typeof line !== "number" || !Number.isInteger(line) || line < 1 || line > 10_000_000) return undefined;
  return { file, line };
}

function siteLabel(e: Record<string, unknown>): string {
  const pick = (...xs: unknown[]) => safeText(xs.find((x) => typeof x === "string" && x) ?? "");
  switch (e.type) {
    case "action":
      return pick(e.tool);
    case "decision":
      return pick(e.purpose, e.model);
    case "input":
      return pick(e.source);
    case "message":
      return pick(e.to);
    default:
      return pick(e.agent);
  }
}

export function analyseRun(run: RunData): RunAnalysis {
  const t0 = performance.now();
  const { summary, alerts } = investigateLite(run, { reachNamed: REACH_NAMED });
  const sites: SiteHit[] = [];
  for (const e of run.events) {
    const s = validSite(e.site);
    if (!s) continue;
    sites.push({
      file: s.file,
      line: s.line,
      type: safeText(e.type),
      agent: safeText(e.agent),
      seq: e.seq,
      eventLine: e.line,
      tool: e.type === "action" && typeof e.tool === "string" ? e.tool : undefined,
      label: siteLabel(e),
    });
  }
  return {
    summary,
    alerts,
    problems: run.problems,
    sites,
    program: summary.program,
    ...agentlessOf(summary.decisions > 0 ? replayableWithoutProgram(run) : undefined),
    ms: performance.now() - t0,
  };
}
