/**
 * The analyses behind the CLI and the report, for runs that are untrusted input: if an analysis
 * still fails on some run (a defect; every known shape of damage is handled by the reader and
 * sanitize.ts), that run is reported as one that could not be analysed, with its problems, and
 * the others are unaffected. Never throws for a run.
 */
import { investigate, investigateLite, type InvestigateOptions } from "./investigate";
import { influence } from "./influence";
import type { Investigation, RunSummary, Alert } from "./types";
import { problem } from "../log/problems";
import type { RunData } from "../log/reader";
import { safeText } from "../log/sanitize";

/** The run with its events set aside and a problem saying why. */
export function unanalysable(run: RunData, err: unknown): RunData {
  const why = safeText((err as Error)?.message ?? err, 300);
  return {
    ...run,
    events: [],
    tests: [],
    complete: false,
    problems: [...run.problems, problem("analysis-failed", `the run could not be analysed (${why}); its events are not shown`, { file: "events.jsonl" })],
  };
}

export function investigateSafe(run: RunData, opts?: InvestigateOptions): Investigation {
  try {
    return investigate(run, opts);
  } catch (err) {
    return investigate(unanalysable(run, err), opts);
  }
}

export function investigateLiteSafe(run: RunData): { summary: RunSummary; alerts: Alert[] } {
  try {
    return investigateLite(run);
  } catch (err) {
    return investigateLite(unanalysable(run, err));
  }
}

/** Cross-run influence over the runs that can be analysed. */
export function influenceSafe(runs: readonly RunData[]): ReturnType<typeof influence> {
  try {
    return influence(runs);
  } catch {
    return influence(
      runs.filter((r) => {
        try {
          influence([r]);
          return true;
        } catch {
          return false;
        }
      }),
    );
  }
}
