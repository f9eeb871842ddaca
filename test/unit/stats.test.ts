import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, it, expect } from "vitest";
import { Z95, normalCdf, normalQuantile } from "../../core/stats/normal";
import { benjaminiHochberg, sequentialLooks, zFor } from "../../core/stats/corrections";
import { mcnemarExact, pairedSummary } from "../../core/stats/exact-tests";
import { newcombe, wilson, type Interval } from "../../core/stats/intervals";
import { roleFor, suggestedN, verdictFor } from "../../core/stats/verdicts";

// Expected values come from test/reference/stats_reference.py (Python stdlib only).
interface Fixture {
  wilson: { groups: Array<{ label: string; n: number; z: number; rows: Array<[number, number, number]> }> };
  newcombe: { groups: Array<{ label: string; z: number; rows: Array<[number, number, number, number, number, number]> }> };
  mcnemarExact: { rows: Array<[number, number, number]> };
  zFor: { rows: Array<[number, number, number]> };
  normalCdf: { rows: Array<[number, number]> };
  normalQuantile: { rows: Array<[number, number]> };
  benjaminiHochberg: Array<{ p: number[]; q: number; rejected: boolean[]; adjusted: number[] }>;
}

const fixture = JSON.parse(readFileSync(fileURLToPath(new URL("./fixtures/stats-reference.json", import.meta.url)), "utf8")) as Fixture;

const TOL = 1e-9;

/** Collects every mismatch so a failure lists all offending cases at once. */
class Mismatches {
  readonly list: string[] = [];
  checked = 0;
  close(label: string, actual: number, expected: number, tol = TOL): void {
    this.checked++;
    if (!(Math.abs(actual - expected) <= tol)) this.list.push(`${label}: got ${actual}, expected ${expected}`);
  }
  equal(label: string, actual: unknown, expected: unknown): void {
    this.checked++;
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      this.list.push(`${label}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }
  }
}

/** Deterministic PRNG (mulberry32) for the property tests. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round4 = (ci: Interval): Interval => [Number(ci[0].toFixed(4)), Number(ci[1].toFixed(4))];

describe("stats: agreement with the independent Python reference (|Δ| ≤ 1e-9)", () => {
  it("wilson over k ∈ 0..n, n ∈ {0,…,1000}, four z values", () => {
    const m = new Mismatches();
    for (const g of fixture.wilson.groups) {
      for (const [k, lo, hi] of g.rows) {
        const [aLo, aHi] = wilson(k, g.n, g.z);
        m.close(`wilson(${k}, ${g.n}, ${g.label}) lo`, aLo, lo);
        m.close(`wilson(${k}, ${g.n}, ${g.label}) hi`, aHi, hi);
      }
    }
    expect(m.checked).toBe(2 * 4 * (1 + 2 + 3 + 6 + 11 + 21 + 41 + 81 + 161 + 1001));
    expect(m.list).toEqual([]);
  });

  it("newcombe over a grid including 0 and n successes, n = 0 and unequal n", () => {
    const m = new Mismatches();
    for (const g of fixture.newcombe.groups) {
      for (const [k1, n1, k2, n2, lo, hi] of g.rows) {
        const [aLo, aHi] = newcombe(k1, n1, k2, n2, g.z);
        m.close(`newcombe(${k1}, ${n1}, ${k2}, ${n2}, ${g.label}) lo`, aLo, lo);
        m.close(`newcombe(${k1}, ${n1}, ${k2}, ${n2}, ${g.label}) hi`, aHi, hi);
      }
    }
    expect(m.checked).toBeGreaterThan(5000);
    expect(m.list).toEqual([]);
  });

  it("mcnemarExact for b, c ∈ 0..40 and large pairs up to b + c = 4000", () => {
    const m = new Mismatches();
    for (const [b, c, p] of fixture.mcnemarExact.rows) m.close(`mcnemarExact(${b}, ${c})`, mcnemarExact(b, c), p);
    expect(m.checked).toBeGreaterThan(41 * 41);
    expect(m.list).toEqual([]);
  });

  it("mcnemarExact keeps relative precision for tiny p-values", () => {
    const m = new Mismatches();
    for (const [b, c, p] of fixture.mcnemarExact.rows) {
      if (p > 0 && p < 1e-3) m.close(`mcnemarExact(${b}, ${c}) relative`, mcnemarExact(b, c) / p, 1, 1e-10);
    }
    expect(m.checked).toBeGreaterThan(100);
    expect(m.list).toEqual([]);
  });

  it("zFor for k ∈ 1..64 (and other alphas) to 1e-12", () => {
    const m = new Mismatches();
    for (const [k, alpha, z] of fixture.zFor.rows) m.close(`zFor(${k}, ${alpha})`, zFor(k, alpha), z, 1e-12);
    expect(m.checked).toBe(64 + 12);
    expect(m.list).toEqual([]);
  });

  it("normalCdf and normalQuantile", () => {
    const m = new Mismatches();
    for (const [x, cdf] of fixture.normalCdf.rows) {
      m.close(`normalCdf(${x})`, normalCdf(x), cdf, 1e-15);
      if (cdf > 1e-300 && cdf < 0.5) m.close(`normalCdf(${x}) relative`, normalCdf(x) / cdf, 1, 1e-13);
    }
    for (const [p, x] of fixture.normalQuantile.rows) m.close(`normalQuantile(${p})`, normalQuantile(p), x, 1e-12);
    expect(m.list).toEqual([]);
  });

  it("benjaminiHochberg on vectors with ties, all ones, empty, boundaries, random", () => {
    const m = new Mismatches();
    fixture.benjaminiHochberg.forEach(({ p, q, rejected, adjusted }, i) => {
      const res = benjaminiHochberg(p, q);
      m.equal(`BH #${i} rejected`, res.rejected, rejected);
      m.equal(`BH #${i} length`, res.adjusted.length, adjusted.length);
      adjusted.forEach((a, j) => m.close(`BH #${i} adjusted[${j}]`, res.adjusted[j], a));
    });
    expect(fixture.benjaminiHochberg.length).toBeGreaterThanOrEqual(10);
    expect(m.list).toEqual([]);
  });
});

