/**
 * The exact test on paired replays: the counts of a set of pairs, and the exact McNemar test on
 * their discordant pairs.
 *
 * @module
 */

/** Counts and rates for a set of replay pairs; see {@link pairedSummary}. */
export interface PairedSummary {
  /** Number of pairs. */
  n: number;
  /** Pairs in which the target happened in the arm *with* the suspect input. */
  kWith: number;
  /** Pairs in which the target happened in the arm *without* the suspect input. */
  kWithout: number;
  /** Discordant pairs where the target happened with the input but not without it. */
  b: number;
  /** Discordant pairs where the target happened without the input but not with it. */
  c: number;
  /** `kWith / n` (0 when `n = 0`). */
  pWith: number;
  /** `kWithout / n` (0 when `n = 0`). */
  pWithout: number;
  /** `pWith − pWithout`. */
  effect: number;
}

// ln 2 split as in fdlibm: LN2_HI has 32 trailing zero bits, so n·LN2_HI is exact for n < 2^32.
const LN2_HI = 6.9314718036912381649e-1;
const LN2_LO = 1.90821492927058770002e-10;

/**
 * Exact two-sided McNemar test on the discordant pairs of a paired design.
 *
 * Under the null hypothesis each discordant pair is equally likely to be
 * `b` (with-only) or `c` (without-only), so `min(b, c)` is Binomial(b + c, ½):
 * `p = min(1, 2 · Σ_{i ≤ min(b,c)} C(b+c, i) / 2^(b+c))`. The sum is
 * evaluated relative to its largest term in log space, so it neither
 * overflows nor loses precision for large b + c (tested to b + c = 4000).
 *
 * @param b - Pairs where the target happened with the input only (integer ≥ 0).
 * @param c - Pairs where the target happened without the input only (integer ≥ 0).
 * @returns The two-sided p-value in (0, 1]; 1 when b + c = 0.
 * @throws RangeError if b or c is not a non-negative integer.
 */
export function mcnemarExact(b: number, c: number): number {
  if (!Number.isInteger(b) || b < 0) throw new RangeError(`mcnemarExact: b must be an integer ≥ 0, got ${b}`);
  if (!Number.isInteger(c) || c < 0) throw new RangeError(`mcnemarExact: c must be an integer ≥ 0, got ${c}`);
  const n = b + c;
  if (n === 0) return 1;
  const m = Math.min(b, c);
  // log(C(n, m) / 2^n) = Σ_{i=1..m} log((n − m + i) / i) − n·ln 2, summed with
  // Neumaier compensation (the partial sums reach ~n while the result is small).
  let sumHi = -n * LN2_HI; // exact: LN2_HI has 32 trailing zero bits
  let sumLo = -n * LN2_LO;
  for (let i = 1; i <= m; i++) {
    const t = Math.log((n - m + i) / i);
    const s = sumHi + t;
    sumLo += Math.abs(sumHi) >= Math.abs(t) ? sumHi - s + t : t - s + sumHi;
    sumHi = s;
  }
  const logTop = sumHi + sumLo;
  // Σ_{i=0..m} C(n, i) / C(n, m), via C(n, i−1) = C(n, i) · i / (n − i + 1); terms decrease.
  let sum = 1;
  let term = 1;
  for (let i = m; i >= 1; i--) {
    term *= i / (n - i + 1);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  const p = 2 * Math.exp(logTop) * sum;
  return Math.min(1, p);
}

/**
 * Summarises paired replay outcomes.
 *
 * Each pair is `[withInput, withoutInput]`: whether the target action
 * happened in the arm with the suspect input and in the arm without it.
 * `b` counts pairs `[true, false]` (with-only), `c` counts `[false, true]`
 * (without-only); these are the inputs to {@link mcnemarExact}, and
 * `kWith`/`kWithout` the inputs to {@link newcombe}.
 *
 * @param pairs - One entry per replay pair.
 * @returns The {@link PairedSummary}; rates are 0 when there are no pairs.
 */
export function pairedSummary(pairs: Array<[boolean, boolean]>): PairedSummary {
  let kWith = 0;
  let kWithout = 0;
  let b = 0;
  let c = 0;
  for (const [w, wo] of pairs) {
    if (w) kWith++;
    if (wo) kWithout++;
    if (w && !wo) b++;
    if (!w && wo) c++;
  }
  const n = pairs.length;
  const pWith = n === 0 ? 0 : kWith / n;
  const pWithout = n === 0 ? 0 : kWithout / n;
  return { n, kWith, kWithout, b, c, pWith, pWithout, effect: pWith - pWithout };
}
