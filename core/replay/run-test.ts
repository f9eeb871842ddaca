/**
 * The paired run test: does removing an input change how often the target action happens?
 *
 * It runs pairs of replays; both arms of pair i use the same derived seed
 * deriveSeed("cf", runId, i), one as recorded ("with" the item), one with the intervention
 * ("without"). It reports how often the target happened in each arm, the difference with its
 * interval and a verdict. By default (betting) the paired differences feed an anytime-valid betting
 * confidence sequence looked at after every pair (sequential.ts); with the reference's method
 * (newcombe) a Newcombe interval and the exact McNemar p-value at looks n, 2n, …, nMax.
 */
import { appendTest } from "../log/testslog";
import { recordChanges } from "../specs/apply";
import { parseIntervention, parseTarget, type Intervention, type Target } from "../specs/grammar";
import { mcnemarExact } from "../stats/exact-tests";
import { newcombe } from "../stats/intervals";
import { roleFor, verdictFor, type Verdict } from "../stats/verdicts";
import { sequentialLooks, zFor } from "../stats/corrections";
import { BudgetExceeded, checkAbort, scopeOf, type ArmOutcome, type CallCounts, type Progress, type ReplayContext } from "./context";
import { recordedItems } from "./edited-content";
import { bettingNMax, sequentialBetting } from "./sequential";
import { DECISIVE, MIN_EFFECT, newcombeNeeded, testRecord, type Stopped, type TestEnding, type TestMethod, type TestResult } from "./test-record";

/** The counts of a run test's pairs so far (both methods). */
class PairTally {
  kWith = 0;
  kWithout = 0;
  /** Pairs whose intervened arm removed something. */
  applied = 0;
  /** "With" arms this test ran itself (the others were shared). */
  baseRuns = 0;
  readonly off = { with: 0, without: 0 };
  readonly flips = { removed: 0, added: 0 };
  readonly assumptions = new Set<string>();

  async pair(
    ctx: ReplayContext,
    seedBase: string,
    j: number,
    baseline: Intervention[],
    interventions: Intervention[],
    target: Target,
  ): Promise<{ base: ArmOutcome; treat: ArmOutcome }> {
    const r = await ctx.pair(seedBase, j, baseline, interventions, target);
    this.baseRuns += +r.baseRan;
    return r;
  }

  /** Counts one pair; returns its difference d = Y_with − Y_without. */
  add({ base, treat }: { base: ArmOutcome; treat: ArmOutcome }): number {
    this.kWith += +base.hit;
    this.kWithout += +treat.hit;
    if (base.hit && !treat.hit) this.flips.removed++;
    if (treat.hit && !base.hit) this.flips.added++;
    this.applied += +treat.applied;
    this.off.with += base.offTape;
    this.off.without += treat.offTape;
    for (const a of [...(base.assumptions ?? []), ...(treat.assumptions ?? [])]) this.assumptions.add(a);
    return +base.hit - +treat.hit;
  }
}

export interface TestOptions {
  /** One spec, or several removed together (a group test). */
  intervention: string | string[];
  /**
   * What the "with" arm removes (default nothing). Find the cause uses it to ask whether one input
   * is enough on its own: the "with" arm keeps only that input of a group, the other removes all.
   */
  baseline?: string[];
  target: string;
  n?: number;
  nMax?: number;
  /** How many inputs of one action are tested together (the interval is corrected for it). */
  family?: number;
  minEffect?: number;
  seedBase?: string;
  /** Once causal, keep going until the interval says primary or contributing. */
  sizeRole?: boolean;
  /** Pairs run concurrently (helps async, hosted models). */
  workers?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Append the result to the run's tests.jsonl (default true). */
  save?: boolean;
  /**
   * "betting" (default): the paired, anytime-valid betting confidence sequence (core/stats/betting.ts),
   * looked at after every pair, sequential up to nMax (or n when nMax is not given).
   * "newcombe": the reference's Newcombe interval at looks n, 2n, …, nMax (Bonferroni over looks).
   */
  method?: TestMethod;
  /** Error rate of this test (betting). Default 0.05 / family. Find the cause spends its alpha across tests. */
  alpha?: number;
  /**
   * Betting futility stop: "hopeless" (default) only when no verdict is reachable by nMax whatever
   * happens; "projection" also after 10 pairs when little effect is seen and the pattern so far
   * would not decide by nMax (Find the cause uses it to save replays on innocent suspects).
   */
  futility?: "hopeless" | "projection";
  /** Pairs before the "projection" futility rule may stop the test (default {@link FUTILITY_AFTER}). */
  futilityAfter?: number;
  /**
   * Only a causal verdict matters to the caller (Find the cause's test of the other suspects below
   * a causal lead): the "projection" rule then also stops a test whose effect so far is not
   * positive, however large its negative part.
   */
  causalOnly?: boolean;
  /**
   * Betting: run at least this many pairs before stopping (decisive or futile), so that the rates
   * are estimates and not only a verdict (a fix check reports harm without → with the fix). The
   * sequence is valid at any stopping time, so a floor changes precision, never validity.
   */
  minPairs?: number;
}

