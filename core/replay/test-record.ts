/**
 * A test's record: the tests.jsonl line every test writes (run tests, decision tests, endpoint
 * tests), built in one place ({@link testRecord}) from what the test measured; its shared defaults
 * and rounding.
 */
import { roleFor, suggestedN, type Role, type Verdict } from "../stats/verdicts";
import type { Rung } from "./context";

/** The smallest effect a test is powered to see, unless told otherwise. */
export const MIN_EFFECT = 0.2;

/** Verdicts that end a test before its largest number of pairs. */
export const DECISIVE: ReadonlySet<Verdict> = new Set(["causal", "suppressive", "ruled-out"]);

/** "betting": the paired betting confidence sequence (the default); "newcombe": the reference's Newcombe interval at fixed looks. */
export type TestMethod = "betting" | "newcombe";

/** Why a test stopped: a decisive verdict, its largest number of pairs, futility, or the budget. */
export type Stopped = "decisive" | "n_max" | "futility" | "budget";

/** The record of a run test (scope "run"): a tests.jsonl line. */
export interface TestResult {
  intervention: string;
  target: string;
  n: number;
  looks: number;
  n_max: number;
  family: number;
  stopped: Stopped;
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

/** Rounds to 4 decimals (rates, effects and intervals in a record). */
export const r4 = (x: number) => Math.round(x * 10000) / 10000;

/** How a test ended, as every method reports it (a betting test's sequential outcome is one). */
export interface TestEnding {
  /** Pairs run. */
  n: number;
  verdict: Verdict;
  /** The interval as computed: the record rounds it to 4 places; a causal role reads it as given. */
  ci: [number, number];
  n_needed: number | null;
  stopped?: Stopped;
  p_value?: number;
  /** Betting: the largest e-value, the error rate and why the test stopped, in words. */
  e_value?: number;
  alpha?: number;
  stop_reason?: string;
}

/** What a test measured, whatever it replayed: {@link testRecord} makes its record from it. */
interface Measured {
  intervention: string;
  target: string;
  ending: TestEnding;
  /** Looks taken at the sequence, and the most pairs the test could run. */
  looks: number;
  nMax: number;
  minEffect: number;
  /** Rates as measured: the record rounds them to 4 places; a causal role reads p_with as given. */
  p_with: number | null;
  p_without: number | null;
  effect: number;
  model_calls: number;
  /** The method, in words. */
  method: string;
  rung?: Rung;
  assumptions?: string[];
  /** What the intervention's edits changed (specs/apply.ts recordChanges). */
  changes?: unknown[];
}

/** A run test: pairs of program replays (or of agentless re-simulations). */
export interface RunMeasure extends Measured {
  scope: "run";
  p_with: number;
  p_without: number;
  family: number;
  /** The pairs' counts: flips, pairs whose intervened arm removed something, off-tape actions by arm, "with" arms run here. */
  pairs: { flips: { removed: number; added: number }; applied: number; off: { with: number; without: number }; baseRuns: number };
  naive_model_calls: number;
  note?: string;
  baseline?: string;
  group?: string[];
}

/** A decision test: one recorded model call re-called (in process) or re-sent (to an endpoint). */
export interface DecisionMeasure extends Measured {
  scope: "decision";
  /** Without a text to look for: how often the output changed anyway (sampling noise); else null. */
  noise: number | null;
  decision: { id: string; seq: number };
  /** The caller's own fields (an endpoint test's blocks and address), last. */
  extra?: Record<string, unknown>;
}

/** The number of pairs a Newcombe test would likely need to decide, when it is inconclusive. */
export function newcombeNeeded(n: number, ci: [number, number], verdict: Verdict, minEffect: number): number | null {
  return verdict === "inconclusive" ? Math.max(n, suggestedN(n, ci, minEffect)) : null;
}

/** The one builder of a test's record (run, decision and endpoint tests): fields absent from the measure are left out. */
export function testRecord(m: RunMeasure): TestResult;
export function testRecord(m: DecisionMeasure): Record<string, unknown>;
export function testRecord(m: RunMeasure | DecisionMeasure): Record<string, unknown> {
  const e = m.ending;
  const run = m.scope === "run" ? m : undefined;
  const dec = m.scope === "decision" ? m : undefined;
  const rate = (x: number | null) => (x === null ? null : r4(x));
  const rec: Record<string, unknown> = {
    intervention: m.intervention,
    target: m.target,
    n: e.n,
    looks: m.looks,
    n_max: m.nMax,
    family: run?.family,
    stopped: e.stopped,
    p_with: rate(m.p_with),
    p_without: rate(m.p_without),
    effect: r4(m.effect),
    noise: dec ? rate(dec.noise) : undefined,
    ci: [r4(e.ci[0]), r4(e.ci[1])],
    verdict: e.verdict,
    pair_flips: run?.pairs.flips,
    p_value: e.p_value,
    e_value: e.e_value,
    alpha: e.alpha,
    intervention_applied_in: run?.pairs.applied,
    off_tape_actions: run?.pairs.off.without,
    off_tape_by_arm: run?.pairs.off,
    min_effect: m.minEffect,
    n_needed: e.n_needed,
    program_runs: run ? e.n + run.pairs.baseRuns : undefined,
    model_calls: m.model_calls,
    naive_model_calls: run?.naive_model_calls,
    method: m.method,
    scope: m.scope,
    decision: dec?.decision.id,
    decision_seq: dec?.decision.seq,
    stop_reason: e.stop_reason,
    rung: m.rung,
    assumptions: m.assumptions,
    note: run?.note,
    baseline: run?.baseline,
    group: run?.group,
    role: e.verdict === "causal" && m.p_with !== null ? roleFor(e.ci, m.p_with) : undefined,
    changes: m.changes,
    ...dec?.extra,
  };
  for (const k of Object.keys(rec)) if (rec[k] === undefined) delete rec[k];
  return rec;
}
