/**
 * The webview's side of the host ↔ webview protocol (core/protocol/messages.ts). Two hosts implement one
 * interface, so the app runs the same code in both places:
 *   VscodeHost  inside the extension: messages go through acquireVsCodeApi(), state through
 *               getState/setState (which survive hide/show and, with the panel serializer, reload);
 *   ReportHost  the static report: answers from the JSON embedded in the page, keeps the screen in
 *               the URL's #fragment, and cannot replay.
 * Messages that arrive are checked for shape before the app sees them.
 */
import type { Investigation, RunGraph, RunSummary, Workspace } from "../core/analysis/types";
import { runGraphOf } from "../core/analysis/run-graph";
import type { Capabilities, HostToWebview, Screen, WebviewToHost } from "../core/protocol/messages";
import { SCREENS } from "./screens";

/** The part of the UI state that is kept across hide/show and reloads. */
export interface UiState {
  screen: Screen;
  run: string | null;
  /** The tool call (node id) the Why screen shows. */
  action: string | null;
  /** The event (seq) whose full record is open in the drawer. */
  record: number | null;
  filters: TimelineFilters;
  graph: GraphToggles;
  /** Static report only: the colour theme forced by the header switch. */
  theme: ThemeChoice;
}

export interface TimelineFilters {
  agent: string;
  type: string;
  text: string;
  /** Only events with a flag (untrusted, sensitive, error, stub, blocked, alert). */
  flagged: boolean;
}

export interface GraphToggles {
  inferred: boolean;
  ruledOut: boolean;
  /** The node traced upstream and downstream. */
  node: string | null;
}

export type ThemeChoice = "auto" | "light" | "dark" | "hc";

export const DEFAULT_UI: UiState = {
  screen: "runs",
  run: null,
  action: null,
  record: null,
  filters: { agent: "", type: "", text: "", flagged: false },
  graph: { inferred: false, ruledOut: false, node: null },
  theme: "auto",
};

export interface Host {
  readonly caps: Capabilities;
  post(msg: WebviewToHost): void;
  /** Subscribe to host messages; returns the unsubscribe function. */
  onMessage(fn: (msg: HostToWebview) => void): () => void;
  loadState(): Partial<UiState> | undefined;
  saveState(ui: UiState): void;
  /** The key the host uses for a run (the run folder in VS Code, the report's key in a report). */
  keyOf(summary: RunSummary): string;
}

// every type of the protocol's union, once: a type added to HostToWebview fails to compile here
// until it is listed (and checked below)
const HOST_TYPES: Record<HostToWebview["type"], true> = {
  init: true,
  workspace: true,
  investigation: true,
  runGraph: true,
  runRemoved: true,
  reveal: true,
  progress: true,
  result: true,
};

/** A message from the host, or null when it is not shaped like one. */
export function asHostMessage(data: unknown): HostToWebview | null {
  if (!data || typeof data !== "object" || Array.isArray(data)) return null;
  const m = data as Record<string, unknown>;
  if (typeof m.type !== "string" || !Object.hasOwn(HOST_TYPES, m.type)) return null;
  switch (m.type) {
    case "init":
      return m.capabilities && typeof m.capabilities === "object" ? (m as unknown as HostToWebview) : null;
    case "workspace":
      return m.workspace && typeof m.workspace === "object" && Array.isArray((m.workspace as Workspace).runs) ? (m as unknown as HostToWebview) : null;
    case "investigation":
      return typeof m.run === "string" && isInvestigation(m.investigation) ? (m as unknown as HostToWebview) : null;
    case "runGraph":
      return typeof m.run === "string" && isRunGraph(m.graph) ? (m as unknown as HostToWebview) : null;
    case "runRemoved":
    case "reveal":
      return typeof m.run === "string" ? (m as unknown as HostToWebview) : null;
    case "progress":
    case "result":
      return typeof m.requestId === "string" ? (m as unknown as HostToWebview) : null;
  }
  return null;
}

function isInvestigation(x: unknown): x is Investigation {
  const i = x as Investigation | null;
  return !!i && typeof i === "object" && i.schema === "causeway.investigation.v1" && !!i.summary && Array.isArray(i.timeline);
}

function isRunGraph(x: unknown): x is RunGraph {
  const g = x as RunGraph | null;
  return (
    !!g &&
    typeof g === "object" &&
    !!g.summary &&
    !!g.graph &&
    Array.isArray(g.graph.nodes) &&
    Array.isArray(g.graph.edges) &&
    !!g.marks &&
    typeof g.marks === "object"
  );
}

/** A fresh request id (letters, digits, - and _ only, as the host requires). */
export function newRequestId(): string {
  const r = new Uint32Array(2);
  crypto.getRandomValues(r);
  return `req-${Date.now().toString(36)}-${r[0].toString(36)}${r[1].toString(36)}`;
}

// ------------------------------------------------------------------------------------ VS Code

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export class VscodeHost implements Host {
  private readonly api: VsCodeApi;
  caps: Capabilities = { mode: "vscode", canReplay: false, replayReason: "Waiting for the extension." };

  constructor(api: VsCodeApi = acquireVsCodeApi()) {
    this.api = api;
  }

  post(msg: WebviewToHost): void {
    this.api.postMessage(msg);
  }

  onMessage(fn: (msg: HostToWebview) => void): () => void {
    const listener = (ev: MessageEvent) => {
      const m = asHostMessage(ev.data);
      if (m) fn(m);
    };
    window.addEventListener("message", listener);
    return () => window.removeEventListener("message", listener);
  }

  loadState(): Partial<UiState> | undefined {
    const s = this.api.getState() as { v?: number; ui?: Partial<UiState> } | undefined;
    return s && s.v === 1 && s.ui && typeof s.ui === "object" ? s.ui : undefined;
  }

  saveState(ui: UiState): void {
    this.api.setState({ v: 1, ui });
  }

  keyOf(summary: RunSummary): string {
    return summary.dir;
  }
}

