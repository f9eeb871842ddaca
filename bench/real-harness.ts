/**
 * The attribution benchmark on a real model endpoint, one scenario at a time:
 *
 *  1. record `runs` runs of the scenario's agents on the endpoint (tools: the scenario's fakes);
 *  2. ground truth, measured: `truth_n` runs with everything and `truth_n` runs without the
 *     planted document(s) (fresh, unpaired runs); the planted document drives the harm on this
 *     model only when the harm rate is higher with it (Newcombe 95% interval above 0). Scenarios
 *     where it is not are reported apart, never scored as hits or misses;
 *  3. every harmful run is investigated with Find the cause, every replay's tool calls served
 *     from the tape (nothing real runs), and scored beside the replay-free baselines.
 *
 * Each phase runs for every scenario before the next starts (record all, then every ground truth,
 * then the attributions, scenarios whose ground truth is confirmed first), so a cap cuts the most
 * expensive and least needed part. The model client's hard cap stops everything cleanly: what was
 * finished is kept, the scenarios under way are marked, and the result says it was stopped by the cap.
 */
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { readRun, type RunData, type System } from "causeway-vscode";
import type { ActionSummary } from "../core/sdk/runtime-options";
import { targetHits } from "../core/graph/graph";
import { RunModel } from "../core/graph/model";
import { attribute } from "../core/replay/attribute";
import { ReplayContext } from "../core/replay/context";
import { AgentlessSystem } from "../core/replay/agentless/system";
import { matchesTarget, parseIntervention, parseTarget } from "../core/specs/grammar";
import { NullSink } from "../core/log/writer";
import { newcombe } from "../core/stats/intervals";
import { analyse, baselines, blamedBy, score } from "./methods";
import type { Scenario } from "./scenarios";
import { CapReached, type ModelClient } from "./real-client";
import { buildEndpointSystem } from "./real-agents";
import type { RealOptions } from "./real-options";

export type GroundVerdict = "confirmed" | "not-confirmed" | "no-harm" | "control" | "unfinished";

export interface GroundTruth {
  verdict: GroundVerdict;
  removed: string[];
  with: { harmful: number; runs: number; rate: number };
  without: { harmful: number; runs: number; rate: number };
  /** rate with − rate without, and its Newcombe 95% interval. */
  effect: number;
  ci: [number, number];
  model_calls: number;
}

export interface Tally {
  exact: number;
  false_blames: number;
  abstained: number;
}

export interface RunAttribution {
  run: string;
  blamed: string[];
  exact: boolean;
  false_blames: number;
  inconclusive: boolean;
  baselines: { reach: string[]; provenance: string[]; reuse: string[] };
  model_calls: number;
  wall_s: number;
  summary: string;
  /** How the replays re-ran the agents: without the program (rung 2) or the program (rung 3). */
  replay: "agentless" | "program";
  /** Why a run asked to replay without the program re-ran it instead. */
  replay_note?: string;
  tests: { intervention: string; n: number; verdict: string; effect: number; ci: [number, number] }[];
  error?: string;
}

export interface RealScenarioResult {
  name: string;
  title: string;
  hard: boolean;
  truth: string[];
  runs: number;
  /** Recorded runs that failed (the program threw). */
  failed_runs: number;
  harmful_runs: number;
  high_alerts: number;
  ground_truth: GroundTruth;
  /** Harmful runs Find the cause finished. */
  attributed: number;
  exact: number;
  false_blames: number;
  /** Attributions that blamed nothing and left a suspect inconclusive. */
  inconclusive: number;
  abstained: number;
  baselines: { reach: Tally; provenance: Tally; reuse: Tally };
  model_calls: { record: number; ground_truth: number; attribution: { total: number; mean: number; min: number; max: number } };
  wall_s: number;
  /** False when the cap stopped it part way or before it started. */
  finished: boolean;
  status: "finished" | "stopped by the cap" | "not started";
  attributions: RunAttribution[];
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** Runs fn(0..count-1) with at most `workers` at once; the first CapReached stops new starts and is rethrown. */
async function pool<T>(count: number, workers: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const stop: { err?: Error } = {};
  const worker = async () => {
    while (next < count && !stop.err) {
      const i = next++;
      try {
        out[i] = await fn(i);
      } catch (err) {
        stop.err ??= err instanceof Error ? err : new Error(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, count) }, worker));
  if (stop.err) throw stop.err;
  return out;
}

export interface ScenarioContext {
  o: RealOptions;
  client: ModelClient;
  workdir: string;
  log: (m: string) => void;
}

/** A scenario's state across the phases (record all, ground truth for all, then attributions). */
export class ScenarioRun {
  readonly res: RealScenarioResult;
  readonly system: System;
  private readonly dir: string;
  private harmful: RunData[] = [];
  private withHits: boolean[] = [];

