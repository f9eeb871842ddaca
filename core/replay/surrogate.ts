/**
 * Ranking many blocks before Find the cause tests them (ContextCite's surrogate): K replays, each
 * with a random half of the suspects removed (one arm each, not paired), and an L1-regularised
 * least-squares fit of the target's hit on which suspects were kept (core/stats/lasso.ts). The
 * suspect with the largest weight is *predicted*: it is only an order. It becomes the phase's lead,
 * tested first on its own like a lead the recording singles out; the paired tests decide, and a
 * prediction that is not confirmed falls back to the group test and halving, with the same error
 * control (docs/statistics.md). Nothing is ever blamed by the fit.
 *
 * The replays use their own seed base, so their draws are independent of every test's pairs: the
 * lead is chosen from data the tests never see again.
 */
import { deriveSeed } from "../log/hash";
import { PyRandom } from "../sdk/pyrandom";
import { parseIntervention, parseTarget } from "../specs/grammar";
import { lasso, lambdaMax } from "../stats/lasso";
import type { ReplayContext } from "./context";
import type { Phase } from "./attribute-types";

/** A suspect's weight in the fit: how much keeping it raises the target's rate (predicted, not tested). */
export interface Predicted {
  spec: string;
  weight: number;
}

export interface SurrogateRanking {
  /** Best first. */
  order: Predicted[];
  /** Replays run (K) and how many of them hit the target. */
  k: number;
  hits: number;
}

/** The fit's penalty, as a share of the smallest one that zeroes every weight. */
const LAMBDA_SHARE = 0.05;

/** Ranks `suspects` by a surrogate fitted on `k` replays with random halves of them removed. */
export async function rankBySurrogate(
  ctx: ReplayContext,
  o: { target: string; suspects: string[]; k: number; seedBase?: string; signal?: AbortSignal },
): Promise<SurrogateRanking> {
  if (!Number.isInteger(o.k) || o.k < 2) throw new Error("rankBySurrogate: k must be an integer ≥ 2");
  const target = parseTarget(o.target);
  const base = `${o.seedBase ?? "cf"}-surrogate`;
  const rng = new PyRandom(deriveSeed(base, ctx.runId, -1));
  const ivs = o.suspects.map(parseIntervention);
  const X: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < o.k; i++) {
    if (o.signal?.aborted) throw new Error("cancelled");
    const keep = o.suspects.map(() => (rng.random() < 0.5 ? 1 : 0));
    const out = await ctx.arm(
      deriveSeed(base, ctx.runId, i),
      ivs.filter((_, j) => !keep[j]),
      target,
      `s${i}`,
    );
    X.push(keep);
    y.push(out.hit ? 1 : 0);
  }
  const hits = y.reduce((a, b) => a + b, 0);
  const beta = hits === 0 || hits === o.k ? o.suspects.map(() => 0) : lasso(X, y, LAMBDA_SHARE * lambdaMax(X, y)).beta;
  const order = o.suspects.map((spec, j) => ({ spec, weight: Math.round(beta[j] * 1e4) / 1e4 })).sort((a, b) => b.weight - a.weight);
  return { order, k: o.k, hits };
}

/**
 * Gives each phase of more than four suspects that has no lead the surrogate's predicted suspect as
 * its lead (when its weight is positive), and keeps the prediction on the phase (`predicted`).
 */
export async function predictLeads(
  ctx: ReplayContext,
  phases: Phase[],
  o: { target: string; k: number; seedBase?: string; signal?: AbortSignal },
): Promise<void> {
  for (const ph of phases) {
    if (ph.lead || ph.suspects.length <= 4) continue;
    const r = await rankBySurrogate(ctx, { target: o.target, suspects: ph.suspects, k: o.k, seedBase: `${o.seedBase ?? "cf"}-${ph.name}`, signal: o.signal });
    ph.predicted = { k: r.k, hits: r.hits, order: r.order.slice(0, 8) };
    const top = r.order[0];
    if (!top || top.weight <= 0) continue;
    ph.lead = top.spec;
    ph.suspects.splice(0, ph.suspects.length, top.spec, ...ph.suspects.filter((s) => s !== top.spec));
  }
}
