/**
 * The investigation object: one plain, serialisable model of a run that the CLI prints, the static
 * report embeds and the extension posts to the webview. No front re-derives alerts, edges or
 * verdicts on its own.
 */
import type { GEdge, GNode } from "../graph/graph";
import type { Problem } from "../log/problems";

export type Severity = "high" | "review" | "info";

export interface EvidenceRef {
  node: string;
  seq: number;
  line: number;
  label: string;
  trust: string;
  ref?: string;
}

export interface Alert {
  severity: Severity;
  /** integrity | evidence | untrusted-value | untrusted-reach | blocked | tool-error | model-error | stubbed */
  rule: string;
  title: string;
  detail: string;
  /** The event's seq, or null for a run-level alert. */
  seq: number | null;
  tool: string | null;
  agent?: string;
  node?: string;
  /** 1-based line of events.jsonl (the bad line for an integrity alert). */
  line?: number;
  site?: { file: string; line: number };
  /** A target spec naming this call, for Run test / Find the cause. */
  target?: string;
  sensitive?: "declared" | "by name" | null;
  /** The traced value (untrusted-value). */
  value?: string;
  /** Where the value or the reach came from (untrusted-reach: the first 20 sources, in seq order). */
  evidence?: EvidenceRef[];
  /** untrusted-reach: how many untrusted inputs reached the call (its detail names the first few). */
  reached?: number;
  /** Once tested: the confirmed cause of this call. */
  cause?: { intervention: string; role: string | null; effect: number; ci: [number, number]; n: number } | null;
}

export type ProvenanceStatus = "untrusted-only" | "trusted" | "generated" | "hashed";

export interface ProvenanceRow {
  value: string;
  /** Where in the arguments: "to", "items[0].email". */
  path: string;
  status: ProvenanceStatus;
  /** The sources that held the value before the call (the first 20, in order). */
  sources: EvidenceRef[];
  /** How many sources held it in all. */
  count: number;
}

export type CandidateStatus = "primary" | "contributing" | "confirmed" | "joint" | "suppressive" | "inconclusive" | "no-effect-seen" | "ruled-out" | "untested";

export interface TestSummary {
  intervention: string;
  target: string;
  n: number;
  p_with: number | null;
  p_without: number | null;
  effect: number;
  ci: [number, number];
  verdict: string;
  role?: string | null;
  p_value?: number | null;
  looks?: number;
  stopped?: string;
  n_needed?: number | null;
  scope?: string;
  line: number;
  chained: boolean;
  group?: string[];
  /** Who wrote it (core/log/writers.ts), when recorded. */
  by?: string;
  /** Written by anyone but the run's writer: shown, not counted (core/analysis/foreign.ts). */
  foreign?: boolean;
  /** Other suspects were removed in both arms (put back: the test is not about removing it alone). */
  baseline?: boolean;
  /** How it was replayed: 1 one recorded call re-sent, 2 agentless re-simulation, 3 the program re-run. */
  rung?: 1 | 2 | 3;
  /** What the replay took for granted, in plain sentences. */
  assumptions?: string[];
  /** Actions the replays took that the recording never made (answered without running a tool). */
  off_tape_actions?: number;
}

/** How a test was run (core/analysis/tested.ts reads it from an untrusted record). */
export type HowTested = Pick<TestSummary, "rung" | "assumptions" | "off_tape_actions">;

/** One hop's test, in the fields the investigator shows. */
export interface HopTest extends HowTested {
  verdict: string;
  role?: string;
  effect?: number;
  ci?: [number, number];
  n?: number;
}

/** One hop of a chain: removing `from` changed whether `to` happened, as `test` measured. */
export interface ChainHop {
  from: string;
  to: string;
  test: HopTest;
}

export interface Candidate {
  node: string;
  label: string;
  kind: string;
  agent: string;
  trust: string;
  /** The intervention that removes it (input:…, msg:…). */
  intervention: string;
  status: CandidateStatus;
  role: string | null;
  test: TestSummary | null;
  /** How much of its wording the next model output reused (0..1): word 5-grams, as the reference. */
  reuse: number;
  /**
   * The call's specific values (addresses, URLs, ids, file names) found verbatim in this item, and
   * their share of the call's specific values by length (core/graph/copied.ts). Counts what the
   * 5-gram overlap misses: an address lifted out of a sentence into a short tool call.
   */
  copied?: { values: string[]; share: number };
}

