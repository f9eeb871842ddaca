/**
 * Paired, anytime-valid inference for replay tests: a betting confidence sequence for the mean of
 * the paired differences (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random
 * variables by betting", JRSS-B 86(1); the hedged capital process with predictable plug-in bets).
 *
 * Pair i gives d_i = Y_with − Y_without ∈ {−1, 0, 1}; the effect is E[d]. On the scale
 * x = (d + 1)/2 ∈ [0, 1] with mean m = (effect + 1)/2, for every candidate m two gamblers bet:
 *
 *   K⁺_t(m) = Π (1 + λ⁺_i(m)(x_i − m)),   λ⁺_i(m) = min(λ_i, c/m)       (bets that the mean is above m)
 *   K⁻_t(m) = Π (1 − λ⁻_i(m)(x_i − m)),   λ⁻_i(m) = min(λ_i, c/(1 − m)) (bets that it is below m)
 *
 * with λ_i = √(2 log(2/α) / (σ̂²_{i−1} · i · log(1 + i))) computed from pairs 1…i−1 only
 * (predictable), σ̂² a shrunk running variance, and c < 1 so no factor reaches 0. Under
 * H₀: E[x] = m both are non-negative martingales with initial value 1 (for any stopping rule), so
 * by Ville's inequality P(∃t: max(K⁺, K⁻)/2 ≥ 1/α) ≤ P(∃t: (K⁺ + K⁻)/2 ≥ 1/α) ≤ α. The confidence
 * sequence is C_t = {m : K⁺_t(m) < 2/α and K⁻_t(m) < 2/α}. K⁺ is non-increasing and K⁻
 * non-decreasing in m (each factor is), so C_t is an interval whose ends are found by bisection.
 * The verdict reads the capitals at the decision points after every pair (the running
 * intersection of every C_s at those points); the reported interval is the intersection of the
 * C_s at the moments it was read, narrowed to agree with the verdict — it contains ∩_{s≤t} C_s, so
 * it keeps the same guarantee.
 *
 * "Ruled out" (|effect| < δ, the margin) is an equivalence test: two one-sided tests, H₀⁻: effect ≤ −δ
 * rejected when some K⁺_s(m(−δ)) ≥ 2/α and H₀⁺: effect ≥ δ rejected when some K⁻_s(m(+δ)) ≥ 2/α.
 * Each is a one-sided anytime-valid test at level α/2 (Ville), and the union H₀⁻ ∪ H₀⁺ is rejected
 * only when both are (intersection–union principle, Berger 1982), so a wrong "ruled out" has
 * probability ≤ α/2. The intersection–union principle would allow 1/α (15 agreeing pairs instead of
 * 19), but at 2/α "ruled out" says exactly what the reported 1 − α interval says (it lies inside
 * ±δ), and a real but weak cause is dismissed half as often: a 25% cause shows no flip in its first
 * 15 pairs with probability 0.75¹⁵ = 1.3%, in its first 19 with 0.75¹⁹ = 0.4%.
 *
 * The e-process for H₀: effect = 0 is E_t = max(K⁺_t(½), K⁻_t(½))/2 and the anytime-valid p-value
 * is p_t = min(1, 1/sup_{s≤t} E_s). The verdict, the interval and p are read off the same
 * capitals, so they agree by construction: causal ⇔ the interval lies above 0 ⇔ some K⁺_s(½)
 * reached 2/α, and then p ≤ α.
 *
 * Why it suits replay pairs: the bets adapt to the observed variance of d. When every pair agrees
 * (d = 0, an input with no effect), σ̂² → 0, the bets sit at their cap and the interval shrinks
 * geometrically (with c = 0.9 and α = 0.05, the input is ruled out after 19 pairs), where an interval
 * that ignores the pairing (Newcombe) does not shrink at all.
 *
 * Pure and dependency-free.
 * @module
 */
import type { Interval } from "./intervals";
import type { Verdict } from "./verdicts";

/** Options of a {@link PairedSequence}. */
export interface BettingOptions {
  /** Error rate of the whole sequence (two-sided, every look together). Default 0.05. */
  alpha?: number;
  /** Cap on the bets, in (0, 1): the largest fraction of capital at stake. Default 0.9. */
  c?: number;
  /** Smallest effect worth reporting (the ruled-out margin). Default 0.2. */
  minEffect?: number;
}

