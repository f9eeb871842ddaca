/**
 * The driver of a distributed investigation: Find the cause (attribute()) or one test (runTest()),
 * unchanged, over a {@link JobReplayContext} whose pairs come from the arms workers stored.
 *
 * A pass runs the investigation from the start with every stored arm. Pairs are consumed in pair
 * order by the same sequential driver as a local run (sequentialBetting, one look per pair), so a
 * distributed test stops where the local one would and gives the same verdict on a seeded model.
 * When a pair is not stored yet, the pass asks for it and the next `window` pairs of that test
 * (deterministic task ids: asking twice is a no-op) and ends; the worker that stores an arm starts
 * the next pass. A pass holds the job's advisory lock, so passes never overlap. Model calls,
 * the budget and the shared "nothing removed" arms are counted exactly as a local run counts them.
 */
import { createHash } from "node:crypto";
import type { RunData } from "../log/reader";
import { matchesTarget, type Intervention, type Target } from "../specs/grammar";
import { Budget, BudgetExceeded, ReplayContext, ReplayError, type ArmOutcome, type Rung } from "../replay/context";
import { runTest } from "../replay/run-test";
import type { TestResult } from "../replay/test-record";
import { attribute } from "../replay/attribute";
import type { Attribution } from "../replay/attribute-types";
import { fixCheck } from "../replay/fixcheck";
import { Refusal } from "../replay/preflight";
import type { System } from "../sdk/system";
import type { StoredArm } from "./store";
import { DEFAULT_WINDOW, type JobSpec } from "./spec";

/** One pair a worker is asked to replay. */
export interface PairItem {
  seedBase: string;
  baseline: string[];
  interventions: string[];
  j: number;
}

/**
 * A stored arm's outcome: the replay's outcome plus the model calls it made (not served from the
 * cache) and the rung its worker replayed at (absent in arms stored before the rung was kept).
 */
export type StoredOutcome = ArmOutcome & { made: number; rung?: Rung };

export const baseKey = (p: Pick<PairItem, "seedBase" | "baseline" | "j">): string => JSON.stringify(["b", p.seedBase, p.baseline, p.j]);
export const treatKey = (p: PairItem): string => JSON.stringify(["t", p.seedBase, p.baseline, p.interventions, p.j]);