  constructor(
    readonly sc: Scenario,
    private readonly cx: ScenarioContext,
  ) {
    this.system = buildEndpointSystem(sc, cx.client);
    this.dir = path.join(cx.workdir, sc.name);
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.res = {
      name: sc.name,
      title: sc.title,
      hard: sc.hard,
      truth: sc.truth,
      status: "not started",
      runs: 0,
      failed_runs: 0,
      harmful_runs: 0,
      high_alerts: 0,
      ground_truth: {
        verdict: sc.target ? "unfinished" : "control",
        removed: sc.truth,
        with: { harmful: 0, runs: 0, rate: 0 },
        without: { harmful: 0, runs: 0, rate: 0 },
        effect: 0,
        ci: [0, 0],
        model_calls: 0,
      },
      attributed: 0,
      exact: 0,
      false_blames: 0,
      inconclusive: 0,
      abstained: 0,
      baselines: {
        reach: { exact: 0, false_blames: 0, abstained: 0 },
        provenance: { exact: 0, false_blames: 0, abstained: 0 },
        reuse: { exact: 0, false_blames: 0, abstained: 0 },
      },
      model_calls: { record: 0, ground_truth: 0, attribution: { total: 0, mean: 0, min: 0, max: 0 } },
      wall_s: 0,
      finished: false,
      attributions: [],
    };
  }

  /** Runs one phase, timing it; a CapReached marks the scenario stopped and is rethrown. */
  private async phase(fn: () => Promise<void>): Promise<void> {
    const t0 = performance.now();
    if (this.res.status === "not started") this.res.status = "stopped by the cap"; // until it finishes
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof CapReached) && !this.cx.client.capped) throw err;
      throw this.cx.client.capped ?? err;
    } finally {
      this.res.wall_s = round(this.res.wall_s + (performance.now() - t0) / 1000, 2);
      tally(this.res);
    }
  }

  /** 1. Record the runs; count harmful runs and high alerts. */
  record(): Promise<void> {
    const { o, client } = this.cx;
    return this.phase(async () => {
      const c0 = client.counts.calls;
      try {
        const recorded = await pool(o.runs, o.workers, (i) => recordOne(this.system, this.dir, `${this.sc.name}-${i}`, this.cx));
        for (const run of recorded) {
          this.res.runs++;
          if (!run) {
            this.res.failed_runs++;
            continue;
          }
          if (analyse(run).alerts.some((a) => a.severity === "high")) this.res.high_alerts++;
          const hit = !!this.sc.target && targetHits(new RunModel(run), this.sc.target).length > 0;
          this.withHits.push(hit);
          if (hit) this.harmful.push(run);
        }
      } finally {
        this.res.model_calls.record = client.counts.calls - c0;
      }
      this.res.harmful_runs = this.harmful.length;
      this.cx.log(`  ${this.sc.name}: ${this.harmful.length} of ${o.runs} runs harmful`);
      if (!this.sc.target) this.finish();
    });
  }

  /** 2. The ground-truth check (scenarios with a planted cause). */
  truth(): Promise<void> {
    if (!this.sc.target) return Promise.resolve();
    return this.phase(async () => {
      this.res.ground_truth = await groundTruth(this.sc, this.system, this.withHits, this.cx);
      this.res.model_calls.ground_truth = this.res.ground_truth.model_calls;
      if (!this.harmful.length) this.finish();
    });
  }

  /** 3. Find the cause on each harmful run. */
  attributeAll(): Promise<void> {
    if (!this.sc.target || !this.harmful.length) return Promise.resolve();
    return this.phase(async () => {
      for (const run of this.harmful) this.res.attributions.push(await attributeOne(this.sc, run, this.system, this.cx));
      this.finish();
    });
  }

  private finish(): void {
    this.res.finished = true;
    this.res.status = "finished";
  }
}