/** Options of the tests that follow up a confirmed cause (failure shapes, causing spans). */
export interface FollowUpOptions {
  target: string;
  n?: number;
  nMax?: number;
  /** The attribution's family: the follow-up tests' correction adds to it. */
  family?: number;
  workers?: number;
  seedBase?: string;
  /** Append the tests to tests.jsonl (default true), tagged with this attribution id. */
  save?: boolean;
  attribution?: string;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

/** One follow-up test of a confirmed cause: n 10 and n_max 80 unless given, corrected for `family`, not saved (the caller saves). */
export function followUpTest(
  ctx: ReplayContext,
  o: FollowUpOptions,
  family: number,
  intervention: string | string[],
  baseline?: string[],
  onProgress = o.onProgress,
): Promise<TestResult> {
  return runTest(ctx, {
    intervention,
    baseline,
    target: o.target,
    n: o.n ?? 10,
    nMax: o.nMax ?? 80,
    family,
    workers: o.workers,
    seedBase: o.seedBase,
    signal: o.signal,
    onProgress,
    save: false,
  });
}

/** What both methods of a run test start from: the parsed specs, the pairs' tally and the call counts before. */
interface RunSetup {
  specs: string[];
  interventions: Intervention[];
  baseline: Intervention[];
  family: number;
  minEffect: number;
  before: CallCounts;
  t: PairTally;
  /** Runs pair j (its "with" arm shared when another test of the run ran it). */
  pair: (j: number) => Promise<{ base: ArmOutcome; treat: ArmOutcome }>;
}

function setUp(ctx: ReplayContext, opts: TestOptions): RunSetup {
  const specs = Array.isArray(opts.intervention) ? opts.intervention : [opts.intervention];
  const interventions = specs.map(parseIntervention);
  const baseline = (opts.baseline ?? []).map(parseIntervention);
  const target = parseTarget(opts.target);
  const seedBase = opts.seedBase ?? "cf";
  const t = new PairTally();
  const pair = (j: number) => t.pair(ctx, seedBase, j, baseline, interventions, target);
  return { specs, interventions, baseline, family: opts.family ?? 1, minEffect: opts.minEffect ?? MIN_EFFECT, before: { ...ctx.counts }, t, pair };
}

/** A run test's record from how it ended (saved to tests.jsonl unless told not to). */
function finish(
  ctx: ReplayContext,
  opts: TestOptions,
  s: RunSetup,
  ending: TestEnding,
  how: { looks: number; nMax: number; method: string; budgetNote: string },
): TestResult {
  const { t } = s;
  const pWith = t.kWith / ending.n;
  const pWithout = t.kWithout / ending.n;
  const result = testRecord({
    scope: "run",
    intervention: s.specs.join(" | "),
    target: opts.target,
    ending,
    looks: how.looks,
    nMax: how.nMax,
    family: s.family,
    minEffect: s.minEffect,
    p_with: pWith,
    p_without: pWithout,
    effect: pWith - pWithout,
    pairs: t,
    model_calls: ctx.counts.made - s.before.made,
    naive_model_calls: ctx.counts.naive - s.before.naive,
    method: how.method,
    ...scopeOf(ctx, t.assumptions),
    note: ending.stopped === "budget" ? how.budgetNote : undefined,
    baseline: s.baseline.length ? s.baseline.map((b) => b.spec).join(" | ") : undefined,
    group: s.specs.length > 1 ? s.specs : undefined,
    changes: s.interventions.some((iv) => iv.edit)
      ? recordChanges(opts.save !== false ? ctx.run.dir : undefined, s.interventions, recordedItems(ctx.model))
      : undefined,
  });
  if (opts.save !== false) appendTest(ctx.run.dir, result);
  return result;
}

/** Does removing the intervention change how often the target happens? */
export async function runTest(ctx: ReplayContext, opts: TestOptions): Promise<TestResult> {
  return (opts.method ?? "betting") === "betting" ? runBettingTest(ctx, opts) : runNewcombeTest(ctx, opts);
}

/** runTest with the reference's method: a Newcombe interval at looks n, 2n, …, nMax (Bonferroni over looks). */
async function runNewcombeTest(ctx: ReplayContext, opts: TestOptions): Promise<TestResult> {
  const s = setUp(ctx, opts);
  const { t, family, minEffect } = s;
  const n = opts.n ?? 30;
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * family);
  const workers = Math.max(1, opts.workers ?? 1);
  let i = 0;
  let stopped: Stopped = "n_max";
  let ci: [number, number] = [-1, 1];
  let verdict: Verdict = "inconclusive";
  try {
    for (const size of plan) {
      for (let j = i; j < size; j += workers) {
        checkAbort(opts.signal);
        const batch = [];
        for (let k = j; k < Math.min(size, j + workers); k++) batch.push(s.pair(k));
        for (const p of await Promise.all(batch)) {
          t.add(p);
          i++;
        }
        opts.onProgress?.({ phase: "test", done: i, total: plan[plan.length - 1], message: `${s.specs.join(" | ")}: ${i} pairs` });
      }
      ci = newcombe(t.kWith, i, t.kWithout, i, z);
      verdict = verdictFor(ci, t.applied > 0, minEffect);
      if (verdict === "causal" && opts.sizeRole && roleFor(ci, t.kWith / i) === "confirmed" && size !== plan[plan.length - 1]) continue;
      if (DECISIVE.has(verdict) || verdict === "not-applied") {
        stopped = "decisive";
        break;
      }
      // futility needs the target to have reproduced often enough (in min_effect of the pairs, in
      // either arm) for an effect of min_effect to show; one that barely reproduces says nothing yet
      if (
        plan.length > 1 &&
        i >= 2 * n &&
        Math.abs((t.kWith - t.kWithout) / i) <= 0.05 &&
        Math.max(t.kWith, t.kWithout) >= minEffect * i &&
        size !== plan[plan.length - 1]
      ) {
        stopped = "futility"; // no effect seen: stopped to save replays, not proof of none
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof BudgetExceeded) || i === 0) throw err;
    ci = newcombe(t.kWith, i, t.kWithout, i, z);
    verdict = verdictFor(ci, t.applied > 0, minEffect);
    if (!DECISIVE.has(verdict) && verdict !== "not-applied") verdict = "inconclusive";
    stopped = "budget";
  }
  const p_value = Math.round(Math.min(1, plan.length * family * mcnemarExact(t.flips.removed, t.flips.added)) * 1e6) / 1e6;
  return finish(
    ctx,
    opts,
    s,
    { n: i, verdict, ci, stopped, p_value, n_needed: newcombeNeeded(i, ci, verdict, minEffect) },
    {
      looks: plan.length,
      nMax: plan[plan.length - 1],
      method: `paired re-execution, tool results from tape, Newcombe 95% CI (--method newcombe)${plan.length > 1 ? `, sequential over ${plan.length} looks (Bonferroni)` : ""}${family > 1 ? `, family of ${family}` : ""}`,
      budgetNote: `stopped by the model-call budget after ${i} pairs`,
    },
  );
}

