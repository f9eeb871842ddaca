/**
 * Running the phases of Find the cause over one small state: every test the attribution runs goes
 * through {@link runOne}, which records it; {@link runPhase} is one phase's tree of tests
 * (docs/statistics.md: the lead's tree, then the group test and narrowing).
 */
import { runTest } from "./run-test";
import type { CallCounts, ReplayContext } from "./context";
import type { TestResult } from "./test-record";
import { CHAIN_SHARE, JOINT_SHARE, LEAD_N_MAX_FACTOR, LEAD_SHARE, type AttributionPlan } from "./attribute-plan";
import type { AttributeOptions, Cause, Phase } from "./attribute-types";

/** What an attribution knows so far. */
export interface AttributionState {
  readonly ctx: ReplayContext;
  readonly opts: AttributeOptions;
  readonly plan: AttributionPlan;
  /** Model calls before the attribution began. */
  readonly before: CallCounts;
  /** Every test run, in order. */
  readonly tests: TestResult[];
  readonly causes: Cause[];
  readonly joint: string[][];
  /** Each phase's first test (the lead's, or the group's). */
  readonly groups: TestResult[];
  /** The test that made each cause a cause. */
  readonly causeTests: Map<string, TestResult>;
  /** Betting: the alpha a cause's handoff chain may spend, when not its test's own (a lead whose tree it shares). */
  readonly chainAlpha: Map<string, number>;
  stopped: "done" | "budget";
  /** The phase (or "chain") the next test belongs to, and its phase's alpha and family. */
  current: { name: string; alpha: number; family: number };
}

export function newState(ctx: ReplayContext, opts: AttributeOptions, plan: AttributionPlan): AttributionState {
  const first = plan.phases[0];
  return {
    ctx,
    opts,
    plan,
    before: { ...ctx.counts },
    tests: [],
    causes: [],
    joint: [],
    groups: [],
    causeTests: new Map(),
    chainAlpha: new Map(),
    stopped: "done",
    current: first,
  };
}

/** A cause, with the test that made it one kept for its chain. */
function blame(st: AttributionState, spec: string, r: TestResult): Cause {
  st.causeTests.set(spec, r);
  return causeOf(spec, r);
}

export function causeOf(spec: string, r: TestResult): Cause {
  return { spec, role: r.role ?? "confirmed", effect: r.effect, ci: r.ci, p_with: r.p_with, p_without: r.p_without, n: r.n };
}

/**
 * One test of the attribution at `alphaHere` (betting: its slot in the tree; newcombe: the
 * family's correction). "lead": the lead suspect's test, which may run longer; "rest": the others
 * below a causal lead, where only a causal verdict matters.
 */
export async function runOne(
  st: AttributionState,
  specs: string[],
  baseline?: string[],
  alphaHere = st.current.alpha,
  kind?: "lead" | "rest",
): Promise<TestResult> {
  const { ctx, opts, plan } = st;
  const lead = kind === "lead";
  const nMax = opts.nMax ?? 80;
  // --n N alone: every test exactly N pairs, the lead's too
  const exact = opts.minPairs !== undefined && opts.minPairs >= nMax;
  const r = await runTest(ctx, {
    intervention: specs.length > 1 ? specs : specs[0],
    baseline,
    target: opts.target,
    n: opts.n ?? 10,
    // the lead suspect's test may run longer, and stops without a verdict only when none is reachable
    nMax: lead && !exact ? LEAD_N_MAX_FACTOR * nMax : nMax,
    ...(opts.minPairs !== undefined ? { minPairs: Math.min(opts.minPairs, nMax) } : {}),
    futility: lead ? "hopeless" : "projection",
    // below a causal lead only a causal verdict of the others matters
    causalOnly: kind === "rest",
    // newcombe: z for the family (and the phase's share of alpha); betting: alpha per test
    family: plan.method === "newcombe" ? st.current.family * (0.05 / st.current.alpha) : st.current.family,
    alpha: alphaHere,
    method: plan.method,
    minEffect: opts.minEffect,
    workers: opts.workers,
    seedBase: opts.seedBase,
    sizeRole: opts.roles !== false && specs.length === 1 && !baseline,
    signal: opts.signal,
    onProgress: opts.onProgress
      ? (p) =>
          opts.onProgress!({
            ...p,
            phase: `test ${st.tests.length + 1}`,
            message: `${p.message ?? ""}; attribution so far ${ctx.counts.made - st.before.made} model calls`,
          })
      : undefined,
    save: false,
  });
  r.phase = st.current.name;
  st.tests.push(r);
  if (r.stopped === "budget") st.stopped = "budget";
  return r;
}

export interface PhaseOutcome {
  group: TestResult;
  causes: Cause[];
  joint: string[][];
  explained: boolean;
}

/** What narrowing inside one phase found. */
interface Found {
  causes: Cause[];
  joint: string[][];
}

/**
 * Which members are enough on their own? Keep one member and remove the rest, against removing
 * them all: the member is sufficient when the action comes back with it alone.
 */
