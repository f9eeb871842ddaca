/**
 * A test's record: the tests.jsonl line every test writes (run tests, decision tests, endpoint
 * tests), its shared defaults and rounding.
 */
import type { Role, Verdict } from "../stats/stats";
import type { Rung } from "./context";

/** The smallest effect a test is powered to see, unless told otherwise. */
export const MIN_EFFECT = 0.2;

/** Verdicts that end a test before its largest number of pairs. */
export const DECISIVE: ReadonlySet<Verdict> = new Set(["causal", "suppressive", "ruled-out"]);

/** "betting": the paired betting confidence sequence (the default); "newcombe": the reference's Newcombe interval at fixed looks. */
export type TestMethod = "betting" | "newcombe";

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

/** Rounds to 4 decimals (rates, effects and intervals in a record). */
export const r4 = (x: number) => Math.round(x * 10000) / 10000;
