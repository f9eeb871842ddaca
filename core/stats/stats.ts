/**
 * Statistics for paired causal replay.
 *
 * A causal test replays the same system N times in pairs: once *with* a
 * suspect input and once *without* it, and records whether a target action
 * happened in each arm. Each arm's rate gets a Wilson score interval, and the
 * difference `p_with − p_without` gets Newcombe's hybrid score interval
 * (method 10). Newcombe's interval treats the two arms as independent samples:
 * it ignores the pairing, so on paired data (where the two arms of a pair are
 * usually positively correlated) it is conservative — wider than it needs to
 * be, never narrower. The exact McNemar test does use the pairing: it looks
 * only at discordant pairs (target with the input only, `b`, or without it
 * only, `c`) and is exact under the null hypothesis that both kinds of
 * discordance are equally likely. All intervals are two-sided normal-theory
 * score intervals at level `1 − alpha`; when an interval is computed at
 * several sample sizes (sequential looks, e.g. {@link sequentialLooks}) or
 * for several suspects, use {@link zFor} with `k = looks × family size`: the
 * Bonferroni correction keeps the overall error rate at most `alpha`, which
 * is what makes stopping as soon as an interval is decisive safe.
 * {@link benjaminiHochberg} controls the false discovery rate across many
 * p-values instead. Every function here is pure and dependency-free.
 *
 * @module
 */

/** Two-sided 95% standard-normal critical value, Φ⁻¹(0.975). */
export const Z95 = 1.959963984540054;

/** A closed interval `[lo, hi]` with `lo ≤ hi`. */
export type Interval = [number, number];

/**
 * Outcome of one causal test (one suspect input, N replay pairs):
 * - `"causal"`: the interval for `p_with − p_without` lies entirely above 0;
 * - `"suppressive"`: it lies entirely below 0 (the input prevents the action);
 * - `"ruled-out"`: it lies strictly inside `(−minEffect, minEffect)`;
 * - `"inconclusive"`: none of the above — more pairs are needed;
 * - `"not-applied"`: the intervention removed nothing, so nothing was tested.
 */
export type Verdict = "causal" | "suppressive" | "ruled-out" | "inconclusive" | "not-applied";

/**
 * How much of the target action's rate a causal input accounts for, judged by
 * the effect interval relative to `p_with`:
 * - `"primary"`: the effect is at least half of `p_with` (lower bound);
 * - `"contributing"`: the effect is less than half of `p_with` (upper bound);
 * - `"confirmed"`: causal, but its share cannot be pinned down either way.
 */
export type Role = "primary" | "contributing" | "confirmed";

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

// ---------------------------------------------------------------------------
// Normal distribution
// ---------------------------------------------------------------------------

const SQRT2 = Math.SQRT2;
const SQRT_2PI = 2.5066282746310002; // √(2π)
const ONE_OVER_SQRT_PI = 0.5641895835477563; // 1/√π

// W. J. Cody, "Rational Chebyshev approximations for the error function",
// Math. Comp. 23 (1969) 631–638; coefficients as in netlib specfun CALERF.
const ERF_A = [3.1611237438705656, 113.864154151050156, 377.485237685302021, 3209.37758913846947, 0.185777706184603153];
const ERF_B = [23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062];
const ERFC_C = [
  0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131, 881.95222124176909,
  1712.04761263407058, 2051.07837782607147, 1230.33935479799725, 2.15311535474403846e-8,
];
const ERFC_D = [
  15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019, 3290.79923573345963,
  4362.61909014324716, 3439.36767414372164, 1230.33935480374942,
];
const ERFC_P = [
  0.305326634961232344, 0.360344899949804439, 0.125781726111229246, 0.0160837851487422766, 6.58749161529837803e-4,
  0.0163153871373020978,
];
const ERFC_Q = [2.56852019228982242, 1.87295284992346047, 0.527905102951428412, 0.0605183413124413191, 0.00233520497626869185];

/** exp(−y²), computed as exp(−t²)·exp(−(y−t)(y+t)) with t = y rounded down to 1/16 to limit error growth. */
function expNegSquare(y: number): number {
  const t = Math.trunc(y * 16) / 16;
  return Math.exp(-t * t) * Math.exp(-(y - t) * (y + t));
}

/** Complementary error function, relative accuracy close to machine precision (Cody 1969). */
function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const y = Math.abs(x);
  if (y <= 0.46875) {
    const z = y * y;
    let num = ERF_A[4] * z;
    let den = z;
    for (let i = 0; i < 3; i++) {
      num = (num + ERF_A[i]) * z;
      den = (den + ERF_B[i]) * z;
    }
    return 1 - (x * (num + ERF_A[3])) / (den + ERF_B[3]);
  }
  let r: number;
  if (y <= 4) {
    let num = ERFC_C[8] * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + ERFC_C[i]) * y;
      den = (den + ERFC_D[i]) * y;
    }
    r = ((num + ERFC_C[7]) / (den + ERFC_D[7])) * expNegSquare(y);
  } else if (y >= 26.543) {
    r = 0;
  } else {
    const z = 1 / (y * y);
    let num = ERFC_P[5] * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + ERFC_P[i]) * z;
      den = (den + ERFC_Q[i]) * z;
    }
    const s = (z * (num + ERFC_P[4])) / (den + ERFC_Q[4]);
    r = ((ONE_OVER_SQRT_PI - s) / y) * expNegSquare(y);
  }
  return x < 0 ? 2 - r : r;
}

