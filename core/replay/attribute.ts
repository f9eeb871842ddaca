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
 *
 * With the default paired betting method (docs/statistics.md) the suspects are ranked by the
 * recorded evidence (an argument value found in the input, weighted by how few sources held it;
 * wording the next output reused; a short path to the action) and tested likeliest first, in
 * phases: the untrusted inputs; when they do not explain the action, the trusted inputs; when every
 * input group was ruled out, the channels (messages) on the way. When the evidence singles out one
 * suspect of a phase (the only one that alone held an argument value), it is tested alone first,
 * and after a causal verdict the others together. The error rate 0.05 is spent across phases
 * (weights 7 : 2 : 1 over the non-empty phases, fixed from the recording before any replay) and
 * within a phase by a tree (a test runs only below a causal one, children's alphas sum to at most
 * their parent's; the lead's tree ¾ of the phase's, the group's the rest), so the probability of
 * any false blame stays ≤ 0.05. Nothing is blamed without a replay test.
 * `--method newcombe` keeps the reference's procedure (untrusted inputs only, one phase).
 */
import { randomBytes } from "node:crypto";
import { appendTest } from "../log/testslog";
import { buildGraph, nodeId, targetHits } from "../graph/graph";
import { ProvenanceIndex } from "../analysis/provenance";
import { BudgetExceeded, Budget, ReplayError, runTest, type Progress, type ReplayContext, type TestMethod, type TestResult } from "./engine";
import { pct, signed } from "../util/numbers";

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
  /** "betting" (default) or "newcombe" (the reference's procedure and figures). */
  method?: TestMethod;
  /** Which suspects to start with when none are given: "untrusted" (default, then trusted, then channels) or "all" at once. */
  suspectsMode?: "untrusted" | "all";
  /** Family-wise error rate of the whole attribution (betting). Default 0.05. */
  alpha?: number;
}

/** What the recording says about one suspect, before any replay. */
export interface SuspectEvidence {
  spec: string;
  kind: "input" | "message";
  trust: string;
  /** Argument values of the action found in this suspect's content (argument provenance). */
  provenance: number;
  /**
   * The same, each value weighted by 1/k when k recorded sources (inputs, tool results, the task)
   * held it before the action: a value only this suspect held counts 1, one the user's own task
   * also held counts ½.
   */
  exclusive: number;
  /** Argument values no other recorded source held before the action. */
  sole: number;
  /** Largest share of its wording that the next output reused. */
  reuse: number;
  /** Edges on the shortest recorded path to the action. */
  distance: number;
  /** The ranking score (higher: tested first). */
  score: number;
}