describe("stats: constants and published values", () => {
  it("Z95 and zFor(1) equal Φ⁻¹(0.975)", () => {
    expect(Z95).toBe(1.959963984540054);
    expect(Math.abs(zFor(1) - 1.959963984540054)).toBeLessThanOrEqual(1e-12);
    expect(Math.abs(normalQuantile(0.975) - Z95)).toBeLessThanOrEqual(1e-12);
    expect(Math.abs(normalCdf(Z95) - 0.975)).toBeLessThanOrEqual(1e-15);
  });

  it("zFor grows with k and shrinks with alpha", () => {
    for (let k = 1; k < 64; k++) expect(zFor(k + 1)).toBeGreaterThan(zFor(k));
    expect(zFor(4, 0.01)).toBeGreaterThan(zFor(4, 0.05));
    expect(() => zFor(0)).toThrow(RangeError);
    expect(() => zFor(1, 0)).toThrow(RangeError);
  });

  it("normalQuantile edge values", () => {
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(normalQuantile(1)).toBe(Infinity);
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(-0.1)).toBeNaN();
    expect(normalQuantile(1.1)).toBeNaN();
    expect(normalQuantile(Number.NaN)).toBeNaN();
    expect(normalCdf(-Infinity)).toBe(0);
    expect(normalCdf(Infinity)).toBe(1);
    // Round trip through both tails.
    for (const x of [-8, -5, -2.5, -1, -0.25, 0.25, 1, 2.5, 5]) {
      expect(Math.abs(normalQuantile(normalCdf(x)) - x)).toBeLessThanOrEqual(1e-9);
    }
  });

  it("n = 40: 32/40 vs 0/40 → effect 0.80, CI [0.6284, 0.8950]", () => {
    const s = pairedSummary([
      ...Array.from({ length: 32 }, (): [boolean, boolean] => [true, false]),
      ...Array.from({ length: 8 }, (): [boolean, boolean] => [false, false]),
    ]);
    expect(s.effect).toBeCloseTo(0.8, 12);
    expect(round4(newcombe(s.kWith, s.n, s.kWithout, s.n))).toEqual([0.6284, 0.895]);
  });

  it("n = 40: 32/40 vs 32/40 → [−0.1755, 0.1755]", () => {
    expect(round4(newcombe(32, 40, 32, 40))).toEqual([-0.1755, 0.1755]);
  });

  it("n = 40: 37/40 vs 0/40 → [0.7735, 0.9742]", () => {
    expect(round4(newcombe(37, 40, 0, 40))).toEqual([0.7735, 0.9742]);
  });

  it("n = 40: 25/40 vs 25/40 → [−0.2038, 0.2038], inconclusive, suggestedN 42", () => {
    const ci = newcombe(25, 40, 25, 40);
    expect(round4(ci)).toEqual([-0.2038, 0.2038]);
    expect(verdictFor(ci, true)).toBe("inconclusive");
    expect(suggestedN(40, ci)).toBe(42);
    expect(suggestedN(40, [-0.2038, 0.2038])).toBe(42);
  });

  it("mcnemarExact small cases", () => {
    expect(mcnemarExact(0, 5)).toBe(0.0625);
    expect(mcnemarExact(5, 0)).toBe(0.0625);
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(0, 1)).toBe(1);
    expect(mcnemarExact(1, 9)).toBeCloseTo(0.021484375, 15);
    expect(mcnemarExact(0, 1000) / 2 ** -999).toBeCloseTo(1, 12); // 2·2^-1000, near the bottom of the double range
    expect(mcnemarExact(0, 2000)).toBe(0); // 2^-1999 ≈ 3.5e-602 underflows to 0 in doubles
    expect(Number.isFinite(mcnemarExact(1500, 2500))).toBe(true);
    expect(() => mcnemarExact(-1, 2)).toThrow(RangeError);
    expect(() => mcnemarExact(1.5, 2)).toThrow(RangeError);
  });
});

