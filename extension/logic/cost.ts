/**
 * Whether to ask before a test, from its cost estimate (core/replay/preflight.ts) and the
 * `causeway.test.confirmAboveUsd` setting. Pure, so it is unit-tested without VS Code.
 */
import type { CostEstimate } from "../../core/replay/preflight";
import { t } from "./l10n";

/** The question to ask, or null when the estimate is under the threshold or money is not estimated. */
export function costQuestion(est: CostEstimate, confirmAboveUsd: number | null, what: string): string | null {
  if (confirmAboveUsd === null || est.max_usd === null || est.max_usd <= confirmAboveUsd) return null;
  return t(
    "{0} may cost up to ${1} (at most {2} model calls, {3} tokens for {4} pairs, from the run's recorded usage and your prices); a sequential test usually stops well before. Run it?",
    what,
    est.max_usd.toFixed(2),
    est.max_model_calls.toLocaleString("en-US"),
    est.max_tokens.toLocaleString("en-US"),
    est.max_pairs,
  );
}
