/**
 * Decisions the replay engine takes from an effect interval: the verdict of a causal test, the
 * role of a causal input, and how many pairs would settle an inconclusive one.
 *
 * @module
 */
import type { Interval } from "./intervals";

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
