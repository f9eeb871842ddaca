/**
 * Run replay and the paired test.
 *
 * A replay re-executes the recorded System: tool calls identical to recorded ones (same agent, tool,
 * canonical arguments and occurrence) get the recorded result (`tape`); calls the original never
 * made are stubbed (`stub`) and counted as off-tape; a real tool runs only with liveTools.
 *
 * The paired test runs N pairs; both arms of pair i use the same derived seed
 * deriveSeed("cf", runId, i), one as recorded ("with" the item), one with the intervention
 * ("without"). It reports how often the target happened in each arm, the difference with a
 * Newcombe interval, the exact McNemar p-value and a verdict, sequentially when nMax > n.
 *
 * Cost: for seeded models a call both arms make identically has the same output, so it is computed
 * once (a cache keyed by model, agent, purpose, seed, params and the context's refs); the "nothing
 * removed" arm of pair i is shared by every test of an attribution.
 */
import { parseLossless } from "../log/pyjson";
import { appendTest } from "../log/testslog";
import type { RunData } from "../log/reader";
import { MemorySink, NullSink } from "../log/writer";
import { canonical, deriveSeed, refOf } from "../log/hash";
import { interveneOn, recordChanges } from "../interventions";
import { memoryTrace, traceOf, type TraceEntry } from "./trace";
import { RunModel } from "../graph/model";
import { parseIntervention, parseTarget, matchesTarget, type Intervention, type Target } from "../specs";
import { mcnemarExact, newcombe, roleFor, sequentialLooks, suggestedN, verdictFor, zFor, type Role, type Verdict } from "../stats";
import { PairedSequence } from "../betting";
import type { ModelCache, Tape, ActionSummary } from "../sdk/runtime";
import type { System } from "../sdk/system";

export const MIN_EFFECT = 0.2;
const DECISIVE: ReadonlySet<Verdict> = new Set(["causal", "suppressive", "ruled-out"]);

/** The recorded tool results of a run, served back by (agent, tool, canonical args, occurrence). */
export class RunTape implements Tape {
  private entries = new Map<string, { ref: string | null; status: string }>();
  constructor(private m: RunModel) {
    const seen = new Map<string, number>();
    for (const a of m.actions) {
      const args = m.canonical(a.args_ref);
      const base = `${a.agent}\u0000${a.tool}\u0000${args}`;
      const k = seen.get(base) ?? 0;
      seen.set(base, k + 1);
      this.entries.set(`${base}\u0000${k}`, { ref: a.result_ref, status: String(a.status) });
    }
  }
  lookup(agent: string, tool: string, argsCanonical: string, occurrence: number): { result: unknown; status: string } | undefined {
    const e = this.entries.get(`${agent}\u0000${tool}\u0000${argsCanonical}\u0000${occurrence}`);
    if (!e) return undefined;
    const canon = this.m.canonical(e.ref);
    // lossless: a recorded 89.0 goes back to the agent as a float, so replays hash like the original
    return { result: canon ? parseLossless(canon) : null, status: e.status };
  }
}

export class ReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReplayError";
  }
}

export class BudgetExceeded extends Error {
  constructor() {
    super("model-call budget reached");
    this.name = "BudgetExceeded";
  }
}

/** A model-call budget shared by every test of an investigation. */
export class Budget {
  used = 0;
  constructor(readonly max: number = Infinity) {}
  get left(): number {
    return this.max - this.used;
  }
}

/** Counts of model calls: made, and what a replay without sharing would have made. */
export interface CallCounts {
  made: number;
  naive: number;
}

export interface ArmOutcome {
  hit: boolean;
  applied: boolean;
  offTape: number;
  calls: number;
  actions: ActionSummary[];
  /** What this arm's replay assumed (a System that reports it: the agentless replay). */
  assumptions?: string[];
}

/** How a test replays: 1 one recorded call re-sent, 2 agentless re-simulation from the recorded requests, 3 the program re-run. */
export type Rung = 1 | 2 | 3;