/** What the tests recorded after Find the cause say about one action (core/analysis/causes.ts). */
export interface SpanView {
  cause: string;
  source: string;
  node: string;
  seq: number;
  line: number;
  /** The input's content (clipped to MAX_TEXT code points, causes.ts) and its length. */
  text: string;
  length: number;
  ranges: [number, number][];
  level: string;
  joint: boolean;
  spec: string;
  effect: number;
  ci: [number, number];
  n: number;
  /** The whole input's test (the cause), when recorded. */
  whole: { effect: number; ci: [number, number]; n: number } | null;
  testLine: number;
}

export interface ShapeView {
  causes: [string, string];
  shape: string;
  arms: { label: string; p: number; n: number; line: number }[];
  contrasts: { label: string; effect: number; ci: [number, number] }[];
}

export interface FixView {
  fix: string[];
  verdict: string;
  summary: string;
  harm: { p_with: number; p_without: number; effect: number; ci: [number, number]; n: number; line: number };
  keeps: { target: string; status: string; p_with: number; p_without: number; effect: number; ci: [number, number]; line: number }[];
}

export interface CauseDetails {
  spans: SpanView[];
  shapes: ShapeView[];
  fixes: FixView[];
}

export interface ActionView {
  node: string;
  seq: number;
  line: number;
  agent: string;
  tool: string;
  site?: { file: string; line: number };
  args: string;
  result: string;
  status: string;
  mode: string;
  sensitive: "declared" | "by name" | null;
  blocked: boolean;
  decision: string | null;
  provenance: ProvenanceRow[];
  /** Candidate causes, best first: every tested one, and untested ones up to a cap (core/analysis/candidates.ts CANDIDATES_MAX). */
  candidates: Candidate[];
  /** How many candidates there are in all, when untested ones were left off. */
  candidatesTotal?: number;
  /** Suggested target spec for tests of this call. */
  target: string;
  /** One sentence: what is known about why this call happened. */
  verdict: string;
  alerts: Severity[];
  /** After Find the cause: causing spans, failure shapes, fix checks (from tests.jsonl). */
  causes?: CauseDetails;
  /** Tests of this call written by anyone but the run's writer: shown, not counted. */
  foreignTests?: TestSummary[];
  /** Find the cause's chain (root → this call), rebuilt from tests.jsonl (core/analysis/chains.ts). */
  chain?: RecordedChain;
  /** A chain written by someone other than the run's writer: shown marked, not counted. */
  foreignChain?: RecordedChain;
  /** The suspects the latest Find the cause could not test (rung 1), from tests.jsonl (core/analysis/not-tested.ts). */
  notTested?: NotTested;
}

/** The suspects one attribution of one target could not test, with why (tests.jsonl). */
export interface NotTested {
  attribution: string;
  target: string;
  items: { spec: string; reason: string }[];
  /** The tests.jsonl line that says so. */
  line: number;
}

/** A chain of hops as recorded by one attribution of one target (tests.jsonl). */
export interface RecordedChain {
  attribution: string;
  target: string;
  /** Ordered root → action. */
  hops: ChainHop[];
  /** Each hop's line in tests.jsonl. */
  lines: number[];
  foreign?: true;
  /** Who wrote it, when foreign. */
  by?: string;
}

export interface TimelineRow {
  seq: number;
  id: string;
  node: string | null;
  line: number;
  type: string;
  agent: string;
  t_ms: number;
  duration_ms: number | null;
  text: string;
  trust: string | null;
  status: string | null;
  sensitive: boolean;
  mode: string | null;
  usage: { input_tokens: number; output_tokens: number; estimated?: boolean } | null;
  flags: string[];
  site?: { file: string; line: number };
}