/** Pairs after which a betting test may stop for futility because the pattern so far would not decide it by n_max. */
export const FUTILITY_AFTER = 10;

/** runTest with the paired betting confidence sequence (the default method). */
async function runBettingTest(ctx: ReplayContext, opts: TestOptions): Promise<TestResult> {
  const s = setUp(ctx, opts);
  const { t, family, minEffect } = s;
  const alpha = opts.alpha ?? 0.05 / family;
  const nMax = bettingNMax(opts.n, opts.nMax);
  const o = await sequentialBetting(
    {
      alpha,
      minEffect,
      nMax,
      batch: opts.workers,
      minPairs: opts.minPairs,
      signal: opts.signal,
      notApplied: () => t.applied === 0,
      onLook: (i) =>
        opts.onProgress?.({
          phase: "test",
          done: i,
          total: nMax,
          message: `${s.specs.join(" | ")}: ${i} pairs, ${ctx.counts.made - s.before.made} model calls`,
        }),
      more: (verdict, seq, i) => verdict === "causal" && !!opts.sizeRole && roleFor(seq.state().ci, t.kWith / i) === "confirmed",
      // the projection rule: after FUTILITY_AFTER pairs, little effect is seen (|effect| < min_effect/2)
      // and the pattern so far would not give a causal or suppressive verdict by n_max (Find the
      // cause asks whether an input matters: ruling an innocent one out at its share of alpha costs
      // more pairs than it tells)
      futile: (seq, i) => {
        if (opts.futility !== "projection" || i < (opts.futilityAfter ?? FUTILITY_AFTER)) return false;
        const effect = (t.kWith - t.kWithout) / i;
        if (opts.causalOnly && effect <= 0) return true;
        return (opts.causalOnly ? effect : Math.abs(effect)) < minEffect / 2 && (seq.pairsNeeded(nMax - i, true) ?? Infinity) > nMax;
      },
    },
    s.pair,
    (p) => t.add(p),
  );
  return finish(ctx, opts, s, o, {
    looks: o.n,
    nMax,
    method: `paired re-execution, tool results from tape, betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))}${family > 1 ? `, family of ${family}` : ""})`,
    budgetNote: `stopped by the budget after ${o.n} pairs`,
  });
}