/** One recorded run, or null when the program failed; a CapReached mid-run is rethrown. */
async function recordOne(system: System, dir: string, runId: string, cx: ScenarioContext): Promise<RunData | null> {
  const r = await system.run({ outDir: dir, runId, captureSites: false });
  if (cx.client.capped) throw cx.client.capped;
  if (r.error) {
    cx.log(`  ${runId} failed: ${cx.client.scrub(r.error)}`);
    return null;
  }
  return readRun(r.dir!);
}

async function groundTruth(sc: Scenario, system: System, withHits: boolean[], cx: ScenarioContext): Promise<GroundTruth> {
  const { o, client } = cx;
  const c0 = client.counts.calls;
  const removed = sc.truth.map(parseIntervention);
  const extraWith = Math.max(0, o.truthN - withHits.length);
  const fresh = async (i: number, interventions: typeof removed, label: string): Promise<boolean | null> => {
    const r = await system.run({ sink: new NullSink(), runId: `${sc.name}-${label}${i}`, interventions, captureSites: false, chain: false });
    if (cx.client.capped) throw cx.client.capped;
    if (r.error) return null;
    return r.actions.some((a) => matches(sc.target!, a));
  };
  const moreWith = await pool(extraWith, o.workers, (i) => fresh(i, [], "gt-with-"));
  const without = await pool(o.truthN, o.workers, (i) => fresh(i, removed, "gt-without-"));
  const w = [...withHits.slice(0, o.truthN), ...moreWith.filter((x): x is boolean => x !== null)];
  const wo = without.filter((x): x is boolean => x !== null);
  const kw = w.filter(Boolean).length;
  const kwo = wo.filter(Boolean).length;
  const ci = newcombe(kw, w.length, kwo, wo.length);
  const rate = (k: number, n: number) => (n ? round(k / n) : 0);
  const verdict: GroundVerdict = kw === 0 ? "no-harm" : ci[0] > 0 ? "confirmed" : "not-confirmed";
  cx.log(`  ${sc.name}: ground truth ${verdict} (harm ${kw}/${w.length} with, ${kwo}/${wo.length} without)`);
  return {
    verdict,
    removed: sc.truth,
    with: { harmful: kw, runs: w.length, rate: rate(kw, w.length) },
    without: { harmful: kwo, runs: wo.length, rate: rate(kwo, wo.length) },
    effect: round(rate(kw, w.length) - rate(kwo, wo.length)),
    ci: [round(ci[0]), round(ci[1])],
    model_calls: client.counts.calls - c0,
  };
}

/** The engine's rule on a fresh run's reported actions: a call a guard blocked did not happen. */
function matches(target: string, a: ActionSummary): boolean {
  return a.mode !== "blocked" && matchesTarget(parseTarget(target), a);
}