/** What a program replay (rung 3) assumes. */
export const PROGRAM_ASSUMPTIONS = [
  "tools are deterministic: a tool call identical to a recorded one (agent, tool, arguments, occurrence) gets the recorded result; others get a stub and count as off-tape, unless live tools were asked for",
  "the program re-run makes its model calls as it did when recorded, apart from what the interventions change",
];

export interface Progress {
  phase: string;
  done: number;
  total: number;
  message?: string;
}

/** Everything replays of one run share: the program, the tape, the caches, the budget. */
export class ReplayContext {
  readonly model: RunModel;
  readonly tape: RunTape;
  readonly task: string | undefined;
  readonly modelCache: ModelCache | undefined;
  /** Shared "nothing removed" arms: key `${seedBase}|${i}` → outcome. */
  readonly baseArms = new Map<string, ArmOutcome>();
  readonly counts: CallCounts = { made: 0, naive: 0 };
  budget: Budget;

  constructor(
    readonly run: RunData,
    readonly system: System,
    opts: { liveTools?: boolean; budget?: Budget; cache?: boolean } = {},
  ) {
    this.model = new RunModel(run);
    this.tape = new RunTape(this.model);
    const t = this.model.task();
    this.task = typeof t === "string" ? t : undefined;
    const useCache = opts.cache ?? system.seededModels;
    if (useCache) {
      const map = new Map<string, { value: unknown; usage?: Record<string, unknown> }>();
      this.modelCache = { get: (k) => map.get(k), set: (k, v) => void map.set(k, v) };
    }
    this.liveTools = !!opts.liveTools;
    this.budget = opts.budget ?? new Budget();
  }
  readonly liveTools: boolean;

  get runId(): string {
    return this.run.runId;
  }

  /** 3 when the program re-runs; a System that replays otherwise says so (the agentless replay: 2). */
  get rung(): Rung {
    const r = (this.system as { rung?: unknown }).rung;
    return r === 1 || r === 2 ? r : 3;
  }

  /**
   * Pair j of a test: the "with" arm (only the baseline removed), run once per seed base, baseline
   * and j and then shared by every test of the run (scored against each test's own target), and the
   * arm with the interventions. Both use the seed deriveSeed(seedBase, runId, j).
   */
  async pair(seedBase: string, j: number, baseline: Intervention[], interventions: Intervention[], target: Target): Promise<{ base: ArmOutcome; treat: ArmOutcome; baseRan: boolean }> {
    const seed = deriveSeed(seedBase, this.runId, j);
    const key = `${seedBase}|${baseline.map((b) => b.spec).join(" | ")}|${j}`;
    let base = this.baseArms.get(key);
    const baseRan = !base;
    if (!base) {
      base = await this.arm(seed, baseline, target, `b${j}`);
      this.baseArms.set(key, base);
    } else {
      this.counts.naive += base.calls; // a naive replay would have run it again
      base = { ...base, hit: base.actions.some((a) => a.mode !== "blocked" && matchesTarget(target, a)) };
    }
    const treat = await this.arm(seed, interventions, target, `t${j}`);
    return { base, treat, baseRan };
  }