describe("stats: interval properties", () => {
  const zs = [Z95, zFor(2), zFor(3), zFor(20), zFor(64, 0.01)];

  it("wilson contains k/n, stays in [0, 1] and widens as z grows", () => {
    for (const n of [1, 2, 3, 7, 10, 40, 99, 500]) {
      for (let k = 0; k <= n; k++) {
        let prev: Interval | null = null;
        for (const z of zs) {
          const [lo, hi] = wilson(k, n, z);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(hi).toBeLessThanOrEqual(1);
          expect(lo).toBeLessThanOrEqual(k / n);
          expect(hi).toBeGreaterThanOrEqual(k / n);
          if (prev) {
            expect(lo).toBeLessThanOrEqual(prev[0]);
            expect(hi).toBeGreaterThanOrEqual(prev[1]);
            expect(hi - lo).toBeGreaterThan(prev[1] - prev[0]);
          }
          prev = [lo, hi];
        }
      }
    }
    expect(wilson(0, 0)).toEqual([0, 1]);
    expect(wilson(0, 10)[0]).toBe(0);
    expect(wilson(10, 10)[1]).toBe(1);
    expect(() => wilson(3, 2)).toThrow(RangeError);
    expect(() => wilson(-1, 2)).toThrow(RangeError);
  });

  it("newcombe contains the observed difference, stays in [−1, 1] and widens as z grows", () => {
    const rand = rng(42);
    for (let t = 0; t < 2000; t++) {
      const n1 = Math.floor(rand() * 200);
      const n2 = rand() < 0.5 ? n1 : Math.floor(rand() * 200);
      const k1 = Math.floor(rand() * (n1 + 1));
      const k2 = Math.floor(rand() * (n2 + 1));
      const d = (n1 ? k1 / n1 : 0) - (n2 ? k2 / n2 : 0);
      let prev: Interval | null = null;
      for (const z of zs) {
        const [lo, hi] = newcombe(k1, n1, k2, n2, z);
        expect(lo).toBeGreaterThanOrEqual(-1);
        expect(hi).toBeLessThanOrEqual(1);
        expect(lo).toBeLessThanOrEqual(d + 1e-15);
        expect(hi).toBeGreaterThanOrEqual(d - 1e-15);
        if (prev) {
          expect(lo).toBeLessThanOrEqual(prev[0] + 1e-15);
          expect(hi).toBeGreaterThanOrEqual(prev[1] - 1e-15);
        }
        prev = [lo, hi];
      }
    }
    expect(newcombe(0, 0, 0, 0)).toEqual([-1, 1]);
  });

  it("newcombe of equal proportions is symmetric around 0, and swapping arms negates it", () => {
    for (const n of [1, 5, 10, 40, 160, 1000]) {
      for (let k = 0; k <= n; k += Math.max(1, Math.floor(n / 17))) {
        for (const z of zs) {
          const [lo, hi] = newcombe(k, n, k, n, z);
          expect(Math.abs(lo + hi)).toBeLessThanOrEqual(1e-15);
          expect(lo).toBeLessThanOrEqual(0);
          // Same proportion with a different n in the other arm: d = 0 but no longer symmetric.
          const [a, b] = newcombe(k, n, Math.min(2 * k, 2 * n), 2 * n, z);
          const [c, d] = newcombe(Math.min(2 * k, 2 * n), 2 * n, k, n, z);
          expect(Math.abs(a + d)).toBeLessThanOrEqual(1e-15);
          expect(Math.abs(b + c)).toBeLessThanOrEqual(1e-15);
        }
      }
    }
  });

  it("newcombe narrows as n grows at a fixed effect", () => {
    let prevWidth = Infinity;
    for (const n of [10, 20, 40, 80, 160, 320]) {
      const [lo, hi] = newcombe(0.7 * n, n, 0.3 * n, n);
      expect(hi - lo).toBeLessThan(prevWidth);
      prevWidth = hi - lo;
    }
  });
});