/** One phase of an evidence-ordered attribution. */
export interface Phase {
  name: "given" | "untrusted" | "trusted" | "channels" | "all";
  suspects: string[];
  alpha: number;
  family: number;
  /** Ran, or skipped because an earlier phase explained the action. */
  ran: boolean;
  /**
   * The suspect the recorded evidence singles out (betting): the phase's only suspect that alone
   * held an argument value of the action. It is tested first, on its own (docs/statistics.md).
   */
  lead?: string;
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
  /** Betting method: the phases (suspect sets and their share of the error rate). */
  phases?: Phase[];
  /** Betting method: the recorded evidence each suspect was ranked by. */
  evidence?: SuspectEvidence[];
  method?: TestMethod;
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

/**
 * Suspects upstream of the first action the target matches, of one kind, ranked by the recorded
 * evidence: argument provenance first (a value of the action's arguments found in the suspect,
 * weighted by how few recorded sources held it), then wording reuse, then a shorter path. Recorded evidence only orders the tests; it never blames.
 */
export function rankedSuspects(ctx: ReplayContext, target: string, kind: "untrusted" | "trusted" | "channels" | "all"): SuspectEvidence[] {
  const hits = targetHits(ctx.model, target);
  if (!hits.length) throw new ReplayError(`the target ${JSON.stringify(target)} did not happen in this run`);
  const action = hits[0];
  const g = buildGraph(ctx.model, { infer: false, reuse: true });
  const goal = nodeId(action.id);
  const anc = [...g.ancestors(goal)].map((n) => g.nodes.get(n)!).sort((a, b) => a.seq - b.seq);
  const prov = new ProvenanceIndex(ctx.model).forAction(action);
  // shortest path (in edges) from every ancestor to the action: BFS backwards over observed edges
  const dist = new Map<string, number>([[goal, 0]]);
  const queue = [goal];
  for (let q = 0; q < queue.length; q++) {
    for (const e of g.inEdges(queue[q], ["observed"])) {
      if (!dist.has(e.src)) {
        dist.set(e.src, dist.get(queue[q])! + 1);
        queue.push(e.src);
      }
    }
  }
  const out = new Map<string, SuspectEvidence>();
  for (const n of anc) {
    const ev = ctx.model.byId.get(n.eventId)!;
    let spec: string | null = null;
    let k: SuspectEvidence["kind"] = "input";
    if (n.type === "input" && ev.kind !== "task") {
      const untrusted = ev.trust === "untrusted";
      if (kind === "all" || (kind === "untrusted" && untrusted) || (kind === "trusted" && !untrusted)) spec = `input:${ev.source}`;
    } else if (n.type === "message" && (kind === "channels" || kind === "all")) {
      spec = `msg:${ev.agent}->${ev.to}`;
      k = "message";
    }
    if (!spec) continue;
    const held = prov.filter((r) => r.sources.some((src) => src.node === n.id));
    const provenance = held.length;
    // how many distinct recorded sources held each value (the same input read twice is one)
    const holders = held.map((r) => new Set(r.sources.map((src) => src.label)).size);
    const exclusive = holders.reduce((sum, k) => sum + 1 / Math.max(1, k), 0);
    const sole = holders.filter((k) => k === 1).length;
    const reuse = Math.max(0, ...g.outEdges(n.id, ["observed"]).map((e) => e.reuse ?? 0));
    const distance = dist.get(n.id) ?? Infinity;
    const score = 2 * exclusive + reuse + (Number.isFinite(distance) && distance > 0 ? 1 / distance : 0);
    const prev = out.get(spec);
    if (!prev || score > prev.score)
      out.set(spec, {
        spec,
        kind: k,
        trust: String(n.trust ?? ev.trust ?? ""),
        provenance: prev ? Math.max(prev.provenance, provenance) : provenance,
        exclusive: Math.round(exclusive * 1000) / 1000,
        sole: prev ? Math.max(prev.sole, sole) : sole,
        reuse,
        distance,
        score: Math.round(score * 1000) / 1000,
      });
  }
  // stable: equal scores keep the order of the recording
  return [...out.values()].sort((a, b) => b.score - a.score);
}

/**
 * The suspect the recorded evidence singles out, if any: the only one of a phase's suspects that
 * held an argument value of the action no other recorded source held (the outside address only the
 * supplier note carries). Ties (two such suspects) or none: no lead.
 */
export function leadSuspect(ev: SuspectEvidence[]): string | undefined {
  const sole = ev.filter((e) => e.sole >= 1);
  return sole.length === 1 ? sole[0].spec : undefined;
}

/** A phase's suspects, its lead (if the evidence singles one out) first. */
function phaseOf(name: Phase["name"], ev: SuspectEvidence[], alpha: number): Phase {
  // channels only carry what the inputs put in them: no lead among them
  const lead = name === "channels" ? undefined : leadSuspect(ev);
  const suspects = ev.map((e) => e.spec);
  if (lead) suspects.splice(0, suspects.length, lead, ...suspects.filter((s) => s !== lead));
  return { name, suspects, alpha, family: familyOf(Math.max(1, suspects.length)), ran: false, ...(lead ? { lead } : {}) };
}

/** Betting: the share of a causal group's alpha kept for the "enough on its own" (joint) tests below it. */
const JOINT_SHARE = 0.25;

/**
 * Betting: the share of a phase's alpha its lead suspect's test starts with (the tests after a causal
 * lead share it); the rest is for the group test and narrowing when the lead is not causal.
 */
export const LEAD_SHARE = 0.75;

/** Betting: the lead suspect's test may run to this multiple of n_max before it is cut for lack of pairs. */
export const LEAD_N_MAX_FACTOR = 2;

const familyOf = (m: number) => (m === 1 ? 1 : 1 + (m <= 4 ? m : 2 * m - 2) + m);

export async function attribute(ctx: ReplayContext, opts: AttributeOptions): Promise<Attribution> {
  const method: TestMethod = opts.method ?? "betting";
  const alpha = opts.alpha ?? 0.05;
  const minEffect = opts.minEffect ?? 0.2;
  const given = [...new Set(opts.suspects ?? [])];
  // the phases, fixed from the recording before any replay
  let phases: Phase[];
  let evidence: SuspectEvidence[] | undefined;
  if (given.length) phases = [{ name: "given", suspects: given, alpha, family: familyOf(given.length), ran: false }];
  else if (method === "newcombe") {
    const sp = defaultSuspects(ctx, opts.target);
    phases = [{ name: "untrusted", suspects: sp, alpha, family: familyOf(Math.max(1, sp.length)), ran: false }];
  } else if (opts.suspectsMode === "all") {
    evidence = rankedSuspects(ctx, opts.target, "all");
    phases = [phaseOf("all", evidence, alpha)];
  } else {
    const u = rankedSuspects(ctx, opts.target, "untrusted");
    const t = rankedSuspects(ctx, opts.target, "trusted");
    const c = rankedSuspects(ctx, opts.target, "channels");
    evidence = [...u, ...t, ...c];
    const shares: [Phase["name"], SuspectEvidence[], number][] = [
      ["untrusted", u, 7],
      ["trusted", t, 2],
      ["channels", c, 1],
    ];
    const live = shares.filter(([, l]) => l.length);
    const total = live.reduce((sum, [, , w]) => sum + w, 0);
    phases = live.map(([name, l, w]) => phaseOf(name, l, ((alpha * w) / total) * (1 - 1e-12)));
  }
  const all = phases.flatMap((p) => p.suspects);
  if (!all.length) throw new ReplayError("no suspects: no input reached the action; pass --suspect to choose some");
  if (opts.maxCalls !== undefined) ctx.budget = new Budget(opts.maxCalls);
  const before = { ...ctx.counts };
  const tests: TestResult[] = [];
  let stopped: Attribution["stopped"] = "done";
  const causes: Cause[] = [];
  const joint: string[][] = [];
  let group: TestResult | null = null;
  let current: Phase = phases[0];
  // newcombe: the reference's correction for the whole family. betting: hierarchical (tree) alpha:
  // a test runs only when its parent group was causal, and the alphas of a node's children sum to
  // at most its own, so a false causal verdict anywhere has probability ≤ the phase's alpha
  // (docs/statistics.md). Each test gets its alpha from the caller.
  const nMax = opts.nMax ?? 80;
  const test = async (specs: string[], baseline?: string[], alphaHere = current.alpha, kind?: "lead" | "rest"): Promise<TestResult> => {
    const lead = kind === "lead";
    const r = await runTest(ctx, {
      intervention: specs.length > 1 ? specs : specs[0],
      baseline,
      target: opts.target,
      n: opts.n ?? 10,
      // the lead suspect's test may run longer, and stops without a verdict only when none is reachable
      nMax: lead ? LEAD_N_MAX_FACTOR * nMax : nMax,
      futility: lead ? "hopeless" : "projection",
      // below a causal lead only a causal verdict of the others matters
      causalOnly: kind === "rest",
      // newcombe: z for the family (and the phase's share of alpha); betting: alpha per test
      family: method === "newcombe" ? current.family * (0.05 / current.alpha) : current.family,
      alpha: alphaHere,
      method,
      minEffect: opts.minEffect,
      workers: opts.workers,
      seedBase: opts.seedBase,
      sizeRole: opts.roles !== false && specs.length === 1 && !baseline,
      signal: opts.signal,
      onProgress: opts.onProgress ? (p) => opts.onProgress!({ ...p, phase: `test ${tests.length + 1}`, message: `${p.message ?? ""}; attribution so far ${ctx.counts.made - before.made} model calls` }) : undefined,
      save: false,
    });
    r.phase = current.name;
    tests.push(r);
    if (r.stopped === "budget") stopped = "budget";
    return r;
  };
  /**
   * One phase. With a lead suspect (betting): the lead alone at LEAD_SHARE of the phase's alpha;
   * when it is causal, the other suspects together at the same alpha (a child of the lead), and
   * narrowing below them when they matter too. Otherwise (no lead, or the lead was not causal):
   * the group test, then narrowing (singles in evidence order, halving above four) at the rest.
   */
  const runPhase = async (ph: Phase): Promise<{ group: TestResult; causes: Cause[]; joint: string[][]; explained: boolean }> => {
    const suspects = ph.suspects;
    const m = suspects.length;
    const found: Cause[] = [];
    const jointHere: string[][] = [];
    // Which members are enough on their own? Keep one member and remove the rest, against
    // removing them all: the member is sufficient when the action comes back with it alone.
    const narrowJoint = async (specs: string[], alphaEach: number): Promise<string[]> => {
      if (specs.length > 4) return specs;
      const keep: string[] = [];
      for (const sp of specs) {
        const others = specs.filter((o) => o !== sp);
        if ((await test(specs, others, alphaEach)).verdict === "causal") keep.push(sp);
      }
      // betting: blame only members whose sufficiency test was causal (never a group by default)
      return keep.length ? keep : method === "newcombe" ? specs : [];
    };
    // a group shown causal at alphaGroup shares it among the tests below it: betting gives each
    // single JOINT_SHARE's complement and the sufficiency tests JOINT_SHARE, split equally; halves
    // in proportion to their size. newcombe: every test at the family's correction. A suspect
    // already tested alone (a lead that was not causal) keeps that result and is not tested again.
    const split = async (specs: string[], alphaGroup: number, done?: TestResult): Promise<void> => {
      if (specs.length <= 4) {
        const hits: [string, TestResult][] = [];
        for (const sp of specs) {
          const r = done && done.intervention === sp ? done : await test([sp], undefined, ((1 - JOINT_SHARE) * alphaGroup) / specs.length);
          if (r.verdict === "causal") hits.push([sp, r]);
        }
        found.push(...hits.map(([sp, r]) => causeOf(sp, r)));
        if (!hits.length) {
          const j = await narrowJoint(specs, (JOINT_SHARE * alphaGroup) / specs.length);
          if (j.length) jointHere.push(j);
        }
        return;
      }
      const half = specs.length >> 1;
      const parts = [specs.slice(0, half), specs.slice(half)];
      const causal: string[][] = [];
      for (const p of parts) if ((await test(p, undefined, (alphaGroup * p.length) / specs.length)).verdict === "causal") causal.push(p);
      if (!causal.length && method === "newcombe") jointHere.push(specs);
      for (const p of causal) await split(p, (alphaGroup * p.length) / specs.length, done);
    };
    let alphaGroup = ph.alpha;
    let leadTest: TestResult | undefined;
    if (ph.lead && method === "betting") {
      const lead = m > 1 ? LEAD_SHARE * ph.alpha : ph.alpha;
      leadTest = await test([ph.lead], undefined, lead, "lead");
      if (m === 1 || leadTest.verdict === "causal") {
        if (leadTest.verdict === "causal") found.push(causeOf(ph.lead, leadTest));
        const rest = suspects.filter((s) => s !== ph.lead);
        // the others, together, only below a causal lead: the tree gives them the lead's alpha
        if (rest.length && leadTest.verdict === "causal") {
          const r = await test(rest, undefined, lead, "rest");
          if (r.verdict === "causal") {
            if (rest.length === 1) found.push(causeOf(rest[0], r));
            else await split(rest, lead);
          }
        }
        return { group: leadTest, causes: found, joint: jointHere, explained: leadTest.verdict === "causal" && leadTest.p_without < minEffect };
      }
      alphaGroup = ph.alpha - lead;
    }
    const g = await test(suspects, undefined, alphaGroup);
    if (m > 1 && g.verdict === "causal") await split(suspects, alphaGroup, leadTest);
    else if (g.verdict === "causal") found.push(causeOf(suspects[0], g));
    if (g.verdict === "causal" && m > 1 && !found.length && !jointHere.length && method === "newcombe") jointHere.push(suspects);
    // explained: the group is causal and, without it, the action is rare
    return { group: g, causes: found, joint: jointHere, explained: g.verdict === "causal" && g.p_without < minEffect };
  };
  const groups: TestResult[] = [];
  try {
    for (const ph of phases) {
      if (!ph.suspects.length) continue;
      // channels only carry what inputs put in them: test them only when every input group was ruled out
      if (ph.name === "channels" && (causes.length || joint.length || groups.some((g) => g.verdict !== "ruled-out"))) break;
      current = ph;
      ph.ran = true;
      const r = await runPhase(ph);
      groups.push(r.group);
      group ??= r.group;
      causes.push(...r.causes);
      joint.push(...r.joint);
      if (r.explained || (stopped as string) === "budget") break;
    }
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    stopped = "budget";
  }
  const suspects = phases.filter((p) => p.ran).flatMap((p) => p.suspects);
  const m = suspects.length;
  // what each suspect's own test said
  const single = new Map<string, TestResult>();
  for (const t of tests) if (!t.group && !t.baseline) single.set(t.intervention, t);
  const ruledOut: string[] = [];
  const inconclusive: string[] = [];
  for (const ph of phases.filter((p) => p.ran)) {
    for (const s of ph.suspects) {
      // without a test of its own: what the last group test that removed it (with nothing put back) said
      const g = tests.filter((t) => t.phase === ph.name && !t.baseline && t.group?.includes(s)).pop();
      const v = single.get(s)?.verdict ?? (g && g.verdict !== "causal" ? g.verdict : undefined);
      if (v === "ruled-out") ruledOut.push(s);
      else if (v === "inconclusive") inconclusive.push(s);
    }
  }
  const firstPhase = phases[0];
  let summary: string;
  if (!group) summary = "stopped by the model-call budget before the first test finished";
  else if (causes.length || joint.length) {
    summary = causes.map((c) => `${c.role} cause ${c.spec} (${signed(c.effect)})`).join("; ") || "the suspects matter only together";
    if (joint.length) summary += "; joint (each enough alone): " + joint.map((j) => j.join(" + ")).join(", ");
    const last = groups[groups.length - 1];
    if (last.p_without >= 0.2) summary += `; the action still happens in ${pct(last.p_without)} of replays without ${last.group ? "any of them" : last.intervention}`;
    const later = phases.filter((p) => p.ran && p !== firstPhase);
    if (later.length) summary += ` (found among the ${later.map((p) => `${p.name} ${p.name === "channels" ? "" : "inputs"}`.trim()).join(" and ")}: the ${firstPhase.name} ${firstPhase.name === "given" ? "suspects" : "inputs"} did not explain it)`;
  } else if (groups.some((g) => g.verdict === "causal")) {
    const g = groups.find((x) => x.verdict === "causal")!;
    summary = `removing the ${g.group ? g.group.length + " suspects together" : g.intervention} matters (${signed(g.effect)} [${signed(g.ci[0])}, ${signed(g.ci[1])}]), but no single suspect was confirmed within n_max: nothing is blamed; more pairs (--n-max) would narrow it down`;
  } else if (group.verdict === "ruled-out" || (group.p_with > 0 && group.p_without >= group.p_with - 0.05)) {
    summary = `none of the ${m} suspect${m === 1 ? "" : "s"} explains it: the action happens in ${pct(group.p_with)} of replays with them and ${pct(group.p_without)} without any of them`;
  } else {
    summary = `inconclusive: removing all ${firstPhase.suspects.length} ${firstPhase.name} suspect${firstPhase.suspects.length === 1 ? "" : "s"} gave ${signed(group.effect)} [${signed(group.ci[0])}, ${signed(group.ci[1])}]`;
  }
  if (stopped === "budget") summary += ` (stopped by the model-call budget of ${opts.maxCalls ?? ctx.budget.max} calls: results so far)`;
  const id = randomBytes(6).toString("hex");
  if (opts.save !== false) for (const t of tests) appendTest(ctx.run.dir, { ...t, attribution: id });
  const last = groups[groups.length - 1] ?? null;
  const res: Attribution = {
    target: opts.target,
    suspects,
    group,
    tests,
    causes,
    joint,
    ruled_out: ruledOut,
    inconclusive,
    explained: last && last.verdict === "causal" ? last.effect : 0,
    unprompted_rate: last ? last.p_without : null,
    family: phases.reduce((sum, p) => sum + (p.ran ? p.family : 0), 0),
    model_calls: ctx.counts.made - before.made,
    naive_model_calls: ctx.counts.naive - before.naive,
    program_runs: tests.reduce((s, t) => s + t.program_runs, 0),
    stopped,
    summary,
    attribution_id: id,
    method,
  };
  if (method === "betting") {
    res.phases = phases;
    if (evidence) res.evidence = evidence;
  }
  return res;
}

function causeOf(spec: string, r: TestResult): Cause {
  return { spec, role: r.role ?? "confirmed", effect: r.effect, ci: r.ci, p_with: r.p_with, p_without: r.p_without, n: r.n };
}