  /** Runs the program once with a seed and interventions; scores the target. */
  async arm(seed: number, interventions: Intervention[], target: Target, label: string): Promise<ArmOutcome> {
    if (this.budget.left <= 0) throw new BudgetExceeded();
    const r = await this.system.run({
      seed,
      runId: `${this.runId}-${label}`,
      sink: new NullSink(),
      chain: false,
      captureSites: false,
      tape: this.tape,
      interventions,
      liveTools: this.liveTools,
      modelCache: this.modelCache,
      task: this.task,
    });
    if (r.error !== undefined) throw new ReplayError(`${this.rung === 2 ? "the replay without the program failed" : "the program failed in replay"} (${label}): ${r.error}`);
    const extra = r as { assumptions?: unknown; unreached?: unknown };
    const unreached = Array.isArray(extra.unreached) ? extra.unreached.map(String) : [];
    // an agent the replay could not reach (a link it could not follow) did not act: that is not evidence
    if (unreached.length && this.model.actions.some((a) => unreached.includes(String(a.agent)) && matchesTarget(target, { tool: a.tool, agent: String(a.agent), args: this.model.canonical(a.args_ref), result: this.model.canonical(a.result_ref) }))) {
      const why = Array.isArray(extra.assumptions) ? extra.assumptions.filter((x) => String(x).startsWith("not re-simulated")).join("; ") : "";
      throw new ReplayError(`the target's agent is not reached by this replay without the program: ${why}. Test a suspect inside that agent's own prompt, or replay with the program (--allow-program)`);
    }
    const calls = r.stats.modelCalls;
    this.counts.made += calls;
    this.counts.naive += calls + r.stats.modelCallsCached;
    this.budget.used += calls;
    return {
      hit: r.actions.some((a) => a.mode !== "blocked" && matchesTarget(target, a)), // a call a fix's guard blocked did not happen
      applied: r.stats.ablated > 0,
      offTape: r.actions.filter((a) => a.mode !== "tape").length,
      calls: calls + r.stats.modelCallsCached,
      actions: r.actions,
      ...(Array.isArray(extra.assumptions) ? { assumptions: extra.assumptions.map(String) } : {}),
    };
  }
}

/** The rung and assumptions of a test (TestResult.rung, .assumptions). */
function scopeOf(ctx: ReplayContext, t: PairTally): { rung: Rung; assumptions: string[] } {
  return { rung: ctx.rung, assumptions: t.assumptions.size ? [...t.assumptions] : ctx.rung === 3 ? [...PROGRAM_ASSUMPTIONS] : [] };
}

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

  async pair(ctx: ReplayContext, seedBase: string, j: number, baseline: Intervention[], interventions: Intervention[], target: Target): Promise<{ base: ArmOutcome; treat: ArmOutcome }> {
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
   * "betting" (default): the paired, anytime-valid betting confidence sequence (core/betting.ts),
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

export type TestMethod = "betting" | "newcombe";

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
export function followUpTest(ctx: ReplayContext, o: FollowUpOptions, family: number, intervention: string | string[], baseline?: string[], onProgress = o.onProgress): Promise<TestResult> {
  return runTest(ctx, { intervention, baseline, target: o.target, n: o.n ?? 10, nMax: o.nMax ?? 80, family, workers: o.workers, seedBase: o.seedBase, signal: o.signal, onProgress, save: false });
}

export interface TestResult {
  intervention: string;
  target: string;
  n: number;
  looks: number;
  n_max: number;
  family: number;
  stopped: "decisive" | "n_max" | "futility" | "budget";
  p_with: number;
  p_without: number;
  effect: number;
  ci: [number, number];
  verdict: Verdict;
  role?: Role;
  pair_flips: { removed: number; added: number };
  p_value: number;
  intervention_applied_in: number;
  off_tape_actions: number;
  off_tape_by_arm: { with: number; without: number };
  min_effect: number;
  n_needed: number | null;
  program_runs: number;
  model_calls: number;
  naive_model_calls: number;
  method: string;
  scope: "run";
  /** 1 one recorded call re-sent, 2 agentless re-simulation from the recorded requests, 3 the program re-run. */
  rung?: Rung;
  /** What the replay assumed, in plain sentences. */
  assumptions?: string[];
  group?: string[];
  /** Betting: the largest e-value against "no effect"; p_value = min(1, 1/e_value). */
  e_value?: number;
  /** Betting: the error rate this test's interval was computed at. */
  alpha?: number;
  /** Why the test stopped, in words, and what more would need. */
  stop_reason?: string;
  [k: string]: unknown;
}

const r4 = (x: number) => Math.round(x * 10000) / 10000;

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) {
    const e = new Error("cancelled");
    e.name = "AbortError";
    throw e;
  }
}

