/**
 * Find the cause: the whole investigation of one action, like git bisect for agent incidents.
 *
 *  1. Remove every suspect at once (default: the untrusted inputs upstream of the action). If the
 *     action still happens about as often, none of them is the reason; one test answers that.
 *  2. Otherwise narrow down: test the suspects one by one (with more than four, halve the group).
 *  3. Classify each cause by its interval: primary (confidently explains at least half of the
 *     occurrences), contributing (confidently less than half), confirmed (causal, share unclear).
 *     When the group matters and no single member does, each member is enough on its own: they are
 *     joint (redundant) causes; leave-one-in tests say which members really are.
 *
 * All tests share one "nothing removed" arm, and every interval is corrected for every test the
 * attribution may run, so the whole attribution keeps a 5% false-positive rate.
 */
import { randomBytes } from "node:crypto";
import { appendTest } from "../log/testslog";
import { buildGraph, nodeId, targetHits } from "../graph/graph";
import { BudgetExceeded, Budget, ReplayError, runTest, type Progress, type ReplayContext, type TestResult } from "./engine";
import { pct, signed } from "../format";

export interface AttributeOptions {
  target: string;
  suspects?: string[];
  n?: number;
  nMax?: number;
  minEffect?: number;
  workers?: number;
  /** Keep testing a proven cause until its share is clear (default true; --no-roles turns it off). */
  roles?: boolean;
  /** Model-call budget for the whole attribution. */
  maxCalls?: number;
  seedBase?: string;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export interface Cause {
  spec: string;
  role: string;
  effect: number;
  ci: [number, number];
  p_with: number;
  p_without: number;
  n: number;
}

export interface Attribution {
  target: string;
  suspects: string[];
  group: TestResult | null;
  tests: TestResult[];
  causes: Cause[];
  joint: string[][];
  ruled_out: string[];
  inconclusive: string[];
  explained: number;
  unprompted_rate: number | null;
  family: number;
  model_calls: number;
  naive_model_calls: number;
  program_runs: number;
  stopped: "done" | "budget";
  summary: string;
  attribution_id: string;
}

/** Every untrusted input upstream of the first action the target matches. */
export function defaultSuspects(ctx: ReplayContext, target: string): string[] {
  const hits = targetHits(ctx.model, target);
  if (!hits.length) throw new ReplayError(`the target ${JSON.stringify(target)} did not happen in this run`);
  const g = buildGraph(ctx.model, { infer: false, reuse: false });
  const anc = [...g.ancestors(nodeId(hits[0].id))].map((n) => g.nodes.get(n)!).sort((a, b) => a.seq - b.seq);
  const out: string[] = [];
  for (const n of anc) {
    const ev = ctx.model.byId.get(n.eventId)!;
    if (n.type === "input" && ev.kind !== "task" && ev.trust === "untrusted") {
      const spec = `input:${ev.source}`;
      if (!out.includes(spec)) out.push(spec);
    }
  }
  return out;
}


export async function attribute(ctx: ReplayContext, opts: AttributeOptions): Promise<Attribution> {
  const suspects = [...new Set(opts.suspects?.length ? opts.suspects : defaultSuspects(ctx, opts.target))];
  const m = suspects.length;
  if (m === 0) throw new ReplayError("no suspects: no untrusted input reached the action; pass --suspect to choose some");
  // every test this may run: the group, the halvings or singles, and a leave-one-in per member of a joint group
  const family = m === 1 ? 1 : 1 + (m <= 4 ? m : 2 * m - 2) + m;
  if (opts.maxCalls !== undefined) ctx.budget = new Budget(opts.maxCalls);
  const before = { ...ctx.counts };
  const tests: TestResult[] = [];
  let stopped: Attribution["stopped"] = "done";
  const test = async (specs: string[], baseline?: string[]): Promise<TestResult> => {
    const r = await runTest(ctx, {
      intervention: specs.length > 1 ? specs : specs[0],
      baseline,
      target: opts.target,
      n: opts.n ?? 10,
      nMax: opts.nMax ?? 80,
      family,
      minEffect: opts.minEffect,
      workers: opts.workers,
      seedBase: opts.seedBase,
      sizeRole: opts.roles !== false && specs.length === 1 && !baseline,
      signal: opts.signal,
      onProgress: opts.onProgress ? (p) => opts.onProgress!({ ...p, phase: `test ${tests.length + 1}`, message: p.message }) : undefined,
      save: false,
    });
    tests.push(r);
    if (r.stopped === "budget") stopped = "budget";
    return r;
  };
  const causes: Cause[] = [];
  const joint: string[][] = [];
  let group: TestResult | null = null;
  try {
    group = await test(suspects);
    if (m > 1 && group.verdict === "causal") {
      // Which members are enough on their own? Keep one member and remove the rest, against
      // removing them all: the member is sufficient when the action comes back with it alone.
      // (Comparing leave-one-in against nothing removed instead would call a member insufficient
      // whenever two together make the action a little likelier than one, and blame everyone.)
      const narrowJoint = async (specs: string[]): Promise<string[]> => {
        if (specs.length > 4) return specs;
        const keep: string[] = [];
        for (const sp of specs) {
          const others = specs.filter((o) => o !== sp);
          if ((await test(specs, others)).verdict === "causal") keep.push(sp);
        }
        return keep.length ? keep : specs;
      };
      const split = async (specs: string[]): Promise<void> => {
        if (specs.length <= 4) {
          const hits: [string, TestResult][] = [];
          for (const sp of specs) {
            const r = await test([sp]);
            if (r.verdict === "causal") hits.push([sp, r]);
          }
          causes.push(...hits.map(([sp, r]) => causeOf(sp, r)));
          if (!hits.length) joint.push(await narrowJoint(specs));
          return;
        }
        const half = specs.length >> 1;
        const parts = [specs.slice(0, half), specs.slice(half)];
        const causal: string[][] = [];
        for (const p of parts) if ((await test(p)).verdict === "causal") causal.push(p);
        if (!causal.length) joint.push(specs);
        for (const p of causal) await split(p);
      };
      await split(suspects);
    } else if (group.verdict === "causal") causes.push(causeOf(suspects[0], group));
    if (group.verdict === "causal" && m > 1 && !causes.length && !joint.length) joint.push(suspects);
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    stopped = "budget";
  }
  // what each suspect's own test said
  const single = new Map<string, TestResult>();
  for (const t of tests) if (!t.group) single.set(t.intervention, t);
  const ruledOut: string[] = [];
  const inconclusive: string[] = [];
  for (const s of suspects) {
    const t = single.get(s) ?? (m === 1 ? group ?? undefined : undefined);
    const v = t?.verdict ?? (group && group.verdict !== "causal" ? group.verdict : undefined);
    if (v === "ruled-out") ruledOut.push(s);
    else if (v === "inconclusive") inconclusive.push(s);
  }
  let summary: string;
  if (!group) summary = "stopped by the model-call budget before the first test finished";
  else if (group.verdict === "causal") {
    summary = causes.map((c) => `${c.role} cause ${c.spec} (${signed(c.effect)})`).join("; ") || "the suspects matter only together";
    if (joint.length) summary += "; joint (each enough alone): " + joint.map((j) => j.join(" + ")).join(", ");
    if (group.p_without >= 0.2) summary += `; the action still happens in ${pct(group.p_without)} of replays without any of them`;
  } else if (group.verdict === "ruled-out" || (group.p_with > 0 && group.p_without >= group.p_with - 0.05)) {
    summary = `none of the ${m} suspect${m === 1 ? "" : "s"} explains it: the action happens in ${pct(group.p_with)} of replays with them and ${pct(group.p_without)} without any of them`;
  } else {
    summary = `inconclusive: removing all ${m} suspect${m === 1 ? "" : "s"} gave ${signed(group.effect)} [${signed(group.ci[0])}, ${signed(group.ci[1])}]`;
  }
  if (stopped === "budget") summary += ` (stopped by the model-call budget of ${opts.maxCalls} calls: results so far)`;
  const id = randomBytes(6).toString("hex");
  if (opts.save !== false) for (const t of tests) appendTest(ctx.run.dir, { ...t, attribution: id });
  return {
    target: opts.target,
    suspects,
    group,
    tests,
    causes,
    joint,
    ruled_out: ruledOut,
    inconclusive,
    explained: group && group.verdict === "causal" ? group.effect : 0,
    unprompted_rate: group ? group.p_without : null,
    family,
    model_calls: ctx.counts.made - before.made,
    naive_model_calls: ctx.counts.naive - before.naive,
    program_runs: tests.reduce((s, t) => s + t.program_runs, 0),
    stopped,
    summary,
    attribution_id: id,
  };
}

function causeOf(spec: string, r: TestResult): Cause {
  return { spec, role: r.role ?? "confirmed", effect: r.effect, ci: r.ci, p_with: r.p_with, p_without: r.p_without, n: r.n };
}
