/**
 * The one sequential driver of every betting test (run, decision, endpoint): pairs are pushed into
 * the paired betting confidence sequence (core/stats/betting.ts) and looked at after every batch,
 * until decisive, futile, n_max or the budget; and how its interval, p-value and stop are reported.
 */
import { PairedSequence } from "../stats/betting";
import type { Verdict } from "../stats/verdicts";
import { BudgetExceeded, checkAbort } from "./context";
import { r4, type Stopped, type TestEnding } from "./test-record";

/** Default largest number of pairs of a sequential betting test when neither n nor nMax is given. */
export const DEFAULT_N_MAX = 200;

/** Rounds an interval outward to 4 decimals, keeping the side of 0 and of ±minEffect the verdict states. */
export function roundInterval(ci: [number, number], verdict: Verdict, minEffect: number): [number, number] {
  let lo = Math.floor(ci[0] * 10000) / 10000;
  let hi = Math.ceil(ci[1] * 10000) / 10000;
  if (verdict === "causal" && lo <= 0) lo = 0.0001;
  if (verdict === "suppressive" && hi >= 0) hi = -0.0001;
  if (verdict === "ruled-out") {
    if (lo <= -minEffect) lo = r4(-minEffect + 0.0001);
    if (hi >= minEffect) hi = r4(minEffect - 0.0001);
  }
  return [Math.max(-1, lo), Math.min(1, hi)];
}

/**
 * A betting p-value rounded towards its verdict (down when causal or suppressive, up otherwise), so
 * p ≤ alpha exactly when the verdict is decisive about the sign; values below 1e-6 are kept as they are.
 */
export function roundP(p: number, verdict: Verdict): number {
  if (verdict === "not-applied") return 1;
  if (p < 1e-6) return p;
  return verdict === "causal" || verdict === "suppressive" ? Math.floor(p * 1e6) / 1e6 : Math.min(1, Math.ceil(p * 1e6) / 1e6);
}

/** Words for why a test stopped and what more it would need. */
export function stopReason(stopped: Stopped, verdict: Verdict, n: number, nMax: number, needed: number | null): string {
  if (verdict === "not-applied") return "decisive: the intervention removed nothing in the replays, so nothing was tested";
  if (stopped === "decisive") return `decisive after ${n} pair${n === 1 ? "" : "s"}`;
  const more =
    needed !== null && needed > n
      ? `; about ${needed} pairs in all would likely decide it if the pattern so far holds (--n-max ${needed})`
      : needed === null
        ? "; at the rate seen so far no practical number of pairs would decide it"
        : "";
  if (stopped === "futility")
    return `futility: at the pattern seen so far (or even if every remaining pair went the most favourable way) no verdict would be reached by n_max = ${nMax}${more}`;
  if (stopped === "budget") return `budget: the model-call or money budget ran out after ${n} pairs${more}`;
  return `n_max: reached ${nMax} pairs without a decisive verdict${more}`;
}

/** How a sequential betting test is run: its error rate, its budget in pairs and its stopping rules. */
export interface SequentialOptions {
  alpha: number;
  minEffect: number;
  nMax: number;
  /** Pairs run together before each look (concurrently; default 1). */
  batch?: number;
  /** Run at least this many pairs before stopping (decisive or futile). */
  minPairs?: number;
  signal?: AbortSignal;
  /** False when the intervention is known to remove nothing: no pair is run, the verdict is not-applied. */
  applied?: boolean;
  /** Checked after each look: true when no replay so far applied the intervention (then not-applied). */
  notApplied?: () => boolean;
  /** Keep going past a decisive verdict (e.g. until a cause's role is clear). */
  more?: (verdict: Verdict, seq: PairedSequence, n: number) => boolean;
  /** A futility rule besides "no verdict is reachable by n_max whatever happens". */
  futile?: (seq: PairedSequence, n: number) => boolean;
  /** Called after each look with the pairs so far. */
  onLook?: (n: number) => void;
}

/** What a sequential betting test found: every field of a test's ending (test-record.ts). */
export type SequentialOutcome = Required<TestEnding>;

/**
 * The one sequential driver of every betting test (run, decision, endpoint): runs pair j (any
 * async work that yields a result), scores it as a paired difference d ∈ [−1, 1] in the order of
 * j, pushes it into the confidence sequence and looks after every batch, until decisive, futile,
 * n_max or the budget. Returns the verdict and the interval, p- and e-value read off the same sequence.
 */
export async function sequentialBetting<T>(o: SequentialOptions, pair: (j: number) => Promise<T>, score: (t: T) => number): Promise<SequentialOutcome> {
  const seq = new PairedSequence({ alpha: o.alpha, minEffect: o.minEffect });
  const batch = Math.max(1, o.batch ?? 1);
  let i = 0;
  let stopped: Stopped = "n_max";
  let verdict: Verdict = o.applied === false ? "not-applied" : "inconclusive";
  if (o.applied === false) stopped = "decisive";
  try {
    while (verdict !== "not-applied" && i < o.nMax) {
      checkAbort(o.signal);
      const jobs = [];
      for (let k = i; k < Math.min(o.nMax, i + batch); k++) jobs.push(pair(k));
      for (const t of await Promise.all(jobs)) {
        seq.push(score(t));
        i++;
      }
      o.onLook?.(i);
      if (o.notApplied?.()) {
        verdict = "not-applied";
        stopped = "decisive";
        break;
      }
      verdict = seq.verdict();
      if (i < Math.min(o.nMax, o.minPairs ?? 0)) continue;
      if (verdict !== "inconclusive") {
        if (i < o.nMax && o.more?.(verdict, seq, i)) continue;
        stopped = "decisive";
        break;
      }
      // futility (stopping without a verdict never adds a false one)
      if (i < o.nMax && (!seq.canDecideBy(o.nMax) || o.futile?.(seq, i))) {
        stopped = "futility";
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof BudgetExceeded) || i === 0) throw err;
    stopped = "budget";
    verdict = o.notApplied?.() ? "not-applied" : seq.verdict();
  }
  const st = seq.state();
  const needed = verdict === "inconclusive" ? seq.pairsNeeded() : null;
  return {
    n: i,
    verdict,
    stopped,
    ci: verdict === "not-applied" ? [r4(st.ci[0]), r4(st.ci[1])] : roundInterval(st.ci, verdict, o.minEffect),
    // rounded towards the verdict, so p ≤ alpha exactly when the verdict is causal or suppressive
    p_value: roundP(st.p_value, verdict),
    e_value: verdict === "not-applied" ? 1 : Math.round(st.e_value * 1000) / 1000,
    alpha: o.alpha,
    n_needed: needed,
    stop_reason: stopReason(stopped, verdict, i, o.nMax, needed),
  };
}

/** The n_max of a betting test: nMax when it is above n, else n, else {@link DEFAULT_N_MAX}. */
export function bettingNMax(n: number | undefined, nMax: number | undefined): number {
  return Math.max(1, nMax && nMax > (n ?? 0) ? nMax : (n ?? DEFAULT_N_MAX));
}
