/**
 * What every replay of one run shares: the recorded tool results served back (RunTape), the
 * program, the caches, the model-call budget (ReplayContext), and the errors a replay raises.
 *
 * A replay re-executes the recorded System: tool calls identical to recorded ones (same agent, tool,
 * canonical arguments and occurrence) get the recorded result (`tape`); calls the original never
 * made are stubbed (`stub`) and counted as off-tape; a real tool runs only with liveTools.
 *
 * Cost: for seeded models a call both arms make identically has the same output, so it is computed
 * once (a cache keyed by model, agent, purpose, seed, params and the context's refs); the "nothing
 * removed" arm of pair i is shared by every test of an attribution.
 */
import { parseLossless } from "../log/pyjson";
import type { RunData } from "../log/reader";
import { NullSink } from "../log/writer";
import { deriveSeed } from "../log/hash";
import { RunModel } from "../graph/model";
import { matchesTarget, type Intervention, type Target } from "../specs/grammar";
import type { ModelCache, Tape, ActionSummary } from "../sdk/runtime-options";
import type { System } from "../sdk/system";

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
  async pair(
    seedBase: string,
    j: number,
    baseline: Intervention[],
    interventions: Intervention[],
    target: Target,
  ): Promise<{ base: ArmOutcome; treat: ArmOutcome; baseRan: boolean }> {
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
    if (r.error !== undefined)
      throw new ReplayError(`${this.rung === 2 ? "the replay without the program failed" : "the program failed in replay"} (${label}): ${r.error}`);
    const extra = r as { assumptions?: unknown; unreached?: unknown };
    const unreached = Array.isArray(extra.unreached) ? extra.unreached.map(String) : [];
    // an agent the replay could not reach (a link it could not follow) did not act: that is not evidence
    if (
      unreached.length &&
      this.model.actions.some(
        (a) =>
          unreached.includes(String(a.agent)) &&
          matchesTarget(target, { tool: a.tool, agent: String(a.agent), args: this.model.canonical(a.args_ref), result: this.model.canonical(a.result_ref) }),
      )
    ) {
      const why = Array.isArray(extra.assumptions) ? extra.assumptions.filter((x) => String(x).startsWith("not re-simulated")).join("; ") : "";
      throw new ReplayError(
        `the target's agent is not reached by this replay without the program: ${why}. Test a suspect inside that agent's own prompt, or replay with the program (--allow-program)`,
      );
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

/** The rung and assumptions of a test (TestResult.rung, .assumptions): what its replays reported, else what a program replay assumes. */
export function scopeOf(ctx: ReplayContext, assumptions: ReadonlySet<string>): { rung: Rung; assumptions: string[] } {
  return { rung: ctx.rung, assumptions: assumptions.size ? [...assumptions] : ctx.rung === 3 ? [...PROGRAM_ASSUMPTIONS] : [] };
}

/** Throws an AbortError when the signal has fired (a cancelled test stops between pairs). */
export function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) {
    const e = new Error("cancelled");
    e.name = "AbortError";
    throw e;
  }
}
