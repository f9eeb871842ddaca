import { describe, it, expect } from "vitest";
import { costQuestion } from "../../../extension/logic/cost";
import type { CostEstimate } from "../../../core/replay/preflight";

const est = (usd: number | null): CostEstimate => ({
  calls_per_run: 3,
  tokens_per_run: 900,
  models: {},
  usd_per_run: usd === null ? null : usd / 320,
  max_pairs: 160,
  max_model_calls: 960,
  max_tokens: 288000,
  max_usd: usd,
});

describe("asking before an expensive test", () => {
  it("asks only above causeway.test.confirmAboveUsd, and only when money was estimated", () => {
    expect(costQuestion(est(2.5), 1, "This test")).toMatch(/^This test may cost up to \$2\.50 \(at most 960 model calls, 288,000 tokens for 160 pairs/);
    expect(costQuestion(est(0.5), 1, "This test")).toBeNull();
    expect(costQuestion(est(null), 1, "This test")).toBeNull(); // no price for the model: nothing to compare
    expect(costQuestion(est(2.5), null, "This test")).toBeNull(); // never ask
    expect(costQuestion(est(2.5), 0, "Find the cause")).toMatch(/^Find the cause may cost/);
  });
});
