/**
 * Score intervals for a binomial proportion (Wilson) and for the difference of two proportions
 * (Newcombe's hybrid score, method 10).
 *
 * @module
 */
import { Z95 } from "./normal";

/** A closed interval `[lo, hi]` with `lo ≤ hi`. */
export type Interval = [number, number];

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