/** A uuid-shaped id from text (pg-boss task ids): the same pairs asked twice are one task. */
export function taskId(...parts: string[]): string {
  const h = createHash("sha256").update(parts.join("\u0000")).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * What a worker stores for a pair it did not start because the job's workers had already made the
 * calls its budget allows (look-ahead pairs included): the pass stops there with the budget reason.
 */
export const BUDGET_REACHED = "not replayed: the job's model-call budget was reached";

/** Thrown inside a pass when a pair is not stored yet: the pass ends and asks for it. */
export class NeedPairs extends Error {
  constructor() {
    super("pairs not stored yet");
    this.name = "NeedPairs";
  }
}

/** The driver never runs the program: every arm comes from a worker. */
const NO_PROGRAM = {
  seededModels: false,
  config: { models: {} },
  run: () => {
    throw new Error("the job driver runs no program");
  },
} as unknown as System;

const hitOf = (target: Target, o: ArmOutcome): boolean => o.actions.some((a) => a.mode !== "blocked" && matchesTarget(target, a));

export class JobReplayContext extends ReplayContext {
  /** Pairs asked for by this pass (in order), and the workers whose arms it consumed. */
  readonly needed: PairItem[] = [];
  readonly workers = new Set<string>();
  pairsUsed = 0;
  /** Tests that asked for a pair so far (each test parses its target once), and the last one's target. */
  testsSeen = 0;
  private lastTarget: Target | undefined;
  get currentTarget(): string | undefined {
    return this.lastTarget?.spec;
  }

  /**
   * `scope`: the System the workers replay the run with, consulted only for what shapes the pass
   * (its rung, the suspects or targets it can't answer for); it never runs here.
   */
  /** The rung of the first stored arm read, when this pass has no System of its own to compare with. */
  private armRung: Rung | undefined;

  constructor(
    run: RunData,
    private readonly arms: Map<string, StoredArm>,
    private readonly window: number,
    private readonly scope: System = NO_PROGRAM,
  ) {
    super(run, scope, { cache: false });
  }

  private stored(key: string): StoredOutcome | undefined {
    const a = this.arms.get(key);
    if (!a) return undefined;
    if (a.error === BUDGET_REACHED) throw new BudgetExceeded();
    if (a.error !== null) throw new ReplayError(a.error);
    const o = a.outcome as StoredOutcome;
    // one test's pairs are replayed one way: workers configured differently (another
    // --allow-program list, no endpoint) would mix program replays with replays without it
    // (a driver that can't replay the run itself holds the arms to the first one's rung)
    if (o.rung !== undefined) {
      const expected = this.scope !== NO_PROGRAM ? this.rung : (this.armRung ??= o.rung);
      if (o.rung !== expected)
        throw new ReplayError(
          `worker ${a.worker} replayed this run at rung ${o.rung} where this job replays it at rung ${expected}: the team's workers replay it differently (their --allow-program lists or endpoints differ); give them the same configuration and submit again`,
        );
    }
    this.workers.add(a.worker);
    return o;
  }

  override async pair(
    seedBase: string,
    j: number,
    baseline: Intervention[],
    interventions: Intervention[],
    target: Target,
  ): Promise<{ base: ArmOutcome; treat: ArmOutcome; baseRan: boolean }> {
    if (target !== this.lastTarget) {
      this.lastTarget = target;
      this.testsSeen++;
    }
    const item = { seedBase, baseline: baseline.map((b) => b.spec), interventions: interventions.map((i) => i.spec), j };
    const localKey = `${seedBase}|${item.baseline.join(" | ")}|${j}`;
    const shared = this.baseArms.get(localKey);
    // as ReplayContext.arm: no pair starts once the budget is spent (nor is one asked for)
    if (this.budget.left <= 0) throw new BudgetExceeded();
    // the intervened arm first: a batch that failed after its retries records its reason there
    const treat = this.stored(treatKey(item));
    const base = shared ?? this.stored(baseKey(item));
    if (!base || !treat) {
      for (let k = j; k < j + this.window; k++) this.needed.push({ ...item, j: k });
      throw new NeedPairs();
    }
    // counted as ReplayContext.pair and arm count them: a shared "with" arm once, the budget before each arm
    if (!shared) {
      if (this.budget.left <= 0) throw new BudgetExceeded();
      this.count(base as StoredOutcome);
      this.baseArms.set(localKey, base);
    } else this.counts.naive += base.calls;
    if (this.budget.left <= 0) throw new BudgetExceeded();
    this.count(treat);
    this.pairsUsed++;
    return { base: { ...base, hit: hitOf(target, base) }, treat: { ...treat, hit: hitOf(target, treat) }, baseRan: !shared };
  }

  private count(o: StoredOutcome): void {
    this.counts.made += o.made;
    this.counts.naive += o.calls;
    this.budget.used += o.made;
  }

  override arm(): Promise<ArmOutcome> {
    throw new ReplayError("the job driver replays nothing itself");
  }
}

export type PassResult =
  | { state: "need"; pairs: PairItem[]; progress: { tests: number; pairs: number; model_calls: number; message?: string } }
  | { state: "done"; result: Attribution | TestResult | FixCheckResult; tests: TestResult[]; workers: string[] };

/** A fix check as `causeway fix-check --json` prints it (each test's pair count, not the test). */
export type FixCheckResult = Record<string, unknown> & { verdict: string };

/** The attribution id of a job's Find the cause: the same on every pass. */
export const attributionIdOf = (jobId: string): string => createHash("sha256").update(`causeway.job.attribution\0${jobId}`).digest("hex").slice(0, 12);

/** The fix-check id of a job's fix check (its tests.jsonl lines' `fix_check`): the same on every pass. */
export const fixCheckIdOf = (jobId: string): string => createHash("sha256").update(`causeway.job.fix-check\0${jobId}`).digest("hex").slice(0, 12);

/** A job's fix check: the local command's defaults, result and tests.jsonl lines. */
async function fixCheckPass(ctx: JobReplayContext, spec: JobSpec, jobId: string): Promise<PassResult> {
  const n = spec.n ?? 40;
  const f = await fixCheck(ctx, { fix: spec.fix ?? [], harm: spec.target, keep: spec.keep, n, nMax: spec.n_max ?? Math.max(160, n), save: false });
  const id = fixCheckIdOf(jobId);
  const tests = [
    { ...f.harm.test, fix_check: id, fix_role: "harm", fix: f.fix, fix_verdict: f.verdict, fix_summary: f.summary, fix_excluded: f.excluded },
    ...f.keep.map((k) => ({ ...k.test, fix_check: id, fix_role: "keep", fix_harm: spec.target, keep_status: k.status })),
  ];
  const result = { ...f, harm: { ...f.harm, test: undefined, n: f.harm.test.n }, keep: f.keep.map((k) => ({ ...k, test: undefined, n: k.test.n })) };
  return { state: "done", result: JSON.parse(JSON.stringify(result)) as FixCheckResult, tests, workers: [...ctx.workers].sort() };
}

/**
 * What the replay can't test is refused as the local command refuses it (rung 1: a removal or fix
 * not in the one re-sent call), before any pair is asked for.
 */
function checkScope(ctx: ReplayContext, spec: JobSpec): void {
  const sys = ctx.system as { untestable?: (s: string) => string | undefined };
  if (typeof sys.untestable !== "function") return;
  const specs = spec.kind === "test" ? [spec.remove!] : spec.kind === "fix-check" ? (spec.fix ?? []) : [];
  for (const s of specs) {
    const why = sys.untestable.call(ctx.system, s);
    if (why)
      throw new Refusal(
        `${s} can't be tested at rung ${ctx.rung}: it is ${why}; nothing was sent. Replaying more needs the program (a worker's --allow-program) or a recording rung 2 can replay`,
      );
  }
}

/** Which test of a fix check a pass waits on, as its output names them: the harm, then keep 1, 2, … (with its target). */
const fixCheckTest = (k: number, target: string | undefined): string => (k <= 1 ? "harm test" : `keep ${k - 1} (${target ?? "?"})`);

/**
 * One pass of a job over the arms stored so far. `scope`: the System the workers replay this run
 * with (its rung and what it can't test shape the pass; it never runs here).
 */
export async function drivePass(
  run: RunData,
  spec: JobSpec,
  jobId: string,
  arms: Map<string, StoredArm>,
  window = spec.window ?? DEFAULT_WINDOW,
  scope?: System,
): Promise<PassResult> {
  const ctx = new JobReplayContext(run, arms, window, scope);
  checkScope(ctx, spec);
  let tests = 0;
  const onProgress = (p: { phase: string }) => {
    const m = /^test (\d+)$/.exec(p.phase);
    if (m) tests = Number(m[1]) - 1;
  };
  try {
    if (spec.kind === "fix-check") return await fixCheckPass(ctx, spec, jobId);
    if (spec.kind === "test") {
      if (spec.max_calls !== undefined) ctx.budget = new Budget(spec.max_calls);
      const r = await runTest(ctx, {
        intervention: spec.remove!,
        target: spec.target,
        n: spec.n,
        nMax: spec.n_max,
        method: spec.method,
        minPairs: spec.n,
        sizeRole: !!spec.roles,
        save: false,
      });
      return { state: "done", result: r, tests: [r], workers: [...ctx.workers].sort() };
    }
    const n = spec.n ?? 10;
    const a = await attribute(ctx, {
      target: spec.target,
      suspects: spec.suspects ?? [],
      suspectsMode: spec.suspects_mode ?? "untrusted",
      method: spec.method ?? "betting",
      n,
      nMax: spec.n_max ?? Math.max(80, n),
      maxCalls: spec.max_calls,
      roles: spec.roles !== false,
      save: false,
      onProgress,
    });
    a.attribution_id = attributionIdOf(jobId);
    return { state: "done", result: a, tests: a.tests.map((t) => ({ ...t, attribution: a.attribution_id })), workers: [...ctx.workers].sort() };
  } catch (err) {
    if (!(err instanceof NeedPairs)) throw err;
    if (spec.kind === "fix-check") {
      const k = Math.max(1, ctx.testsSeen);
      return {
        state: "need",
        pairs: ctx.needed,
        progress: { tests: k - 1, pairs: ctx.pairsUsed, model_calls: ctx.counts.made, message: fixCheckTest(k, ctx.currentTarget) },
      };
    }
    return { state: "need", pairs: ctx.needed, progress: { tests, pairs: ctx.pairsUsed, model_calls: ctx.counts.made } };
  }
}
