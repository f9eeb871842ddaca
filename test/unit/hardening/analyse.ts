/** Everything a run goes through in the CLI and the extension, for the hardening tests and the fuzzer. */
import { readRun } from "../../../core/log/reader";
import { verifyRunData } from "../../../core/log/verify";
import { investigate, investigateLite } from "../../../core/analysis/investigate";
import { alertRecord } from "../../../core/analysis/alerts";
import { RunModel } from "../../../core/graph/model";
import { buildGraph, criticalPath, taint } from "../../../core/graph/graph";
import { influence } from "../../../core/analysis/influence";
import { analyseRun } from "../../../extension/logic/analysis";

/** Runs every analysis over one run folder; throws when any of them throws. Returns a JSON-able digest. */
export function analyseEverything(dir: string): { ok: boolean; problems: string[]; alerts: string[] } {
  const run = readRun(dir, { checkBlobs: true });
  const v = verifyRunData(run);
  const lite = investigateLite(run);
  const inv = investigate(run);
  const m = new RunModel(run);
  const g = buildGraph(m, { infer: true });
  criticalPath(g);
  taint(m, g, ["untrusted"], true);
  influence([run]);
  analyseRun(readRun(dir));
  JSON.stringify(inv);
  return { ok: v.ok, problems: v.problems.map((p) => p.code), alerts: lite.alerts.map(alertRecord).map((a) => a.rule) };
}
