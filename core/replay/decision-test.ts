/**
 * The decision test (rung 1 in process): re-calls one recorded model call with and without the
 * context items an intervention matches, from the log and the System's model function alone (no
 * program re-run), on paired seeds deriveSeed("dt", runId, seq, i).
 */
import { appendTest } from "../log/testslog";
import { canonical, deriveSeed, refOf } from "../log/hash";
import { parseLossless } from "../log/pyjson";
import { interveneOn, recordChanges } from "../specs/apply";
import { parseIntervention } from "../specs/grammar";
import { newcombe } from "../stats/intervals";
import { sequentialLooks, zFor } from "../stats/corrections";
import { verdictFor, type Verdict } from "../stats/verdicts";
import { BudgetExceeded, ReplayError, checkAbort, type Progress, type ReplayContext } from "./context";
import { bettingNMax, sequentialBetting } from "./sequential";
import { DECISIVE, MIN_EFFECT, newcombeNeeded, r4, testRecord, type TestEnding, type TestMethod } from "./test-record";

export interface DecisionTestOptions {
  /** Seq or id of the decision. */
  decision: number | string;
  intervention: string;
  /** Measure P(output contains text); without it, how often removing the item changes the output vs noise. */
  contains?: string;
  n?: number;
  nMax?: number;
  family?: number;
  minEffect?: number;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** "betting" (default; sequential up to nMax, or n) or "newcombe" (the reference's looks). */
  method?: TestMethod;
  alpha?: number;
  /** Betting: no stop before this many pairs (`--n N`; with n = n_max, exactly N pairs). */
  minPairs?: number;
}

/**
 * Re-calls one recorded model call with and without matching context items (and a no-removal
 * control call), from the log and the System's model function alone.
 */
export async function decisionTest(ctx: ReplayContext, opts: DecisionTestOptions): Promise<Record<string, unknown>> {
  const m = ctx.model;
  const ev = m.decisions.find((d) => d.seq === Number(opts.decision) || d.id === opts.decision);
  if (!ev) throw new ReplayError(`no decision ${JSON.stringify(opts.decision)} in the run`);
  const fn = ctx.system.config.models[ev.model];
  if (!fn) throw new ReplayError(`model "${ev.model}" is not available for replay (the System has: ${Object.keys(ctx.system.config.models).join(", ")})`);
  const iv = parseIntervention(opts.intervention);
  // a value is unknown here: an edit (redact, replace) may give any value
  const items = (ev.context ?? []).map((c) => {
    const canon = m.canonical(c.ref);
    const value: unknown = canon ? parseLossless(canon) : undefined;
    return { ...c, value, record: () => c, fromEvent: c.from_event, decision: null };
  });
  const kept = items.flatMap((c) => {
    const r = interveneOn([iv], { ...c, fromEvent: c.from_event });
    if (!r) return [c];
    if (r.remove) return [];
    const ref = refOf(r.value);
    return [{ ...c, value: r.value, ref, record: () => ({ ...c.record(), ref }) }];
  });
  const changes = iv.edit
    ? recordChanges(
        opts.save !== false ? ctx.run.dir : undefined,
        [iv],
        items.map((c) => ({ ...c, fromEvent: c.from_event })),
      )
    : [];
  const applied = kept.length < items.length || changes.length > 0;
  const callsBefore = ctx.counts.made;
  const call = async (list: typeof items, seed: number) => {
    if (ctx.budget.left <= 0) throw new BudgetExceeded(); // a budget stop ends the test after the last whole pair
    ctx.counts.made++;
    ctx.counts.naive++;
    ctx.budget.used++;
    let out = await fn(
      list.map((c) => c.value),
      { agent: ev.agent, model: ev.model, purpose: ev.purpose ?? "", seed, params: ev.params ?? {}, items: list as never },
    );
    if (out && typeof out === "object" && (out as { isModelOutput?: boolean }).isModelOutput) out = (out as { value: unknown }).value;
    return canonical(out);
  };
  const contains = opts.contains;
  // k0: with --contains, outputs with the text; else outputs that changed anyway (noise). k1: the same without the item, or outputs it changed
  const k = { k0: 0, k1: 0 };
  // pair j: the recorded context and the intervened one (and, without --contains, the recorded one again: noise)
  const pair = async (j: number): Promise<Outputs> => {
    const seed = deriveSeed("dt", ctx.runId, ev.seq, j);
    const a = await call(items, seed);
    const b = await call(kept, seed);
    return { a, b, again: contains === undefined ? await call(items, seed) : "" };
  };
  // with --contains: does the output contain the text, with vs without; else: did it change without the item vs anyway
  const score = ({ a, b, again }: Outputs): number => {
    if (contains !== undefined) {
      const x = +a.includes(contains);
      const y = +b.includes(contains);
      k.k0 += x;
      k.k1 += y;
      return x - y;
    }
    const changed = +(a !== b);
    const noise = +(a !== again);
    k.k1 += changed;
    k.k0 += noise;
    return changed - noise;
  };
  const minEffect = opts.minEffect ?? MIN_EFFECT;
  const how =
    (opts.method ?? "betting") === "betting"
      ? await bettingDecision(opts, applied, minEffect, pair, score)
      : await newcombeDecision(opts, applied, minEffect, pair, score, k);
  const q = how.divisor;
  const { k0, k1 } = k;
  // a decision's causal role reads its rates rounded
  const rates =
    contains !== undefined
      ? { target: `decision#${ev.seq} output~${contains}`, p_with: r4(k0 / q), p_without: r4(k1 / q), effect: (k0 - k1) / q, noise: null }
      : { target: `decision#${ev.seq} output changed`, p_with: null, p_without: null, effect: (k1 - k0) / q, noise: k0 / q };
  const result = testRecord({
    scope: "decision",
    intervention: opts.intervention,
    decision: ev,
    ending: how.ending,
    looks: how.looks,
    nMax: how.nMax,
    minEffect,
    method: how.method,
    ...rates,
    model_calls: ctx.counts.made - callsBefore,
    changes: changes.length ? changes : undefined,
  });
  if (opts.save !== false) appendTest(ctx.run.dir, result);
  return result;
}

/** A decision pair's outputs: recorded context, intervened context, recorded context again (noise; "" with --contains). */
interface Outputs {
  a: string;
  b: string;
  again: string;
}

/** How a decision test's method ended, and what its record says of it (divisor: of the rates). */
interface DecisionRun {
  ending: TestEnding;
  looks: number;
  nMax: number;
  method: string;
  divisor: number;
}

/** The decision test with the betting confidence sequence (the default): sequential up to nMax, or n. */
async function bettingDecision(
  opts: DecisionTestOptions,
  applied: boolean,
  minEffect: number,
  pair: (j: number) => Promise<Outputs>,
  score: (o: Outputs) => number,
): Promise<DecisionRun> {
  const alpha = opts.alpha ?? 0.05 / (opts.family ?? 1);
  const nMax = bettingNMax(opts.n, opts.nMax);
  const o = await sequentialBetting(
    {
      alpha,
      minEffect,
      nMax,
      minPairs: opts.minPairs,
      signal: opts.signal,
      applied,
      onLook: (i) => opts.onProgress?.({ phase: "decision", done: i, total: nMax }),
    },
    pair,
    score,
  );
  return {
    ending: { ...o, ci: o.n === 0 ? [-1, 1] : o.ci },
    looks: o.n,
    nMax,
    method: `re-call one recorded model call with and without the item, paired seeds; betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))})`,
    divisor: Math.max(1, o.n),
  };
}

/** The decision test with the reference's Newcombe interval at looks n, 2n, …, nMax. */
async function newcombeDecision(
  opts: DecisionTestOptions,
  applied: boolean,
  minEffect: number,
  pair: (j: number) => Promise<Outputs>,
  score: (o: Outputs) => number,
  k: { k0: number; k1: number },
): Promise<DecisionRun> {
  const n = opts.n ?? 30;
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * (opts.family ?? 1));
  let i = 0;
  let ci: [number, number] = [-1, 1];
  let verdict = "inconclusive" as Verdict; // set by look(), inside closures
  let stopped: "budget" | undefined;
  const look = () => {
    const { k0, k1 } = k;
    ci = opts.contains !== undefined ? newcombe(k0, i, k1, i, z) : newcombe(k1, i, k0, i, z);
    verdict = verdictFor(ci, applied, minEffect);
    return opts.contains !== undefined ? (k0 - k1) / i : (k1 - k0) / i;
  };
  try {
    for (const size of plan) {
      while (i < size) {
        checkAbort(opts.signal);
        const outputs = await pair(i);
        i++;
        score(outputs);
        opts.onProgress?.({ phase: "decision", done: i, total: plan[plan.length - 1] });
      }
      const eff = look();
      if (DECISIVE.has(verdict) || verdict === "not-applied" || (plan.length > 1 && i >= 2 * n && Math.abs(eff) <= 0.05)) break;
    }
  } catch (err) {
    if (!(err instanceof BudgetExceeded) || i === 0) throw err;
    look(); // the pairs run before the budget ran out, read at one more look
    if (!DECISIVE.has(verdict) && verdict !== "not-applied") verdict = "inconclusive";
    stopped = "budget";
  }
  return {
    ending: { n: i, verdict, ci, stopped, n_needed: newcombeNeeded(i, ci, verdict, minEffect) },
    looks: plan.length,
    nMax: plan[plan.length - 1],
    method: "re-call one recorded model call with and without the item, paired seeds",
    divisor: i,
  };
}