describe("stats: Benjamini–Hochberg properties", () => {
  it("adjusted p-values are monotone in p, ≥ p, ≤ 1, and match rejections away from boundaries", () => {
    const rand = rng(7);
    for (let t = 0; t < 200; t++) {
      const m = 1 + Math.floor(rand() * 30);
      const p = Array.from({ length: m }, () => Number((rand() ** 3).toFixed(5)));
      const q = [0.05, 0.1, 0.2][t % 3];
      const { rejected, adjusted } = benjaminiHochberg(p, q);
      const idx = p.map((_, i) => i).sort((i, j) => p[i] - p[j]);
      for (let r = 0; r < m; r++) {
        const i = idx[r];
        expect(adjusted[i]).toBeGreaterThanOrEqual(p[i]);
        expect(adjusted[i]).toBeLessThanOrEqual(1);
        if (r > 0) expect(adjusted[i]).toBeGreaterThanOrEqual(adjusted[idx[r - 1]]);
        if (Math.abs(adjusted[i] - q) > 1e-12) expect(rejected[i]).toBe(adjusted[i] <= q);
      }
    }
  });

  it("handles empty input and validates arguments", () => {
    expect(benjaminiHochberg([])).toEqual({ rejected: [], adjusted: [] });
    expect(benjaminiHochberg([1, 1, 1])).toEqual({ rejected: [false, false, false], adjusted: [1, 1, 1] });
    expect(() => benjaminiHochberg([0.5, Number.NaN])).toThrow(RangeError);
    expect(() => benjaminiHochberg([1.5])).toThrow(RangeError);
    expect(() => benjaminiHochberg([0.5], 0)).toThrow(RangeError);
  });
});

