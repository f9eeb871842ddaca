/** The shapes Find the cause (attribute.ts) takes and returns, shared by its phases. */
import type { Progress } from "./context";
import type { TestMethod, TestResult } from "./test-record";

export interface AttributeOptions {
  target: string;
  suspects?: string[];
  n?: number;
  nMax?: number;
  /** No verdict before this many pairs (the CLI's --n); with minPairs ≥ nMax every test runs exactly nMax pairs, the lead's too. */
  minPairs?: number;
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
  /**
   * Betting: before a phase of more than four suspects with no lead, run this many replays with
   * random halves of them removed and fit a sparse linear surrogate (core/replay/surrogate.ts); its
   * top suspect, predicted and never blamed by the fit, is tested first as the lead. Off by default.
   */
  rankBlocks?: number;
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
  /** The surrogate's prediction (AttributeOptions.rankBlocks): an order, never a verdict; the lead was its top suspect when its weight was positive. */
  predicted?: { k: number; hits: number; order: { spec: string; weight: number }[] };
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

/**
 * One hop of a handoff chain: `from` (a suspect id: `input:…` or `msg:a->b`) reached `to` (the next
 * hop's suspect id, or the target for the last hop), and `test` is the replay test of removing
 * `from`, the one that showed the action depends on it.
 */
export interface ChainHop {
  from: string;
  to: string;
  test: TestResult;
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
  /** How the tests replayed: 1 one recorded call, 2 agentless re-simulation, 3 the program re-run. */
  rung?: 1 | 2 | 3;
  /** Suspects this replay could not test (rung 1: not in the one re-sent call), with why; never blamed or ruled out. */
  not_tested?: { spec: string; reason: string }[];
  /**
   * Betting: how the words of the root cause reached the action through other agents, root → action,
   * each hop with its own test (docs/statistics.md, "Handoff chains"). Absent when no handoff was on
   * the way.
   */
  chain?: ChainHop[];
}
