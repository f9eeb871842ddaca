/** What a Runtime is given: its sink, models and tools, and in a replay its tape, cache and interventions. */
import type { Usage } from "../log/events";
import type { Sink } from "../log/writer";
import type { Redactor } from "../log/redact";
import type { Intervention } from "../specs/grammar";
import type { Guard } from "./guard";
import type { ModelFn, ToolFn } from "./items";

/** Recorded tool calls served back in a replay: keyed by agent, tool, canonical arguments and occurrence. */
export interface Tape {
  lookup(agent: string, tool: string, argsCanonical: string, occurrence: number): { result: unknown; status: string } | undefined;
}

/** Shared cache of model outputs for seeded models (replays): key → output. */
export interface ModelCache {
  get(key: string): { value: unknown; usage?: Partial<Usage> } | undefined;
  set(key: string, out: { value: unknown; usage?: Partial<Usage> }): void;
}

/** One tool call as a replay reports it. */
export interface ActionSummary {
  seq: number;
  agent: string;
  tool: string;
  args: string; // canonical JSON
  result: string; // canonical JSON
  mode: "live" | "tape" | "stub" | "blocked";
  status: string;
}

export interface RuntimeOptions {
  runId: string;
  seed: number;
  sink: Sink;
  program?: string | null;
  task?: string;
  models: Record<string, ModelFn>;
  tools: Record<string, ToolFn>;
  sensitiveTools?: readonly string[];
  untrustedTools?: readonly string[];
  meta?: Record<string, unknown>;
  guard?: Guard;
  /** Replay: recorded tool results. Calls not on the tape are stubbed unless liveTools. */
  tape?: Tape;
  liveTools?: boolean;
  interventions?: readonly Intervention[];
  modelCache?: ModelCache;
  /** Hash-chain events (default true; replays that keep nothing may skip it). */
  chain?: boolean;
  /** Record where each call was made (default true). */
  captureSites?: boolean;
  /** Sites are relative to this folder (default: the working directory). */
  root?: string;
  /**
   * Cleans every blob and event field of credentials before it is hashed and stored (default: one
   * that knows the credential-looking values of the process environment). Capture layers add the
   * secrets they see (request headers, query keys) to it.
   */
  redactor?: Redactor;
}