/** The state of a paired test after some pairs; see {@link PairedSequence.state}. */
export interface BettingState {
  n: number;
  /** Mean of the paired differences. */
  effect: number;
  /** Running intersection of the confidence sequence, on the effect scale [−1, 1]. */
  ci: Interval;
  /** Largest e-value seen so far against H₀: effect = 0. */
  e_value: number;
  /** min(1, 1/e_value): an anytime-valid p-value. */
  p_value: number;
  /** causal / suppressive / ruled-out / inconclusive (never not-applied: the caller knows that). */
  verdict: Verdict;
}

const BISECT = 60;

/**
 * An anytime-valid confidence sequence for the mean of paired differences d ∈ {−1, 0, 1}
 * (any value in [−1, 1] is accepted). Push pairs one at a time; read {@link state} at any time.
 */
export class PairedSequence {
  readonly alpha: number;
  readonly c: number;
  readonly minEffect: number;
  private readonly threshold: number;
  /** Each one-sided test of the equivalence ("ruled out") decision runs at alpha/2: 2/alpha. */
  private readonly equivThreshold: number;
  private readonly xs: number[] = [];
  private readonly lambdas: number[] = [];
  private sum = 0;
  private sumSq = 0; // Σ (x_i − μ̂_i)²
  private mu = 0.5; // μ̂ (shrunk towards ½)
  // running maxima of the capitals at the decision points
  private eUp = 1; // sup K⁺(½)/2 → causal
  private eDown = 1; // sup K⁻(½)/2 → suppressive
  private outLow = false; // some K⁺(m(−δ)) ≥ 2/α: effect > −δ
  private outHigh = false; // some K⁻(m(+δ)) ≥ 2/α: effect < +δ
  private lo = 0; // running intersection, x scale
  private hi = 1;

  constructor(opts: BettingOptions = {}) {
    const alpha = opts.alpha ?? 0.05;
    const c = opts.c ?? 0.9;
    const minEffect = opts.minEffect ?? 0.2;
    if (!(alpha > 0 && alpha < 1)) throw new RangeError(`PairedSequence: alpha must be in (0, 1), got ${alpha}`);
    if (!(c > 0 && c < 1)) throw new RangeError(`PairedSequence: c must be in (0, 1), got ${c}`);
    if (!(minEffect > 0 && minEffect <= 1)) throw new RangeError(`PairedSequence: minEffect must be in (0, 1], got ${minEffect}`);
    this.alpha = alpha;
    this.c = c;
    this.minEffect = minEffect;
    this.threshold = 2 / alpha;
    this.equivThreshold = 2 / alpha;
  }

  get n(): number {
    return this.xs.length;
  }

  /** The predictable bet for the next pair (before seeing it). */
  private nextLambda(): number {
    const t = this.xs.length + 1;
    const sigma2 = (0.25 + this.sumSq) / t; // σ̂²_{t−1} = (¼ + Σ_{i<t}(x_i − μ̂_i)²)/t
    return Math.sqrt((2 * Math.log(2 / this.alpha)) / (sigma2 * t * Math.log(1 + t)));
  }

  /** Adds one pair's difference d = Y_with − Y_without. */
  push(d: number): void {
    if (!(d >= -1 && d <= 1)) throw new RangeError(`PairedSequence: d must be in [−1, 1], got ${d}`);
    const x = (d + 1) / 2;
    this.lambdas.push(this.nextLambda());
    this.xs.push(x);
    this.sumSq += (x - this.mu) ** 2;
    this.sum += x;
    this.mu = (0.5 + this.sum) / (this.xs.length + 1);
    this.update();
  }

  /** log K⁺_t(m) (side +1) or log K⁻_t(m) (side −1) over every pair so far. */
  private logCapital(m: number, side: 1 | -1, xs = this.xs, lambdas = this.lambdas): number {
    const cap = side === 1 ? this.c / m : this.c / (1 - m);
    let s = 0;
    for (let i = 0; i < xs.length; i++) {
      const l = Math.min(lambdas[i], cap);
      s += Math.log1p(side * l * (xs[i] - m));
    }
    return s;
  }

  // running log-capitals at the four decision points (their caps do not change, so O(1) per pair)
  private logUp = 0; // log K⁺(½)
  private logDown = 0; // log K⁻(½)
  private logLow = 0; // log K⁺(m(−δ))
  private logHigh = 0; // log K⁻(m(+δ))