async function narrowJoint(st: AttributionState, specs: string[], alphaEach: number): Promise<string[]> {
  if (specs.length > 4) return specs;
  const keep: string[] = [];
  for (const sp of specs) {
    const others = specs.filter((o) => o !== sp);
    if ((await runOne(st, specs, others, alphaEach)).verdict === "causal") keep.push(sp);
  }
  // betting: blame only members whose sufficiency test was causal (never a group by default)
  return keep.length ? keep : st.plan.method === "newcombe" ? specs : [];
}

/**
 * A group shown causal at alphaGroup shares it among the tests below it: betting gives each single
 * JOINT_SHARE's complement and the sufficiency tests JOINT_SHARE, split equally; halves in proportion
 * to their size. newcombe: every test at the family's correction. A suspect already tested alone (a
 * lead that was not causal) keeps that result and is not tested again.
 */
async function split(st: AttributionState, found: Found, specs: string[], alphaGroup: number, done?: TestResult): Promise<void> {
  if (specs.length <= 4) {
    const hits: [string, TestResult][] = [];
    for (const sp of specs) {
      const r = done && done.intervention === sp ? done : await runOne(st, [sp], undefined, ((1 - JOINT_SHARE) * alphaGroup) / specs.length);
      if (r.verdict === "causal") hits.push([sp, r]);
    }
    found.causes.push(...hits.map(([sp, r]) => blame(st, sp, r)));
    if (!hits.length) {
      const j = await narrowJoint(st, specs, (JOINT_SHARE * alphaGroup) / specs.length);
      if (j.length) found.joint.push(j);
    }
    return;
  }
  const half = specs.length >> 1;
  const parts = [specs.slice(0, half), specs.slice(half)];
  const causal: string[][] = [];
  for (const p of parts) if ((await runOne(st, p, undefined, (alphaGroup * p.length) / specs.length)).verdict === "causal") causal.push(p);
  if (!causal.length && st.plan.method === "newcombe") found.joint.push(specs);
  for (const p of causal) await split(st, found, p, (alphaGroup * p.length) / specs.length, done);
}

/**
 * The lead's tree (betting): the lead alone at LEAD_SHARE of the phase's alpha; when it is causal,
 * the other suspects together at the same alpha (a child of the lead), and narrowing below them
 * when they matter too. Returns the outcome when the tree decided the phase, or the lead's test
 * (not causal) for the fallback.
 */
async function leadTree(st: AttributionState, ph: Phase, found: Found): Promise<PhaseOutcome | TestResult> {
  const m = ph.suspects.length;
  const alphaLead = m > 1 ? LEAD_SHARE * ph.alpha : ph.alpha;
  const leadTest = await runOne(st, [ph.lead!], undefined, alphaLead, "lead");
  if (m > 1 && leadTest.verdict !== "causal") return leadTest;
  if (leadTest.verdict === "causal") found.causes.push(blame(st, ph.lead!, leadTest));
  const rest = ph.suspects.filter((s) => s !== ph.lead);
  // the others, together, only below a causal lead: the tree gives them the lead's alpha, or, when
  // the recording shows the lead has a chain to follow (it carried an earlier agent's words, or
  // handoffs found in text lie on its way to the action), shares it with that chain (fixed before
  // any replay)
  const map = st.plan.handoffs;
  const shared = rest.length > 0 && !!map && !!(map.downstream(ph.lead!) || map.upstream(ph.lead!));
  const alphaRest = shared ? (1 - CHAIN_SHARE) * alphaLead : alphaLead;
  if (shared) st.chainAlpha.set(ph.lead!, CHAIN_SHARE * alphaLead);
  if (rest.length && leadTest.verdict === "causal") {
    const r = await runOne(st, rest, undefined, alphaRest, "rest");
    if (r.verdict === "causal") {
      if (rest.length === 1) found.causes.push(blame(st, rest[0], r));
      else await split(st, found, rest, alphaRest);
    }
  }
  return { group: leadTest, ...found, explained: leadTest.verdict === "causal" && leadTest.p_without < st.plan.minEffect };
}

/**
 * One phase. With a lead suspect (betting): its tree first (above). Otherwise, or when the lead
 * was not causal: the group test at the rest of the phase's alpha, then narrowing (singles in
 * evidence order, halving above four).
 */
export async function runPhase(st: AttributionState, ph: Phase): Promise<PhaseOutcome> {
  const suspects = ph.suspects;
  const m = suspects.length;
  const found: Found = { causes: [], joint: [] };
  let alphaGroup = ph.alpha;
  let leadTest: TestResult | undefined;
  if (ph.lead && st.plan.method === "betting") {
    const t = await leadTree(st, ph, found);
    if (!("verdict" in t)) return t;
    leadTest = t;
    alphaGroup = ph.alpha - LEAD_SHARE * ph.alpha;
  }
  const g = await runOne(st, suspects, undefined, alphaGroup);
  if (m > 1 && g.verdict === "causal") await split(st, found, suspects, alphaGroup, leadTest);
  else if (g.verdict === "causal") found.causes.push(blame(st, suspects[0], g));
  if (g.verdict === "causal" && m > 1 && !found.causes.length && !found.joint.length && st.plan.method === "newcombe") found.joint.push(suspects);
  // explained: the group is causal and, without it, the action is rare
  return { group: g, ...found, explained: g.verdict === "causal" && g.p_without < st.plan.minEffect };
}