/** Does removing the intervention change how often the target happens? */
export async function runTest(ctx: ReplayContext, opts: TestOptions): Promise<TestResult> {
  if ((opts.method ?? "betting") === "betting") return runBettingTest(ctx, opts);
  const specs = Array.isArray(opts.intervention) ? opts.intervention : [opts.intervention];
  const interventions = specs.map(parseIntervention);
  const baseline = (opts.baseline ?? []).map(parseIntervention);
  const baseKey = baseline.map((b) => b.spec).join(" | ");
  const target = parseTarget(opts.target);
  const n = opts.n ?? 30;
  const family = opts.family ?? 1;
  const minEffect = opts.minEffect ?? MIN_EFFECT;
  const seedBase = opts.seedBase ?? "cf";
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * family);
  const workers = Math.max(1, opts.workers ?? 1);
  const before = { ...ctx.counts };
  const t = new PairTally();
  let i = 0;
  let stopped: TestResult["stopped"] = "n_max";
  let ci: [number, number] = [-1, 1];
  let verdict: Verdict = "inconclusive";
  const pair = (j: number) => t.pair(ctx, seedBase, j, baseline, interventions, target);
  try {
    for (const size of plan) {
      for (let j = i; j < size; j += workers) {
        checkAbort(opts.signal);
        const batch = [];
        for (let k = j; k < Math.min(size, j + workers); k++) batch.push(pair(k));
        for (const p of await Promise.all(batch)) {
          t.add(p);
          i++;
        }
        opts.onProgress?.({ phase: "test", done: i, total: plan[plan.length - 1], message: `${specs.join(" | ")}: ${i} pairs` });
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
      if (plan.length > 1 && i >= 2 * n && Math.abs((t.kWith - t.kWithout) / i) <= 0.05 && Math.max(t.kWith, t.kWithout) >= minEffect * i && size !== plan[plan.length - 1]) {
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
  const pWith = t.kWith / i;
  const pWithout = t.kWithout / i;
  const result: TestResult = {
    intervention: specs.join(" | "),
    target: opts.target,
    n: i,
    looks: plan.length,
    n_max: plan[plan.length - 1],
    family,
    stopped,
    p_with: r4(pWith),
    p_without: r4(pWithout),
    effect: r4(pWith - pWithout),
    ci: [r4(ci[0]), r4(ci[1])],
    verdict,
    pair_flips: t.flips,
    p_value: Math.round(Math.min(1, plan.length * family * mcnemarExact(t.flips.removed, t.flips.added)) * 1e6) / 1e6,
    intervention_applied_in: t.applied,
    off_tape_actions: t.off.without,
    off_tape_by_arm: t.off,
    min_effect: minEffect,
    n_needed: verdict === "inconclusive" ? Math.max(i, suggestedN(i, ci, minEffect)) : null,
    program_runs: i + t.baseRuns,
    model_calls: ctx.counts.made - before.made,
    naive_model_calls: ctx.counts.naive - before.naive,
    method: `paired re-execution, tool results from tape, Newcombe 95% CI (--method newcombe)${plan.length > 1 ? `, sequential over ${plan.length} looks (Bonferroni)` : ""}${family > 1 ? `, family of ${family}` : ""}`,
    scope: "run",
  };
  Object.assign(result, scopeOf(ctx, t));
  if (stopped === "budget") result.note = `stopped by the model-call budget after ${i} pairs`;
  if (baseline.length) result.baseline = baseKey;
  if (specs.length > 1) result.group = specs;
  if (verdict === "causal") result.role = roleFor(ci, pWith);
  if (interventions.some((iv) => iv.edit)) result.changes = recordChanges(opts.save !== false ? ctx.run.dir : undefined, interventions, recordedItems(ctx.model));
  if (opts.save !== false) appendTest(ctx.run.dir, result);
  return result;
}

/** Pairs after which a betting test may stop for futility because the pattern so far would not decide it by n_max. */
export const FUTILITY_AFTER = 10;

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
export function stopReason(stopped: TestResult["stopped"], verdict: Verdict, n: number, nMax: number, needed: number | null): string {
  if (verdict === "not-applied") return "decisive: the intervention removed nothing in the replays, so nothing was tested";
  if (stopped === "decisive") return `decisive after ${n} pair${n === 1 ? "" : "s"}`;
  const more = needed !== null && needed > n ? `; about ${needed} pairs in all would likely decide it if the pattern so far holds (--n-max ${needed})` : needed === null ? "; at the rate seen so far no practical number of pairs would decide it" : "";
  if (stopped === "futility") return `futility: at the pattern seen so far (or even if every remaining pair went the most favourable way) no verdict would be reached by n_max = ${nMax}${more}`;
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

/** What a sequential betting test found, with the fields every betting test reports. */
export interface SequentialOutcome {
  n: number;
  verdict: Verdict;
  stopped: TestResult["stopped"];
  ci: [number, number];
  p_value: number;
  e_value: number;
  alpha: number;
  n_needed: number | null;
  stop_reason: string;
}

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
  let stopped: TestResult["stopped"] = "n_max";
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

/** runTest with the paired betting confidence sequence (the default method). */
async function runBettingTest(ctx: ReplayContext, opts: TestOptions): Promise<TestResult> {
  const specs = Array.isArray(opts.intervention) ? opts.intervention : [opts.intervention];
  const interventions = specs.map(parseIntervention);
  const baseline = (opts.baseline ?? []).map(parseIntervention);
  const baseKey = baseline.map((b) => b.spec).join(" | ");
  const target = parseTarget(opts.target);
  const family = opts.family ?? 1;
  const minEffect = opts.minEffect ?? MIN_EFFECT;
  const alpha = opts.alpha ?? 0.05 / family;
  const seedBase = opts.seedBase ?? "cf";
  const nMax = bettingNMax(opts.n, opts.nMax);
  const before = { ...ctx.counts };
  const t = new PairTally();
  const pair = (j: number) => t.pair(ctx, seedBase, j, baseline, interventions, target);
  const o = await sequentialBetting(
    {
      alpha,
      minEffect,
      nMax,
      batch: opts.workers,
      minPairs: opts.minPairs,
      signal: opts.signal,
      notApplied: () => t.applied === 0,
      onLook: (i) => opts.onProgress?.({ phase: "test", done: i, total: nMax, message: `${specs.join(" | ")}: ${i} pairs, ${ctx.counts.made - before.made} model calls` }),
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
    pair,
    (p) => t.add(p),
  );
  const i = o.n;
  const pWith = t.kWith / i;
  const pWithout = t.kWithout / i;
  const result: TestResult = {
    intervention: specs.join(" | "),
    target: opts.target,
    n: i,
    looks: i,
    n_max: nMax,
    family,
    stopped: o.stopped,
    p_with: r4(pWith),
    p_without: r4(pWithout),
    effect: r4(pWith - pWithout),
    ci: o.ci,
    verdict: o.verdict,
    pair_flips: t.flips,
    p_value: o.p_value,
    e_value: o.e_value,
    alpha,
    intervention_applied_in: t.applied,
    off_tape_actions: t.off.without,
    off_tape_by_arm: t.off,
    min_effect: minEffect,
    n_needed: o.verdict === "inconclusive" ? o.n_needed : null,
    program_runs: i + t.baseRuns,
    model_calls: ctx.counts.made - before.made,
    naive_model_calls: ctx.counts.naive - before.naive,
    method: `paired re-execution, tool results from tape, betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))}${family > 1 ? `, family of ${family}` : ""})`,
    scope: "run",
  };
  result.stop_reason = o.stop_reason;
  Object.assign(result, scopeOf(ctx, t));
  if (o.stopped === "budget") result.note = `stopped by the budget after ${i} pairs`;
  if (baseline.length) result.baseline = baseKey;
  if (specs.length > 1) result.group = specs;
  if (o.verdict === "causal") result.role = roleFor(o.ci, pWith);
  if (interventions.some((iv) => iv.edit)) result.changes = recordChanges(opts.save !== false ? ctx.run.dir : undefined, interventions, recordedItems(ctx.model));
  if (opts.save !== false) appendTest(ctx.run.dir, result);
  return result;
}

/** Every distinct content item the recorded run's model calls saw, with its value (for recordChanges). */
export function recordedItems(m: RunModel): { kind: string; source: string; trust: string; ref: string; value: unknown; fromEvent: string | null }[] {
  const out = new Map<string, { kind: string; source: string; trust: string; ref: string; value: unknown; fromEvent: string | null }>();
  for (const d of m.decisions) {
    for (const c of d.context ?? []) {
      const k = `${c.kind}\u0000${c.source}\u0000${c.ref}`;
      if (out.has(k)) continue;
      const canon = m.canonical(c.ref);
      out.set(k, { kind: String(c.kind), source: String(c.source), trust: String(c.trust), ref: String(c.ref), value: canon ? parseLossless(canon) : undefined, fromEvent: c.from_event ?? null });
    }
  }
  return [...out.values()];
}

/** Appends a test result, storing the content its edits produced as blobs of the run first. */
export function appendTestWithContent(ctx: ReplayContext, rec: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(rec.changes) && rec.changes.length) {
    const specs = Array.isArray(rec.group) ? (rec.group as string[]) : [String(rec.intervention)];
    recordChanges(ctx.run.dir, specs, recordedItems(ctx.model));
  }
  return appendTest(ctx.run.dir, rec);
}

// ----------------------------------------------------------------------------- decision replay

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

// ----------------------------------------------------------------------------- replay + diff

export interface ReplayDiff {
  at: [string, string, number];
  change: "only-in-original" | "only-in-replay" | "different";
  original?: string;
  replay?: string;
}

/**
 * Re-runs the program once from the tape (the original seed unless given, optionally with
 * interventions) and aligns its decisions, tool calls and messages with the original by
 * (agent, type, ordinal).
 */
export async function replayAndDiff(ctx: ReplayContext, opts: { seed?: number; remove?: string[] } = {}): Promise<{ diffs: ReplayDiff[]; actions: ActionSummary[]; offTape: number; modelCalls: number }> {
  const sink = new MemorySink();
  const seed = opts.seed ?? Number(ctx.model.start.seed ?? 0);
  const r = await ctx.system.run({
    seed,
    runId: `${ctx.runId}-replay`,
    sink,
    chain: false,
    captureSites: false,
    tape: ctx.tape,
    interventions: (opts.remove ?? []).map(parseIntervention),
    liveTools: ctx.liveTools,
    task: ctx.task,
    trace: true,
  });
  if (r.error !== undefined) throw new ReplayError(`the program failed in replay: ${r.error}`);
  // entries keyed by (agent, type, ordinal): the n-th decision of an agent against its n-th
  const keyed = (trace: readonly TraceEntry[]) => {
    const counts = new Map<string, number>();
    const out = new Map<string, { seq: number; sig: string }>();
    for (const e of trace) {
      const k = `${e.agent}\u0000${e.type}`;
      const i = counts.get(k) ?? 0;
      counts.set(k, i + 1);
      out.set(`${k}\u0000${i}`, { seq: e.seq, sig: e.sig });
    }
    return out;
  };
  const a = keyed(traceOf(ctx.model.events, (ref) => ctx.model.canonical(ref)));
  // a program replayed in its own process reports its trace; an in-process one leaves its events in the sink
  const b = keyed(r.trace ?? memoryTrace(sink.events, sink.blobs));
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (a.get(x) ?? b.get(x))!.seq - (a.get(y) ?? b.get(y))!.seq);
  const diffs: ReplayDiff[] = [];
  for (const k of keys) {
    const [agent, type, i] = k.split("\u0000");
    const x = a.get(k);
    const y = b.get(k);
    const at: [string, string, number] = [agent, type, Number(i)];
    if (!x) diffs.push({ at, change: "only-in-replay", replay: y!.sig.slice(0, 200) });
    else if (!y) diffs.push({ at, change: "only-in-original", original: x.sig.slice(0, 200) });
    else if (x.sig !== y.sig) diffs.push({ at, change: "different", original: x.sig.slice(0, 200), replay: y.sig.slice(0, 200) });
  }
  return { diffs, actions: r.actions, offTape: r.actions.filter((x) => x.mode !== "tape").length, modelCalls: r.stats.modelCalls };
}
