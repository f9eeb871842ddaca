import { describe, it, expect } from "vitest";
import { pct, signed, signedInterval } from "../../core/util/numbers";
import { effect, int, pct as webPct, interval } from "../../webview/labels";
import { formatTest } from "../../core/cli/output";

describe("one formatter for effects and rates", () => {
  it("reads the same in the CLI (ascii, like the reference's %+.2f) and the investigator (a true minus, no -0.00)", () => {
    expect([signed(0.8), signed(-0.15), signed(0), signed(-0.001)]).toEqual(["+0.80", "-0.15", "+0.00", "-0.00"]);
    expect([signed(-0.15, "unicode"), signed(-0.001, "unicode")]).toEqual(["\u22120.15", "+0.00"]);
    expect([signed(undefined), signed(NaN, "unicode", "—"), signed("0.5")]).toEqual(["?", "—", "?"]);
    expect(signedInterval([-0.18, 0.18])).toBe("[-0.18, +0.18]");
    expect([pct(0.8), pct(0.125), pct(null), pct(undefined, "—")]).toEqual(["80%", "13%", "?", "—"]);
    // the webview's helpers are these, with its dash for a missing value
    expect([effect(-0.15), effect(null), webPct(0.8), webPct(undefined), interval([0.63, 0.9])]).toEqual(["\u22120.15", "—", "80%", "—", "[+0.63, +0.90]"]);
  });

  it("counts read with thousands separators, as en-US would write them (without loading a locale)", () => {
    const xs = [0, 7, 999, 1000, -1000, 18234, 1234567, -12345.6, 999.5];
    expect(xs.map(int)).toEqual(xs.map((x) => Math.round(x).toLocaleString("en-US")));
    expect([int(null), int(undefined), int(NaN), int(Infinity)]).toEqual(["—", "—", "—", "—"]);
  });

  it("a sequential test's text says why it stopped", () => {
    const base = { intervention: "input:x", target: "tool=t", p_with: 0.3, p_without: 0.2, effect: 0.1, ci: [-0.1, 0.3], verdict: "inconclusive", n_max: 160 };
    expect(formatTest({ ...base, n: 40, stopped: "futility", n_needed: 62 })).toMatch(
      /INCONCLUSIVE \(stopped at n=40 of the 160 allowed: no effect seen, and more pairs were unlikely to reach a verdict; target reproduced in 30% of replays\)$/,
    );
    expect(formatTest({ ...base, n: 160, stopped: "n_max", n_needed: 400 })).toMatch(
      /\(all 160 allowed pairs used; target reproduced in 30% of replays; about n=400 would decide\)$/,
    );
    expect(formatTest({ ...base, n: 20, stopped: "budget", verdict: "causal", n_needed: null })).toMatch(/CAUSAL \(stopped at n=20: model-call budget\)$/);
    expect(formatTest({ ...base, n: 40, stopped: "decisive", verdict: "ruled-out", n_needed: null })).toMatch(/RULED-OUT$/);
  });
});