// ------------------------------------------------------------------------------------ report

/** The data a static report embeds (core/report/report.ts ReportData). */
export interface ReportData {
  mode: "report";
  generated: string;
  workspace: Workspace;
  runs: Record<string, Investigation>;
}

/** A run of a static report: its graph part first, the whole investigation when a screen asks. */
export interface ReportRun {
  graph(): Promise<RunGraph>;
  investigation(): Promise<Investigation>;
}

/** A report's data as the webview reads it: runs by key, each read on demand. */
export interface ReportSource {
  generated: string;
  workspace: Workspace;
  runs: Map<string, ReportRun>;
}

/** A source over investigations already read (tests, small reports). */
export function reportSource(data: ReportData): ReportSource {
  const runs = new Map<string, ReportRun>();
  for (const [key, inv] of Object.entries(data.runs)) {
    let graph: RunGraph | undefined;
    runs.set(key, { graph: async () => (graph ??= runGraphOf(inv)), investigation: async () => inv });
  }
  return { generated: data.generated, workspace: data.workspace, runs };
}

export const REPORT_REASON = "This is a static report: open the runs in VS Code to run tests.";

export class ReportHost implements Host {
  readonly caps: Capabilities = { mode: "report", canReplay: false, replayReason: REPORT_REASON };
  private readonly listeners = new Set<(msg: HostToWebview) => void>();
  private readonly byDir = new Map<string, string>();

  constructor(readonly data: ReportSource) {
    // the keys follow the workspace's order (core/report/report.ts: one key per summary, in order)
    const keys = [...data.runs.keys()];
    data.workspace.runs.forEach((s, i) => {
      if (keys[i] !== undefined) this.byDir.set(s.dir, keys[i]);
    });
  }

  post(msg: WebviewToHost): void {
    // Answer asynchronously, as a real host would.
    const send = (m: HostToWebview) => queueMicrotask(() => this.listeners.forEach((fn) => fn(m)));
    if (msg.type === "ready") {
      send({ type: "init", capabilities: this.caps });
      send({ type: "workspace", workspace: this.data.workspace });
    } else if (msg.type === "openRun") {
      const r = this.data.runs.get(msg.run);
      if (!r) return send({ type: "runRemoved", run: msg.run });
      const unreadable = (err: unknown) => {
        console.error(`this report's run ${msg.run} could not be read: ${err instanceof Error ? err.message : String(err)}`);
        send({ type: "runRemoved", run: msg.run });
      };
      if (msg.part === "graph") r.graph().then((graph) => send({ type: "runGraph", run: msg.run, graph }), unreadable);
      else r.investigation().then((investigation) => send({ type: "investigation", run: msg.run, investigation }), unreadable);
    }
    // Nothing else has a meaning in a static file: replays and editor links are disabled.
  }

  onMessage(fn: (msg: HostToWebview) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  loadState(): Partial<UiState> | undefined {
    return parseHash(location.hash);
  }

  saveState(ui: UiState): void {
    const hash = formatHash(ui);
    if (location.hash.slice(1) === hash) return;
    try {
      history.replaceState(null, "", `#${hash}`);
    } catch {
      // Some file:// contexts refuse replaceState; the state then lives only in memory.
    }
  }

  keyOf(summary: RunSummary): string {
    return this.byDir.get(summary.dir) ?? summary.run_id;
  }
}

/** The UI state as a URL fragment: #screen=why&run=demo-seed0&action=ev:… */
export function formatHash(ui: UiState): string {
  const p = new URLSearchParams();
  p.set("screen", ui.screen);
  if (ui.run) p.set("run", ui.run);
  if (ui.action) p.set("action", ui.action);
  if (ui.record !== null) p.set("record", String(ui.record));
  if (ui.filters.agent) p.set("agent", ui.filters.agent);
  if (ui.filters.type) p.set("type", ui.filters.type);
  if (ui.filters.text) p.set("q", ui.filters.text);
  if (ui.filters.flagged) p.set("flagged", "1");
  if (ui.graph.inferred) p.set("inferred", "1");
  if (ui.graph.ruledOut) p.set("ruledout", "1");
  if (ui.graph.node) p.set("node", ui.graph.node);
  if (ui.theme !== "auto") p.set("theme", ui.theme);
  return p.toString();
}

export function parseHash(hash: string): Partial<UiState> | undefined {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  if (![...p.keys()].length) return undefined;
  const screen = p.get("screen") as Screen | null;
  const record = Number(p.get("record"));
  const theme = p.get("theme") as ThemeChoice | null;
  return {
    screen: screen && SCREENS.includes(screen) ? screen : undefined,
    run: p.get("run"),
    action: p.get("action"),
    record: p.has("record") && Number.isInteger(record) ? record : null,
    filters: { agent: p.get("agent") ?? "", type: p.get("type") ?? "", text: p.get("q") ?? "", flagged: p.get("flagged") === "1" },
    graph: { inferred: p.get("inferred") === "1", ruledOut: p.get("ruledout") === "1", node: p.get("node") },
    theme: theme && ["light", "dark", "hc"].includes(theme) ? theme : "auto",
  };
}
