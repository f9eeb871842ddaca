/**
 * Corrections for many looks at the data: the Bonferroni critical value for sequential looks and
 * several suspects, the look schedule it pairs with, and the Benjamini–Hochberg procedure for the
 * false discovery rate across many p-values.
 *
 * @module
 */
import { normalQuantile } from "./normal";

/**
 * Bonferroni-corrected two-sided critical value: Φ⁻¹(1 − alpha / (2k)).
 *
 * Use `k = looks × family size` when the same data are examined at several
 * sequential looks and/or for several suspects, so that the overall error
 * rate stays at most `alpha`. `zFor(1)` equals {@link Z95}.
 *
 * @param k - Number of comparisons (≥ 1; need not be an integer).
 * @param alpha - Overall two-sided error rate, in (0, 1). Default 0.05.
 * @returns The critical value z.
 * @throws RangeError if `k < 1` or `alpha` is not in (0, 1).
 */
export function zFor(k: number, alpha = 0.05): number {
  if (!(k >= 1) || !Number.isFinite(k)) throw new RangeError(`zFor: k must be a finite number ≥ 1, got ${k}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`zFor: alpha must be in (0, 1), got ${alpha}`);
  // Φ⁻¹(1 − a) = −Φ⁻¹(a): evaluating the lower tail avoids rounding 1 − a.
  return -normalQuantile(alpha / (2 * k));
}

/**
 * Sample sizes at which a sequential test looks at its data: n, 2n, 4n, …
 * (each strictly below nMax), then nMax. If `nMax ≤ n` the only look is n.
 * Pair this with {@link zFor}`(looks.length × family size)`.
 *
 * @param n - First look (a positive number of pairs).
 * @param nMax - Largest number of pairs to run.
 * @returns Strictly increasing look sizes.
 * @throws RangeError if n is not a positive finite number or nMax is not finite.
 * @example sequentialLooks(10, 160) // [10, 20, 40, 80, 160]
 */
export function sequentialLooks(n: number, nMax: number): number[] {
  if (!(n > 0) || !Number.isFinite(n)) throw new RangeError(`sequentialLooks: n must be a positive finite number, got ${n}`);
  if (!Number.isFinite(nMax)) throw new RangeError(`sequentialLooks: nMax must be finite, got ${nMax}`);
  if (nMax <= n) return [n];
  const looks: number[] = [];
  for (let s = n; s < nMax; s *= 2) looks.push(s);
  looks.push(nMax);
  return looks;
}

const BH_SLACK = 1e-12;

/**
 * Benjamini–Hochberg step-up procedure controlling the false discovery rate.
 *
 * With m p-values sorted ascending, p₍ᵢ₎ is rejected for every i ≤ the largest
 * i with `p₍ᵢ₎ ≤ i·q/m`. A p-value equal to its threshold counts as rejected even
 * when binary rounding puts it a few ulps above (e.g. 0.04 vs 4·0.06/6): the
 * comparison allows a relative slack of 1e-12. Adjusted p-values are
 * `min_{j ≥ i} m·p₍ⱼ₎/j`, capped at 1; they are monotone in the p-values and
 * never below them. Tied p-values get the same adjusted value and decision.
 *
 * @param pValues - P-values in [0, 1], in any order.
 * @param q - Target false discovery rate in (0, 1]. Default 0.05.
 * @returns `rejected[i]` and `adjusted[i]` for `pValues[i]`, in input order.
 * @throws RangeError for a p-value outside [0, 1] (or NaN), or q outside (0, 1].
 */
export function benjaminiHochberg(pValues: number[], q = 0.05): { rejected: boolean[]; adjusted: number[] } {
  if (!(q > 0 && q <= 1)) throw new RangeError(`benjaminiHochberg: q must be in (0, 1], got ${q}`);
  const m = pValues.length;
  for (const p of pValues) {
    if (!(p >= 0 && p <= 1)) throw new RangeError(`benjaminiHochberg: p-values must be in [0, 1], got ${p}`);
  }
  const order = pValues.map((_, i) => i).sort((i, j) => pValues[i] - pValues[j]);
  const rejected = new Array<boolean>(m).fill(false);
  const adjusted = new Array<number>(m).fill(1);
  let cutoff = 0; // number of rejected hypotheses (1-based rank of the last one)
  for (let r = m; r >= 1; r--) {
    if (pValues[order[r - 1]] <= ((r * q) / m) * (1 + BH_SLACK)) {
      cutoff = r;
      break;
    }
  }
  let running = 1;
  for (let r = m; r >= 1; r--) {
    const idx = order[r - 1];
    running = Math.min(running, pValues[idx] * (m / r)); // m/r ≥ 1, so never rounds below p
    adjusted[idx] = running;
    rejected[idx] = r <= cutoff;
  }
  return { rejected, adjusted };
}