  private update(): void {
    const i = this.xs.length - 1;
    const x = this.xs[i];
    const l = this.lambdas[i];
    const logE = Math.log(this.equivThreshold);
    const mLow = (1 - this.minEffect) / 2;
    const mHigh = (1 + this.minEffect) / 2;
    this.logUp += Math.log1p(Math.min(l, this.c / 0.5) * (x - 0.5));
    this.logDown += Math.log1p(-Math.min(l, this.c / 0.5) * (x - 0.5));
    this.logLow += Math.log1p(Math.min(l, this.c / mLow) * (x - mLow));
    this.logHigh += Math.log1p(-Math.min(l, this.c / (1 - mHigh)) * (x - mHigh));
    this.eUp = Math.max(this.eUp, Math.exp(this.logUp) / 2);
    this.eDown = Math.max(this.eDown, Math.exp(this.logDown) / 2);
    if (this.logLow >= logE) this.outLow = true;
    if (this.logHigh >= logE) this.outHigh = true;
  }

  /** Intersects the running interval with the confidence set at this moment (bisection, O(n) per step). */
  private narrow(): void {
    const logT = Math.log(this.threshold);
    // lower end: inf{m : K⁺(m) < 2/α}; K⁺ is non-increasing in m
    let a = 0;
    let b = 1;
    if (this.logCapital(0, 1) >= logT) {
      for (let k = 0; k < BISECT; k++) {
        const mid = (a + b) / 2;
        if (this.logCapital(mid, 1) >= logT) a = mid;
        else b = mid;
      }
      this.lo = Math.max(this.lo, a);
    }
    // upper end: sup{m : K⁻(m) < 2/α}; K⁻ is non-decreasing in m
    a = 0;
    b = 1;
    if (this.logCapital(1, -1) >= logT) {
      for (let k = 0; k < BISECT; k++) {
        const mid = (a + b) / 2;
        if (this.logCapital(mid, -1) >= logT) b = mid;
        else a = mid;
      }
      this.hi = Math.min(this.hi, b);
    }
  }

  /** The verdict so far (O(1)): read this after every pair, {@link state} when the interval is needed. */
  verdict(): Verdict {
    return this.verdictOf(this.eUp, this.eDown, this.outLow, this.outHigh);
  }

  private verdictOf(eUp: number, eDown: number, outLow: boolean, outHigh: boolean): Verdict {
    const t = 1 / this.alpha;
    if (eUp >= t && eUp >= eDown) return "causal";
    if (eDown >= t) return "suppressive";
    if (outLow && outHigh) return "ruled-out";
    return "inconclusive";
  }

  /** The current verdict, interval and e/p-values; interval, verdict and p agree by construction. */
  state(): BettingState {
    const n = this.xs.length;
    if (n) this.narrow();
    const verdict = this.verdict();
    let lo = 2 * this.lo - 1;
    let hi = 2 * this.hi - 1;
    if (lo > hi) {
      // the intersection is empty (an event of probability ≤ α): report the last point estimate
      const e = n ? (2 * this.sum) / n - 1 : 0;
      lo = hi = e;
    }
    // make the reported interval say what the verdict says even at the bisection's last digit
    const eps = 1e-9;
    if (verdict === "causal") lo = Math.max(lo, eps);
    if (verdict === "suppressive") hi = Math.min(hi, -eps);
    if (verdict === "ruled-out") {
      lo = Math.max(lo, -this.minEffect + eps);
      hi = Math.min(hi, this.minEffect - eps);
    }
    const e = Math.max(this.eUp, this.eDown);
    return {
      n,
      effect: n ? (2 * this.sum) / n - 1 : 0,
      ci: [lo, hi],
      e_value: e,
      p_value: Math.min(1, 1 / e),
      verdict,
    };
  }

  /**
   * Can a decisive verdict still be reached by `nMax` pairs? Checks the most favourable future for
   * each verdict: every remaining pair d = +1 (causal), −1 (suppressive), 0 (ruled out).
   */
  canDecideBy(nMax: number): boolean {
    if (this.verdict() !== "inconclusive") return true;
    const more = nMax - this.n;
    if (more <= 0) return false;
    for (const d of [1, -1, 0]) if (this.projectPairs([d], more) !== null) return true;
    return false;
  }