describe("stats: decision helpers", () => {
  it("verdictFor edge cases", () => {
    expect(verdictFor([0.5, 0.9], false)).toBe("not-applied");
    expect(verdictFor([-0.1, 0.1], false)).toBe("not-applied");
    expect(verdictFor([0.001, 0.4], true)).toBe("causal");
    expect(verdictFor([0, 0.4], true)).toBe("inconclusive"); // lo must be strictly > 0
    expect(verdictFor([-0.9, -0.3], true)).toBe("suppressive");
    expect(verdictFor([-0.3, 0], true)).toBe("inconclusive"); // hi must be strictly < 0
    expect(verdictFor([-0.19, 0.19], true)).toBe("ruled-out");
    expect(verdictFor([-0.2, 0.1], true)).toBe("inconclusive"); // −minEffect < lo is strict
    expect(verdictFor([-0.1, 0.2], true)).toBe("inconclusive"); // hi < minEffect is strict
    expect(verdictFor([-0.25, 0.25], true, 0.3)).toBe("ruled-out");
    expect(verdictFor([-0.25, 0.25], true, 0.25)).toBe("inconclusive");
    expect(verdictFor(newcombe(32, 40, 0, 40), true)).toBe("causal");
    expect(verdictFor(newcombe(0, 40, 32, 40), true)).toBe("suppressive");
    expect(verdictFor(newcombe(32, 40, 32, 40), true)).toBe("ruled-out");
    expect(verdictFor(newcombe(25, 40, 25, 40), true)).toBe("inconclusive");
  });

  it("roleFor edge cases", () => {
    expect(roleFor([0.4, 0.6], 0.8)).toBe("primary"); // 0.4 / 0.8 = 0.5 ≥ 0.5
    expect(roleFor([0.39, 0.6], 0.8)).toBe("confirmed");
    expect(roleFor([0.1, 0.39], 0.8)).toBe("contributing");
    expect(roleFor([0.1, 0.4], 0.8)).toBe("confirmed"); // 0.5 is not < 0.5
    expect(roleFor([0.1, 0.3], 0)).toBe("confirmed");
    expect(roleFor(newcombe(32, 40, 0, 40), 32 / 40)).toBe("primary");
    expect(roleFor(newcombe(37, 40, 0, 40), 37 / 40)).toBe("primary");
    expect(roleFor(newcombe(400, 1000, 350, 1000), 0.4)).toBe("contributing");
  });

  it("suggestedN", () => {
    expect(suggestedN(40, [-0.2038, 0.2038])).toBe(42);
    expect(suggestedN(40, [-0.4, 0.4])).toBe(160); // exact ×4, not 161
    expect(suggestedN(40, [-0.2, 0.2])).toBe(40);
    expect(suggestedN(100, [0.1, 0.3], 0.05)).toBe(400);
    expect(suggestedN(0, [-1, 1])).toBe(0);
    // Running the suggested number of pairs at the same proportions meets the target.
    const n2 = suggestedN(40, newcombe(25, 40, 25, 40));
    const [lo, hi] = newcombe((25 / 40) * n2, n2, (25 / 40) * n2, n2);
    expect((hi - lo) / 2).toBeLessThan(0.2);
    expect(() => suggestedN(40, [-0.2, 0.2], 0)).toThrow(RangeError);
  });

  it("sequentialLooks", () => {
    expect(sequentialLooks(10, 160)).toEqual([10, 20, 40, 80, 160]);
    expect(sequentialLooks(20, 160)).toEqual([20, 40, 80, 160]);
    expect(sequentialLooks(10, 100)).toEqual([10, 20, 40, 80, 100]);
    expect(sequentialLooks(10, 11)).toEqual([10, 11]);
    expect(sequentialLooks(40, 40)).toEqual([40]);
    expect(sequentialLooks(40, 10)).toEqual([40]);
    expect(() => sequentialLooks(0, 100)).toThrow(RangeError);
  });

  it("pairedSummary counts concordant and discordant pairs", () => {
    const s = pairedSummary([
      [true, true],
      [true, false],
      [true, false],
      [false, true],
      [false, false],
    ]);
    expect(s).toEqual({ n: 5, kWith: 3, kWithout: 2, b: 2, c: 1, pWith: 0.6, pWithout: 0.4, effect: 0.6 - 0.4 });
    expect(pairedSummary([])).toEqual({ n: 0, kWith: 0, kWithout: 0, b: 0, c: 0, pWith: 0, pWithout: 0, effect: 0 });
    // b − c equals kWith − kWithout for any set of pairs.
    const rand = rng(3);
    const pairs = Array.from({ length: 500 }, (): [boolean, boolean] => [rand() < 0.6, rand() < 0.3]);
    const t = pairedSummary(pairs);
    expect(t.b - t.c).toBe(t.kWith - t.kWithout);
    expect(t.n).toBe(500);
  });
});
