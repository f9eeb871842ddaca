import { describe, it, expect } from "vitest";
import { PairedSequence, pairedBetting, spendAlpha } from "../../core/stats/betting";
import { PyRandom } from "../../core/sdk/pyrandom";

/** Runs one sequential test on draws from gen until decisive or nMax; returns the final state. */
function sequential(gen: () => number, nMax: number, alpha = 0.05) {
  const s = new PairedSequence({ alpha });
  for (let i = 0; i < nMax; i++) {
    s.push(gen());
    if (s.verdict() !== "inconclusive") break;
  }
  return s.state();
}

describe("the paired betting confidence sequence", () => {
  it("rules out an input whose pairs never differ within 19 pairs (Newcombe cannot at any n)", () => {
    const s = new PairedSequence();
    let n = 0;
    while (s.verdict() === "inconclusive" && n < 200) {
      s.push(0);
      n++;
    }
    // ruled out is an equivalence test (two one-sided tests at alpha/2): 1.225ⁿ ≥ 2/0.05 at n = 19
    expect(n).toBe(19);
    const st = s.state();
    expect(st.verdict).toBe("ruled-out");
    // the sequence's own 1 − α interval, not one clipped to the margin
    expect(st.ci[0]).toBeGreaterThan(-0.2 + 1e-3);
    expect(st.ci[1]).toBeLessThan(0.2 - 1e-3);
    expect(st.effect).toBe(0);
    // a smaller alpha (a family of tests) needs more pairs
    const strict = new PairedSequence({ alpha: 0.05 / 9 });
    for (let i = 0; i < 25; i++) strict.push(0);
    expect(strict.verdict()).toBe("inconclusive");
  });

  it("needs about six one-way discordant pairs for a causal verdict, like the exact test", () => {
    const s = new PairedSequence();
    let k = 0;
    while (s.verdict() !== "causal" && k < 50) {
      s.push(1);
      k++;
    }
    expect(k).toBe(6);
    expect(pairedBetting([1, 1, 1, 1, 1]).verdict).toBe("inconclusive");
    // concordant pairs carry no evidence either way at effect 0
    expect(pairedBetting([0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1]).verdict).toBe("causal");
  });

  it("verdict, interval and p-value agree by construction", () => {
    const rng = new PyRandom(7);
    for (let k = 0; k < 300; k++) {
      const q = rng.random() * 0.5;
      const shift = rng.random() * 0.6 - 0.3;
      const diffs: number[] = [];
      for (let i = 0; i < 5 + Math.floor(rng.random() * 80); i++) {
        const u = rng.random();
        diffs.push(u < q + shift / 2 ? 1 : u < 2 * q ? -1 : 0);
      }
      const st = pairedBetting(diffs);
      const [lo, hi] = st.ci;
      expect(lo).toBeLessThanOrEqual(hi);
      expect(st.p_value).toBeCloseTo(Math.min(1, 1 / st.e_value), 12);
      if (st.verdict === "causal") expect([lo > 0, st.p_value <= 0.05]).toEqual([true, true]);
      else if (st.verdict === "suppressive") expect([hi < 0, st.p_value <= 0.05]).toEqual([true, true]);
      else {
        expect(st.p_value).toBeGreaterThan(0.05);
        expect(lo <= 1e-9 && hi >= -1e-9).toBe(true);
      }
      if (st.verdict === "ruled-out") expect([lo > -0.2, hi < 0.2]).toEqual([true, true]);
    }
  });

  it("keeps its error rate under optional stopping on a null with many discordant pairs", () => {
    const rng = new PyRandom(11);
    let wrong = 0;
    const T = 400;
    for (let k = 0; k < T; k++) {
      const st = sequential(() => {
        const u = rng.random();
        return u < 0.2 ? 1 : u < 0.4 ? -1 : 0;
      }, 200);
      if (st.verdict === "causal" || st.verdict === "suppressive") wrong++;
    }
    // the guarantee is ≤ 5%; 400 tests put 8% about 3 standard errors above it
    expect(wrong / T).toBeLessThan(0.08);
  });

  it("rules out an effect at the margin (±0.2) in at most alpha of the tests", () => {
    const rng = new PyRandom(5);
    let wrong = 0;
    const T = 400;
    for (let k = 0; k < T; k++) {
      const sign = k % 2 ? 1 : -1;
      const st = sequential(() => {
        const u = rng.random();
        return u < 0.3 ? sign : u < 0.4 ? -sign : 0; // true effect ±0.2, exactly at the margin
      }, 200);
      if (st.verdict === "ruled-out") wrong++;
    }
    expect(wrong / T).toBeLessThan(0.08);
  });

  it("covers the true effect at the stopping time", () => {
    const rng = new PyRandom(3);
    let covered = 0;
    const T = 300;
    for (let k = 0; k < T; k++) {
      const st = sequential(() => {
        const u = rng.random();
        return u < 0.3 ? 1 : u < 0.4 ? -1 : 0; // true effect +0.2
      }, 160);
      if (st.ci[0] <= 0.2 && 0.2 <= st.ci[1]) covered++;
    }
    expect(covered / T).toBeGreaterThanOrEqual(0.93);
  });

  it("says how many pairs more would likely decide, and whether n_max still can", () => {
    const s = new PairedSequence();
    for (const d of [1, 0, 0, 0, 1, 0, 0, 0]) s.push(d);
    expect(s.verdict()).toBe("inconclusive");
    const need = s.pairsNeeded()!;
    expect(need).toBeGreaterThan(8);
    expect(need).toBeLessThan(80);
    expect(s.canDecideBy(9)).toBe(false);
    expect(s.canDecideBy(200)).toBe(true);
  });

  it("rejects differences outside [−1, 1] and bad settings", () => {
    expect(() => new PairedSequence().push(2)).toThrow(RangeError);
    expect(() => new PairedSequence({ alpha: 0 })).toThrow(RangeError);
    expect(() => new PairedSequence({ c: 1 })).toThrow(RangeError);
  });

  it("spends alpha in proportion to the evidence weights", () => {
    const a = spendAlpha(0.05, [3, 1]);
    expect(a[0]).toBeCloseTo(0.0375, 12);
    expect(a[1]).toBeCloseTo(0.0125, 12);
    expect(a[0] + a[1]).toBeLessThanOrEqual(0.05);
    expect(spendAlpha(0.05, [0, 0]).map((x) => x.toFixed(3))).toEqual(["0.025", "0.025"]);
  });
});