  /**
   * Pairs (in total) after which the verdict would be decisive if future pairs repeated the
   * pattern observed so far (their empirical distribution, in a fixed cycle); null when not
   * within `limit` more pairs (with `signOnly`, only a causal or suppressive verdict counts). A
   * planning aid, not a guarantee.
   */
  pairsNeeded(limit = 2000, signOnly = false): number | null {
    if (this.verdict() !== "inconclusive") return this.n;
    if (!this.n) return null;
    const counts = new Map<number, number>();
    for (const x of this.xs) counts.set(x, (counts.get(x) ?? 0) + 1);
    // a deterministic interleaving with the observed frequencies (largest remainder per cycle)
    const keys = [...counts.keys()];
    const cycle: number[] = [];
    const acc = new Map<number, number>(keys.map((k) => [k, 0]));
    for (let i = 0; i < this.n; i++) {
      let best = keys[0];
      for (const k of keys) {
        acc.set(k, acc.get(k)! + counts.get(k)! / this.n);
        if (acc.get(k)! > acc.get(best)!) best = k;
      }
      acc.set(best, acc.get(best)! - 1);
      cycle.push(2 * best - 1);
    }
    return this.projectPairs(cycle, limit, signOnly);
  }

  /** Continues a copy with the given differences (cycled) for up to `more` pairs; the n at which it becomes decisive. */
  private projectPairs(pattern: number[], more: number, signOnly = false): number | null {
    const copy = new PairedSequence({ alpha: this.alpha, c: this.c, minEffect: this.minEffect });
    // replay the history cheaply: copy the sufficient state, then extend
    copy.xs.push(...this.xs);
    copy.lambdas.push(...this.lambdas);
    copy.sum = this.sum;
    copy.sumSq = this.sumSq;
    copy.mu = this.mu;
    copy.eUp = this.eUp;
    copy.eDown = this.eDown;
    copy.outLow = this.outLow;
    copy.outHigh = this.outHigh;
    copy.lo = this.lo;
    copy.hi = this.hi;
    const logE = Math.log(this.equivThreshold);
    const mLow = (1 - this.minEffect) / 2;
    const mHigh = (1 + this.minEffect) / 2;
    // only the decision points matter for the verdict: keep running log-capitals for them
    let up = this.logUp;
    let down = this.logDown;
    let low = this.logLow;
    let high = this.logHigh;
    let eUp = copy.eUp;
    let eDown = copy.eDown;
    let outLow = copy.outLow;
    let outHigh = copy.outHigh;
    for (let k = 0; k < more; k++) {
      const d = pattern[k % pattern.length];
      const x = (d + 1) / 2;
      const l = copy.nextLambda();
      copy.lambdas.push(l);
      copy.xs.push(x);
      copy.sumSq += (x - copy.mu) ** 2;
      copy.sum += x;
      copy.mu = (0.5 + copy.sum) / (copy.xs.length + 1);
      up += Math.log1p(Math.min(l, this.c / 0.5) * (x - 0.5));
      down += Math.log1p(-Math.min(l, this.c / 0.5) * (x - 0.5));
      low += Math.log1p(Math.min(l, this.c / mLow) * (x - mLow));
      high += Math.log1p(-Math.min(l, this.c / (1 - mHigh)) * (x - mHigh));
      eUp = Math.max(eUp, Math.exp(up) / 2);
      eDown = Math.max(eDown, Math.exp(down) / 2);
      outLow ||= low >= logE;
      outHigh ||= high >= logE;
      const v = this.verdictOf(eUp, eDown, signOnly ? false : outLow, signOnly ? false : outHigh);
      if (v !== "inconclusive") return copy.xs.length;
    }
    return null;
  }
}

/** One-shot: the state after the given paired differences. */
export function pairedBetting(diffs: number[], opts: BettingOptions = {}): BettingState {
  const s = new PairedSequence(opts);
  for (const d of diffs) s.push(d);
  return s.state();
}

/**
 * Weighted Bonferroni (alpha-spending across suspects): splits `alpha` over tests in proportion
 * to `weights` (e.g. the recorded evidence for each suspect, fixed before any replay), so
 * Σ alpha_j = alpha and the family-wise error of all the tests' intervals stays ≤ alpha.
 */
export function spendAlpha(alpha: number, weights: number[]): number[] {
  const w = weights.map((x) => (x > 0 && Number.isFinite(x) ? x : 0));
  const total = w.reduce((s, x) => s + x, 0);
  if (!(total > 0)) return weights.map(() => alpha / Math.max(1, weights.length));
  // a hair below the exact share, so rounding can never make the shares sum above alpha
  return w.map((x) => ((alpha * x) / total) * (1 - 1e-12));
}
