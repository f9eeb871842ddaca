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
import { newcombe, roleFor, sequentialLooks, suggestedN, verdictFor, zFor, type Verdict } from "../stats/stats";
import { ReplayError, checkAbort, type Progress, type ReplayContext } from "./context";
import { bettingNMax, sequentialBetting } from "./sequential";
import { DECISIVE, MIN_EFFECT, r4, type TestMethod } from "./test-record";

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
  const changes = iv.edit ? recordChanges(opts.save !== false ? ctx.run.dir : undefined, [iv], items.map((c) => ({ ...c, fromEvent: c.from_event }))) : [];
  const applied = kept.length < items.length || changes.length > 0;
  const call = async (list: typeof items, seed: number) => {
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
  if ((opts.method ?? "betting") === "betting") {
    const minEffect = opts.minEffect ?? MIN_EFFECT;
    const alpha = opts.alpha ?? 0.05 / (opts.family ?? 1);
    const nMax = bettingNMax(opts.n, opts.nMax);
    let k0 = 0;
    let k1 = 0;
    // pair j: the recorded context and the intervened one (and, without --contains, the recorded one again: noise)
    const pair = async (j: number) => {
      const s = deriveSeed("dt", ctx.runId, ev.seq, j);
      const a = await call(items, s);
      const b = await call(kept, s);
      return { a, b, again: opts.contains === undefined ? await call(items, s) : "" };
    };
    const score = ({ a, b, again }: { a: string; b: string; again: string }): number => {
      if (opts.contains !== undefined) {
        const x = +a.includes(opts.contains);
        const y = +b.includes(opts.contains);
        k0 += x;
        k1 += y;
        return x - y;
      }
      const changed = +(a !== b);
      const noise = +(a !== again);
      k1 += changed;
      k0 += noise;
      return changed - noise;
    };
    const o = await sequentialBetting({ alpha, minEffect, nMax, minPairs: opts.minPairs, signal: opts.signal, applied, onLook: (i) => opts.onProgress?.({ phase: "decision", done: i, total: nMax }) }, pair, score);
    const i = o.n;
    const base = { n: i, plan: [nMax], ci: i === 0 ? ([-1, 1] as [number, number]) : o.ci, verdict: o.verdict, minEffect };
    const extra = { p_value: o.p_value, e_value: o.e_value, alpha, stopped: o.stopped, stop_reason: o.stop_reason };
    const q = Math.max(1, i);
    const result =
      opts.contains !== undefined
        ? decisionRecord(ev, base, { intervention: opts.intervention, target: `decision#${ev.seq} output~${opts.contains}`, p_with: r4(k0 / q), p_without: r4(k1 / q), effect: r4((k0 - k1) / q), noise: null, model_calls: 2 * i, ...extra })
        : decisionRecord(ev, base, { intervention: opts.intervention, target: `decision#${ev.seq} output changed`, p_with: null, p_without: null, effect: r4((k1 - k0) / q), noise: r4(k0 / q), model_calls: 3 * i, ...extra });
    result.looks = i;
    result.n_needed = o.verdict === "inconclusive" ? o.n_needed : null;
    result.method = `re-call one recorded model call with and without the item, paired seeds; betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))})`;
    if (changes.length) result.changes = changes;
    if (opts.save !== false) appendTest(ctx.run.dir, result);
    return result;
  }
  const n = opts.n ?? 30;
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * (opts.family ?? 1));
  const minEffect = opts.minEffect ?? MIN_EFFECT;
  let k0 = 0;
  let k1 = 0;
  let i = 0;
  let ci: [number, number] = [-1, 1];
  let verdict: Verdict = "inconclusive";
  for (const size of plan) {
    while (i < size) {
      checkAbort(opts.signal);
      const s = deriveSeed("dt", ctx.runId, ev.seq, i);
      i++;
      const a = await call(items, s);
      const b = await call(kept, s);
      if (opts.contains !== undefined) {
        k0 += +a.includes(opts.contains);
        k1 += +b.includes(opts.contains);
      } else {
        k1 += +(a !== b); // changed when the item is removed
        k0 += +(a !== (await call(items, s))); // changed anyway: sampling noise
      }
      opts.onProgress?.({ phase: "decision", done: i, total: plan[plan.length - 1] });
    }
    ci = opts.contains !== undefined ? newcombe(k0, i, k1, i, z) : newcombe(k1, i, k0, i, z);
    verdict = verdictFor(ci, applied, minEffect);
    const eff = opts.contains !== undefined ? (k0 - k1) / i : (k1 - k0) / i;
    if (DECISIVE.has(verdict) || verdict === "not-applied" || (plan.length > 1 && i >= 2 * n && Math.abs(eff) <= 0.05)) break;
  }
  const result =
    opts.contains !== undefined
      ? decisionRecord(ev, { n: i, plan, ci, verdict, minEffect }, { intervention: opts.intervention, target: `decision#${ev.seq} output~${opts.contains}`, p_with: r4(k0 / i), p_without: r4(k1 / i), effect: r4((k0 - k1) / i), noise: null, model_calls: 2 * i })
      : decisionRecord(ev, { n: i, plan, ci, verdict, minEffect }, { intervention: opts.intervention, target: `decision#${ev.seq} output changed`, p_with: null, p_without: null, effect: r4((k1 - k0) / i), noise: r4(k0 / i), model_calls: 3 * i });
  result.method = "re-call one recorded model call with and without the item, paired seeds";
  if (changes.length) result.changes = changes;
  if (opts.save !== false) appendTest(ctx.run.dir, result);
  return result;
}

/**
 * The tests.jsonl record of a decision-level test (in-process or over HTTP): the fields every
 * decision test shares, around the rates and effect the caller measured.
 */
export function decisionRecord(
  ev: { id: string; seq: number },
  o: { n: number; plan: number[]; ci: [number, number]; verdict: Verdict; minEffect: number },
  fields: { intervention: string; target: string; p_with: number | null; p_without: number | null; effect: number; noise: number | null; model_calls: number } & Record<string, unknown>,
): Record<string, unknown> {
  const rec: Record<string, unknown> = {
    ...fields,
    n: o.n,
    looks: o.plan.length,
    n_max: o.plan[o.plan.length - 1],
    ci: [r4(o.ci[0]), r4(o.ci[1])],
    verdict: o.verdict,
    min_effect: o.minEffect,
    n_needed: o.verdict === "inconclusive" ? Math.max(o.n, suggestedN(o.n, o.ci, o.minEffect)) : null,
    scope: "decision",
    decision: ev.id,
    decision_seq: ev.seq,
  };
  if (o.verdict === "causal" && fields.p_with !== null) rec.role = roleFor(o.ci, fields.p_with);
  return rec;
}