export interface RunSummary {
  run_id: string;
  dir: string;
  program: string;
  started: string;
  task: string | null;
  agents: string[];
  decisions: number;
  actions: number;
  messages: number;
  inputs: number;
  untrusted_inputs: number;
  events: number;
  errors: number;
  model_ms: number;
  tool_ms: number;
  usage: { input_tokens: number; output_tokens: number };
  tests: number;
  confirmed_causes: number;
  /** Tests written by anyone but the run's writer (not counted in `confirmed_causes`), when any. */
  foreign_tests?: number;
  /** Who wrote the run: a collector's principal, `local`, or null when not recorded. */
  writer?: string | null;
  alerts: Record<Severity, number>;
  integrity: "ok" | "failed";
  /** intact | failed (verify) | running (no run.end yet) */
  status: "intact" | "failed" | "running";
  problems: number;
  first_problem: Problem | null;
  tools_run: string[];
  replayable: boolean;
  finished: boolean;
  blocked: number;
  guard: string | null;
  /** The highest alert, for one-line displays. */
  top_alert: Pick<Alert, "severity" | "title" | "seq" | "tool"> | null;
}

export interface ChannelRow {
  channel: string;
  from: string;
  to: string;
  sent: number;
  /** Messages a later decision of the receiver had in its context. */
  used: number;
  tests: TestSummary[];
}

export interface AgentRow {
  agent: string;
  role: string;
  parent: string | null;
  inputs: number;
  decisions: number;
  actions: number;
  sent: number;
  received: number;
  tokens: number;
  model_ms: number;
}

export interface Matrix {
  rows: string[];
  cols: string[];
  cells: Record<string, TestSummary>;
}

export interface EventView {
  seq: number;
  line: number;
  id: string;
  type: string;
  agent: string;
  ts: string;
  hash: string;
  prev_hash: string;
  /** The event's own fields (without the common ones above). */
  fields: Record<string, unknown>;
  /** Node ids this event came from / led to (observed edges). */
  from: string[];
  to: string[];
  /** Problems reported on this line. */
  problems: string[];
}

export interface BlobPreview {
  /** Pretty JSON (or the string itself), cut at the preview limit. */
  text: string;
  bytes: number;
  truncated: boolean;
  /** Set when the blob could not be read (missing, forged, too large). */
  problem?: string;
}

export interface Investigation {
  schema: "causeway.investigation.v1";
  summary: RunSummary;
  alerts: Alert[];
  timeline: TimelineRow[];
  graph: { nodes: GNode[]; edges: GEdge[]; inferSkipped: boolean };
  actions: Record<string, ActionView>;
  matrix: Matrix;
  channels: ChannelRow[];
  agents: AgentRow[];
  criticalPath: string[];
  unusedMessages: { from: string; to: string; seq: number; node: string }[];
  problems: Problem[];
  tests: TestSummary[];
  events: EventView[];
  blobs: Record<string, BlobPreview>;
}

export interface InfluenceSource {
  id: string;
  labels: string[];
  trust: string | null;
  runs: number;
  cited_by: number;
  preview: string;
  max_effect: number | null;
  confirmed_tools: string[];
}

export interface InfluenceEdge {
  source: string;
  tool: string;
  reach_runs: number;
  tests: { run: string; target: string; effect: number; ci: [number, number]; verdict: string; n: number }[];
  max_effect: number | null;
  confirmed: boolean;
  ruled_out: boolean;
}

export interface Influence {
  sources: InfluenceSource[];
  outcomes: { id: string; runs: number }[];
  edges: InfluenceEdge[];
}

export interface Workspace {
  schema: "causeway.workspace.v1";
  runs: RunSummary[];
  influence: Influence;
}

/** How a tool call is drawn on the graph: declared or named sensitive, blocked, with a high alert. */
export interface ActionMarks {
  sensitive: boolean;
  blocked: boolean;
  high: boolean;
}

/**
 * What the Graph screen needs of an investigation (a small part of it): the static report embeds
 * it apart from the rest and the extension sends it first, so a big run's graph is drawn before
 * the rest of its investigation is read. See core/analysis/run-graph.ts.
 */
export interface RunGraph {
  summary: RunSummary;
  graph: Investigation["graph"];
  /** Per tool-call node. */
  marks: Record<string, ActionMarks>;
}