/**
 * Standard normal cumulative distribution function Φ(x) = P(Z ≤ x).
 *
 * Computed as `erfc(−x/√2) / 2` with W. J. Cody's rational approximations,
 * so both tails keep close to full relative precision.
 *
 * @param x - Any real number (±Infinity allowed).
 * @returns Φ(x) in [0, 1]; NaN for NaN.
 */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / SQRT2);
}

// Acklam's rational approximation to Φ⁻¹ (relative error ≈ 1.15e-9), refined below.
const ACK_A = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
const ACK_B = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
const ACK_C = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const ACK_D = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
const ACK_P_LOW = 0.02425;

/** Acklam's initial approximation for 0 < p ≤ 0.5. */
function acklamLower(p: number): number {
  const [a0, a1, a2, a3, a4, a5] = ACK_A as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = ACK_B as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = ACK_C as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = ACK_D as [number, number, number, number];
  if (p < ACK_P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}

/**
 * Inverse of the standard normal CDF: the x with Φ(x) = p.
 *
 * Acklam's rational approximation refined by Halley steps against
 * {@link normalCdf}; the result is accurate to about 1e-15 relative in the
 * body and to roughly 1e-13 absolute even in the far tails. The lower tail is
 * always the one solved (Φ⁻¹(p) = −Φ⁻¹(1 − p) for p > 0.5, where `1 − p` is
 * exact), so no precision is lost near p = 1 beyond what `p` itself carries.
 *
 * @param p - Probability in [0, 1].
 * @returns Φ⁻¹(p); −Infinity for 0, +Infinity for 1, NaN outside [0, 1] or for NaN.
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  if (p > 0.5) return -lowerQuantile(1 - p);
  return lowerQuantile(p);
}

/** Φ⁻¹(p) for 0 < p < 0.5 (result ≤ 0), refined by Halley's method. */
function lowerQuantile(p: number): number {
  let x = acklamLower(p);
  for (let i = 0; i < 4; i++) {
    const e = normalCdf(x) - p;
    // u = e / φ(x); φ(x) underflows only for p below ~1e-300, where the
    // initial approximation is already as good as the arithmetic allows.
    const u = e * SQRT_2PI * Math.exp((x * x) / 2);
    if (!Number.isFinite(u)) break;
    const step = u / (1 + (x * u) / 2);
    x -= step;
    if (Math.abs(step) <= 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}

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

// ---------------------------------------------------------------------------
// Intervals
// ---------------------------------------------------------------------------

function checkCount(fn: string, k: number, n: number): void {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`${fn}: n must be a finite number ≥ 0, got ${n}`);
  if (!Number.isFinite(k) || k < 0 || k > n) throw new RangeError(`${fn}: k must be in [0, n] (n = ${n}), got ${k}`);
}

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/**
 * Wilson score interval for a binomial proportion k / n.
 *
 * `center = (k + z²/2) / (n + z²)`, `half = z·√(k(n−k)/n + z²/4) / (n + z²)`;
 * the result is `[center − half, center + half]` clamped to [0, 1], with the
 * lower bound exactly 0 when k = 0 and the upper bound exactly 1 when k = n.
 *
 * @param k - Successes, 0 ≤ k ≤ n.
 * @param n - Trials, ≥ 0. With n = 0 nothing is known and the result is [0, 1].
 * @param z - Critical value (default {@link Z95}; see {@link zFor}).
 * @returns `[lo, hi]` within [0, 1].
 * @throws RangeError for negative or non-finite counts, or k > n.
 */
export function wilson(k: number, n: number, z: number = Z95): Interval {
  checkCount("wilson", k, n);
  if (n === 0) return [0, 1];
  const z2 = z * z;
  const denom = n + z2;
  const center = (k + z2 / 2) / denom;
  const half = (z * Math.sqrt((k * (n - k)) / n + z2 / 4)) / denom;
  const lo = k === 0 ? 0 : clamp01(center - half);
  const hi = k === n ? 1 : clamp01(center + half);
  return [lo, hi];
}

/**
 * Newcombe's hybrid score interval (method 10) for the difference of two
 * proportions, `d = kWith/nWith − kWithout/nWithout`.
 *
 * With each arm's {@link wilson} interval `[l1, u1]` and `[l2, u2]`:
 * `lo = d − √((p1 − l1)² + (u2 − p2)²)`, `hi = d + √((u1 − p1)² + (p2 − l2)²)`.
 * An arm with n = 0 is treated as p = 0 with Wilson interval [0, 1].
 * The arms are treated as independent, so for paired replays the interval is
 * conservative (see the module comment). The result always lies in [−1, 1].
 *
 * @param kWith - Successes in the arm with the suspect input.
 * @param nWith - Trials in that arm.
 * @param kWithout - Successes in the arm without the suspect input.
 * @param nWithout - Trials in that arm.
 * @param z - Critical value (default {@link Z95}).
 * @returns `[lo, hi]` for `p_with − p_without`.
 * @throws RangeError for invalid counts (as {@link wilson}).
 */
export function newcombe(kWith: number, nWith: number, kWithout: number, nWithout: number, z: number = Z95): Interval {
  const [l1, u1] = wilson(kWith, nWith, z);
  const [l2, u2] = wilson(kWithout, nWithout, z);
  const p1 = nWith === 0 ? 0 : kWith / nWith;
  const p2 = nWithout === 0 ? 0 : kWithout / nWithout;
  const d = p1 - p2;
  const lo = d - Math.hypot(p1 - l1, u2 - p2);
  const hi = d + Math.hypot(u1 - p1, p2 - l2);
  return [Math.max(-1, lo), Math.min(1, hi)];
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

// ln 2 split as in fdlibm: LN2_HI has 32 trailing zero bits, so n·LN2_HI is exact for n < 2^32.
const LN2_HI = 6.93147180369123816490e-1;
const LN2_LO = 1.90821492927058770002e-10;
const BH_SLACK = 1e-12;

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

// ---------------------------------------------------------------------------
// Decision helpers for the replay engine
// ---------------------------------------------------------------------------

/**
 * Classifies a causal test from the Newcombe interval of `p_with − p_without`.
 *
 * In order: `"not-applied"` when the intervention removed nothing
 * (`applied = false`); `"causal"` when `lo > 0`; `"suppressive"` when
 * `hi < 0`; `"ruled-out"` when `−minEffect < lo` and `hi < minEffect`
 * (any effect is smaller than the smallest one worth reporting);
 * otherwise `"inconclusive"`.
 *
 * @param ci - `[lo, hi]` for the effect, e.g. from {@link newcombe}.
 * @param applied - Whether the suspect input was actually removed in the "without" arm.
 * @param minEffect - Smallest effect size of interest (default 0.2).
 * @returns The {@link Verdict}.
 */
export function verdictFor(ci: Interval, applied: boolean, minEffect = 0.2): Verdict {
  const [lo, hi] = ci;
  if (!applied) return "not-applied";
  if (lo > 0) return "causal";
  if (hi < 0) return "suppressive";
  if (-minEffect < lo && hi < minEffect) return "ruled-out";
  return "inconclusive";
}

/**
 * How large a causal effect is relative to the target's rate with the input.
 *
 * `"primary"` when `lo / pWith ≥ 0.5` (the input accounts for at least half
 * of the action); `"contributing"` when `hi / pWith < 0.5` (it accounts for
 * less than half); otherwise, or when `pWith ≤ 0`, `"confirmed"`.
 * Meaningful for tests whose verdict is `"causal"`.
 *
 * @param ci - `[lo, hi]` for `p_with − p_without`.
 * @param pWith - Observed rate of the target action with the input.
 * @returns The {@link Role}.
 */
export function roleFor(ci: Interval, pWith: number): Role {
  const [lo, hi] = ci;
  if (!(pWith > 0)) return "confirmed";
  if (lo / pWith >= 0.5) return "primary";
  if (hi / pWith < 0.5) return "contributing";
  return "confirmed";
}

/**
 * Number of pairs after which the interval's half-width `(hi − lo) / 2`
 * should drop below `minEffect`, assuming the width shrinks like 1/√n:
 * `ceil(n · (halfWidth / minEffect)²)`. The result is smaller than `n` when
 * the interval is already narrow enough. A relative slack of 1e-9 keeps
 * floating-point noise from adding a pair (e.g. `n · 1.0000000000000002`).
 *
 * @param n - Pairs already run (≥ 0; with 0 there is nothing to extrapolate from and 0 is returned).
 * @param ci - The current `[lo, hi]`.
 * @param minEffect - Target half-width (default 0.2, > 0).
 * @returns Suggested total number of pairs.
 * @throws RangeError if n is negative or not finite, or minEffect ≤ 0.
 * @example suggestedN(40, [-0.2038, 0.2038]) === 42
 */
export function suggestedN(n: number, ci: Interval, minEffect = 0.2): number {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`suggestedN: n must be a finite number ≥ 0, got ${n}`);
  if (!(minEffect > 0)) throw new RangeError(`suggestedN: minEffect must be > 0, got ${minEffect}`);
  const halfWidth = Math.max(0, (ci[1] - ci[0]) / 2);
  const ratio = halfWidth / minEffect;
  const raw = n * ratio * ratio;
  return Math.ceil(raw * (1 - 1e-9));
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
