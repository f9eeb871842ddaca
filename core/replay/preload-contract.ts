/**
 * The contract between the replay engine and the preload (core/register/): the configuration the
 * engine hands a program it starts under the preload (CAUSEWAY_CONFIG, JSON), the replay order in
 * it, and the summary the program's preload writes back at exit. It lives in replay/, which
 * register/ sits above: replay/ never imports register/.
 */
import type { TraceEntry } from "../log/trace";

export const PRELOAD_TAG = "causeway preload";

export interface ReplayOrder {
  /** The recorded run folder (the tape). */
  run: string;
  interventions: string[];
  seed: number;
  liveTools: boolean;
  /** Where the summary is written at exit. */
  out: string;
  /** Keep the events and report their trace in the summary (`causeway replay`'s diff). */
  trace?: boolean;
}

export interface PreloadConfig {
  /** The run folder (recording). */
  dir?: string;
  runId: string;
  seed?: number;
  sensitive: string[];
  untrusted: string[];
  trusted: string[];
  /** run.start's program: the command, relative to the root. */
  program: string | null;
  command?: string[];
  root: string;
  agent?: string;
  /** The program's own tool modules: file (relative to the root) → export names to wrap. */
  tools?: Record<string, string[]>;
  replay?: ReplayOrder;
  /** The launcher (`causeway record`) reports a setup error (a bad --tool) itself: the program says nothing. */
  quiet?: boolean;
}

/** What a replayed program reports back to the engine. */
export interface ReplaySummary {
  exit_code: number;
  actions: { seq: number; agent: string; tool: string; args: string; result: string; mode: "live" | "tape" | "stub" | "blocked"; status: string }[];
  stats: { modelCalls: number; modelCallsCached: number; offTape: number; ablated: number; events: number };
  problems: string[];
  uncaptured: string[];
  /** The decisions, tool calls and messages of the replay, when the order asked for them. */
  trace?: TraceEntry[];
}
