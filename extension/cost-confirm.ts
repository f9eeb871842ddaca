/**
 * The cost question before a replay, wherever it starts (a command, the investigator's buttons):
 * the estimate from the run's recorded usage and the user's prices (core/replay/preflight.ts), asked
 * in a modal when it passes `causeway.confirmAboveUsd` (logic/cost.ts says when).
 */
import * as vscode from "vscode";
import { readRun } from "../core/log/reader";
import { RunModel } from "../core/graph/model";
import { estimateCost } from "../core/replay/preflight";
import { replayedCallsFor } from "./logic/agentless";
import { costQuestion } from "./logic/cost";
import type { Services } from "./services";

/** True when the replay may run: under the threshold, or the user said Run. `tests` tests of up to `pairs` pairs each. */
export async function confirmCost(s: Services, run: string, pairs: number, what: string, tests = 1, target?: string): Promise<boolean> {
  const cfg = s.settings();
  let est;
  try {
    const data = readRun(run);
    // at rung 1 one recorded call is re-sent per arm, not the run's
    est = estimateCost(new RunModel(data), pairs * tests, cfg.prices, replayedCallsFor(data, target));
  } catch {
    return true; // an unreadable run fails later with its own message
  }
  const q = costQuestion(est, cfg.confirmAboveUsd, what);
  if (!q) return true;
  return (await vscode.window.showWarningMessage(vscode.l10n.t("Causeway: {0}", q), { modal: true }, vscode.l10n.t("Run"))) === vscode.l10n.t("Run");
}