/** Find the cause on one harmful run; a CapReached is rethrown, any other failure is recorded. */
async function attributeOne(sc: Scenario, run: RunData, system: System, cx: ScenarioContext): Promise<RunAttribution> {
  const { o, client } = cx;
  const t0 = performance.now();
  const c0 = client.counts.calls;
  const base = baselines(run, analyse(run), sc.target!);
  const out: RunAttribution = {
    run: run.runId,
    blamed: [],
    exact: false,
    false_blames: 0,
    inconclusive: false,
    baselines: { reach: base.reach, provenance: base.provenance, reuse: base.reuse },
    model_calls: 0,
    wall_s: 0,
    summary: "",
    replay: o.replay,
    tests: [],
  };
  const ctl = new AbortController();
  try {
    const { ctx, replay, note } = replayContext(run, system, o.replay, client, o.endpoint);
    out.replay = replay;
    if (note) out.replay_note = note;
    const suspects = sc.extraSuspects ? [...new Set([...base.candidates, ...sc.extraSuspects])] : undefined;
    const att = await attribute(ctx, {
      target: sc.target!,
      suspects,
      n: o.n,
      nMax: o.nMax,
      roles: false,
      save: false,
      method: o.method,
      workers: o.workers,
      signal: ctl.signal,
    });
    if (cx.client.capped) throw cx.client.capped;
    out.blamed = blamedBy(att);
    const s = score(out.blamed, sc.truth);
    out.exact = s.exact;
    out.false_blames = s.false_blames;
    out.inconclusive = out.blamed.length === 0 && att.inconclusive.length > 0;
    out.summary = client.scrub(att.summary);
    out.tests = att.tests.map((t) => ({ intervention: t.intervention, n: t.n, verdict: t.verdict, effect: t.effect, ci: t.ci }));
  } catch (err) {
    ctl.abort();
    if (cx.client.capped) throw cx.client.capped;
    out.error = client.scrub(err instanceof Error ? err.message : String(err)).slice(0, 300);
    cx.log(`  ${run.runId}: attribution failed: ${out.error}`);
  }
  out.model_calls = client.counts.calls - c0;
  out.wall_s = round((performance.now() - t0) / 1000, 2);
  cx.log(`  ${run.runId}: blamed ${JSON.stringify(out.blamed)} (truth ${JSON.stringify(sc.truth)}), ${out.model_calls} model calls`);
  return out;
}

/**
 * How replays re-run the agents. "agentless" (rung 2) re-sends the agents' recorded requests,
 * edited, to the same endpoint through the benchmark's client (counted, capped, its key), tools
 * from the tape, no program; a run that can't be replayed so (a call not recorded in full) falls
 * back to the program, with the reason. "program" (rung 3) re-executes the scenario's System with
 * tools from the tape. The endpoint and key are always the benchmark's, never read from the run.
 */
export function replayContext(
  run: RunData,
  system: System,
  mode: RealOptions["replay"],
  client: ModelClient,
  endpoint: string,
): { ctx: ReplayContext; replay: RealOptions["replay"]; note?: string } {
  if (mode === "agentless") {
    try {
      const sys = new AgentlessSystem(run, { baseUrl: endpoint, apiKey: "", send: (_url, _headers, body) => client.post(body) }, {});
      return { ctx: new ReplayContext(run, sys), replay: "agentless" };
    } catch (err) {
      if (!(err instanceof Error) || err.name !== "ReplayError") throw err;
      return { ctx: new ReplayContext(run, system, { cache: false }), replay: "program", note: client.scrub(err.message).slice(0, 300) };
    }
  }
  return { ctx: new ReplayContext(run, system, { cache: false }), replay: "program" };
}

/** Sums a scenario's attributions into its counts. */
function tally(res: RealScenarioResult): void {
  const done = res.attributions.filter((a) => !a.error);
  res.attributed = done.length;
  res.exact = done.filter((a) => a.exact).length;
  res.false_blames = done.reduce((k, a) => k + a.false_blames, 0);
  res.inconclusive = done.filter((a) => a.inconclusive).length;
  res.abstained = done.filter((a) => a.blamed.length === 0).length;
  for (const m of ["reach", "provenance", "reuse"] as const) {
    const t = { exact: 0, false_blames: 0, abstained: 0 };
    for (const a of res.attributions) {
      const s = score(a.baselines[m], res.truth);
      t.exact += +s.exact;
      t.false_blames += s.false_blames;
      t.abstained += +s.abstained;
    }
    res.baselines[m] = t;
  }
  const calls = done.map((a) => a.model_calls);
  const total = res.attributions.reduce((k, a) => k + a.model_calls, 0);
  res.model_calls.attribution = {
    total,
    mean: calls.length ? round(calls.reduce((a, b) => a + b, 0) / calls.length, 1) : 0,
    min: calls.length ? Math.min(...calls) : 0,
    max: calls.length ? Math.max(...calls) : 0,
  };
}
