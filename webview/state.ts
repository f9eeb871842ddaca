/**
 * The app's state and the one place that changes it. The store holds what the host sent (the
 * workspace, investigations, job progress) and the UI state (screen, selection, filters); the
 * Controller turns host messages and user intents into new states and asks the host to act.
 * Nothing here computes analysis: alerts, verdicts, edges and causes arrive ready-made.
 */
import type { Investigation, RunGraph, RunSummary, Workspace } from "../core/analysis/types";
import { runGraphOf, sameGraph } from "../core/analysis/run-graph";
import type { Capabilities, HostToWebview, Screen } from "../core/protocol/messages";
import { DEFAULT_UI, newRequestId, type GraphToggles, type Host, type ThemeChoice, type TimelineFilters, type UiState } from "./host";

/** A replay the webview asked for: one test, or Find the cause for an action. */
export interface Job {
  id: string;
  kind: "test" | "attribution" | "fixCheck";
  run: string;
  /** The action (node id) it is about. */
  action: string;
  target: string;
  /** The intervention under test (tests only). */
  intervention?: string;
  state: "running" | "cancelling" | "done" | "failed" | "cancelled";
  phase: string;
  done: number;
  total: number;
  message?: string;
  error?: string;
  result?: unknown;
}

export interface RunRow {
  key: string;
  summary: RunSummary;
}

export interface AppState {
  caps: Capabilities;
  /** The host has answered "ready" (init received). */
  connected: boolean;
  workspace: Workspace | null;
  runs: Record<string, Investigation>;
  /**
   * The Graph screen's part of runs (core/analysis/run-graph.ts), received ahead of their
   * investigation; kept while it draws the same graph, so the drawn graph stays.
   */
  graphs: Record<string, RunGraph>;
  /** Runs asked for and not yet received: "graph" when only their graph part was asked for. */
  pending: Record<string, "graph" | "all">;
  /** Runs the host said went away. */
  removed: Record<string, true>;
  jobs: Record<string, Job>;
  ui: UiState;
}

type Listener = () => void;

const graphParts = new WeakMap<Investigation, RunGraph>();

/** An investigation's graph part, computed once per investigation. */
export function graphOf(inv: Investigation): RunGraph {
  let g = graphParts.get(inv);
  if (!g) graphParts.set(inv, (g = runGraphOf(inv)));
  return g;
}

/** A minimal observable cell holding the app state. */
export class StateCell {
  private state: AppState;
  private readonly listeners = new Set<Listener>();

  constructor(initial: AppState) {
    this.state = initial;
  }

  get(): AppState {
    return this.state;
  }

  set(update: Partial<AppState> | ((s: AppState) => Partial<AppState>)): void {
    const patch = typeof update === "function" ? update(this.state) : update;
    this.state = { ...this.state, ...patch };
    this.listeners.forEach((l) => l());
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

/** Every run the app can show: the workspace's, then any other run the host sent. */
export function runRows(s: AppState, keyOf: (r: RunSummary) => string): RunRow[] {
  const out: RunRow[] = [];
  const seen = new Set<string>();
  for (const summary of s.workspace?.runs ?? []) {
    const key = keyOf(summary);
    if (seen.has(key) || s.removed[key]) continue;
    seen.add(key);
    out.push({ key, summary: s.runs[key]?.summary ?? summary });
  }
  for (const [key, inv] of Object.entries(s.runs)) {
    if (!seen.has(key) && !s.removed[key]) out.push({ key, summary: inv.summary });
  }
  return out;
}

function mergeUi(saved: Partial<UiState> | undefined): UiState {
  const s = saved ?? {};
  return {
    ...DEFAULT_UI,
    ...Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)),
    filters: { ...DEFAULT_UI.filters, ...(s.filters ?? {}) },
    graph: { ...DEFAULT_UI.graph, ...(s.graph ?? {}) },
  };
}

export class Controller {
  readonly store: StateCell;
  private unsubscribe: (() => void) | null = null;

  constructor(readonly host: Host) {
    this.store = new StateCell({
      caps: host.caps,
      connected: false,
      workspace: null,
      runs: {},
      graphs: {},
      pending: {},
      removed: {},
      jobs: {},
      ui: mergeUi(host.loadState()),
    });
  }

  /** Starts listening and tells the host the webview is ready. */
  start(): void {
    this.unsubscribe = this.host.onMessage((m) => this.receive(m));
    this.host.post({ type: "ready" });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  get state(): AppState {
    return this.store.get();
  }

  /** The investigation on screen, if it has arrived. */
  current(): Investigation | null {
    const { ui, runs } = this.state;
    return ui.run ? (runs[ui.run] ?? null) : null;
  }

  /** The Graph screen's part of the run on screen: sent on its own, or taken from the investigation. */
  currentGraph(): RunGraph | null {
    const { ui, runs, graphs } = this.state;
    if (!ui.run) return null;
    if (graphs[ui.run]) return graphs[ui.run];
    const inv = runs[ui.run];
    return inv ? graphOf(inv) : null;
  }

  /** The summary of the run on screen, from whichever part of it has arrived. */
  currentSummary(): RunSummary | null {
    return this.current()?.summary ?? this.currentGraph()?.summary ?? null;
  }

  entries(): RunRow[] {
    return runRows(this.state, (r) => this.host.keyOf(r));
  }

  // ------------------------------------------------------------------ host → webview

  receive(m: HostToWebview): void {
    switch (m.type) {
      case "init":
        this.store.set({ caps: m.capabilities, connected: true });
        this.ensureRun();
        break;
      case "workspace":
        this.store.set({ workspace: m.workspace });
        this.pickDefaultRun();
        break;
      case "investigation": {
        const { [m.run]: _done, ...pending } = this.state.pending;
        const { [m.run]: _gone, ...removed } = this.state.removed;
        // the graph part stays while the investigation draws the same graph, else it goes
        const { [m.run]: part, ...graphs } = this.state.graphs;
        if (part && sameGraph(part, graphOf(m.investigation))) graphs[m.run] = part;
        this.store.set((s) => ({ runs: { ...s.runs, [m.run]: m.investigation }, graphs, pending, removed }));
        this.ensureRun();
        break;
      }
      case "runGraph": {
        const { [m.run]: asked, ...pending } = this.state.pending;
        if (asked === "all") pending[m.run] = asked; // the rest is still to come
        const { [m.run]: _gone, ...removed } = this.state.removed;
        const { [m.run]: old, ...runs } = this.state.runs;
        const prev = this.state.graphs[m.run];
        const graph = prev && sameGraph(prev, m.graph) ? prev : m.graph;
        // an investigation that draws another graph is out of date: it is asked for again when needed
        if (old && sameGraph(graphOf(old), graph)) runs[m.run] = old;
        this.store.set((s) => ({ graphs: { ...s.graphs, [m.run]: graph }, runs, pending, removed }));
        this.ensureRun();
        break;
      }
      case "runRemoved": {
        const { [m.run]: _inv, ...runs } = this.state.runs;
        const { [m.run]: _g, ...graphs } = this.state.graphs;
        const { [m.run]: _p, ...pending } = this.state.pending;
        this.store.set((s) => ({ runs, graphs, pending, removed: { ...s.removed, [m.run]: true } }));
        break;
      }
      case "reveal": {
        const screen: Screen = m.screen ?? "overview";
        const inv = this.state.runs[m.run];
        const action = m.node && (!inv || inv.actions[m.node]) ? m.node : undefined;
        this.setUi({
          run: m.run,
          screen,
          ...(action ? { action } : {}),
          // a tool call revealed on Why? (after Run test, Find the cause, a tree click): the screen
          // shows the call itself; its full record would cover the verdict and the candidates
          record: screen === "why" && action ? null : (m.seq ?? null),
          ...(m.node && screen === "graph" ? { graph: { ...this.state.ui.graph, node: m.node } } : {}),
        });
        this.ensureRun();
        break;
      }
      case "progress":
        this.updateJob(m.requestId, (j) => ({ ...j, phase: m.phase, done: m.done, total: m.total, message: m.message }));
        break;
      case "result":
        this.updateJob(m.requestId, (j) =>
          m.ok ? { ...j, state: "done", result: m.result } : { ...j, state: m.cancelled ? "cancelled" : "failed", error: m.error },
        );
        break;
    }
  }

  private updateJob(id: string, f: (j: Job) => Job): void {
    const j = this.state.jobs[id];
    if (j) this.store.set((s) => ({ jobs: { ...s.jobs, [id]: f(j) } }));
  }

  /** With no run chosen yet, open the only run (or stay on the Runs list). */
  private pickDefaultRun(): void {
    const entries = this.entries();
    if (!this.state.ui.run && entries.length === 1) this.setUi({ run: entries[0].key, screen: "overview" });
    this.ensureRun();
  }

  /**
   * Asks the host for the selected run when it is not here yet: on the Graph screen only its graph
   * part (a big run's rest is read when another screen, the record drawer or a node's panel needs
   * it: {@link needRun}).
   */
  private ensureRun(): void {
    const { ui } = this.state;
    this.needRun(ui.screen === "graph" && ui.record === null ? "graph" : "all");
  }

  /** Asks the host for the selected run's graph part, or all of it, unless it is here or asked for. */
  needRun(part: "graph" | "all"): void {
    const { ui, runs, graphs, pending, connected } = this.state;
    const run = ui.run;
    if (!connected || !run || runs[run] || pending[run] === "all") return;
    if (part === "graph" && (graphs[run] || pending[run])) return;
    this.store.set((s) => ({ pending: { ...s.pending, [run]: part } }));
    this.host.post(part === "graph" ? { type: "openRun", run, part } : { type: "openRun", run });
  }

  // ------------------------------------------------------------------ UI intents

  setUi(patch: Partial<UiState>): void {
    const ui = { ...this.state.ui, ...patch };
    this.store.set({ ui });
    this.host.saveState(ui);
  }

  go(screen: Screen, opts: { run?: string; action?: string | null; record?: number | null } = {}): void {
    const patch: Partial<UiState> = { screen };
    if (opts.run !== undefined && opts.run !== this.state.ui.run) {
      patch.run = opts.run;
      patch.action = null;
      patch.record = null;
      patch.graph = { ...this.state.ui.graph, node: null };
      patch.filters = { ...DEFAULT_UI.filters };
    }
    if (opts.action !== undefined) patch.action = opts.action;
    if (opts.record !== undefined) patch.record = opts.record;
    this.setUi(patch);
    this.ensureRun();
  }

  openRecord(seq: number | null): void {
    this.setUi({ record: seq });
    this.ensureRun();
  }

  setFilters(patch: Partial<TimelineFilters>): void {
    this.setUi({ filters: { ...this.state.ui.filters, ...patch } });
  }

  setGraph(patch: Partial<GraphToggles>): void {
    this.setUi({ graph: { ...this.state.ui.graph, ...patch } });
  }

  setTheme(theme: ThemeChoice): void {
    this.setUi({ theme });
  }

  /** The job of this run that is still running, if any (one replay at a time per run). */
  activeJob(run: string): Job | null {
    return Object.values(this.state.jobs).find((j) => j.run === run && (j.state === "running" || j.state === "cancelling")) ?? null;
  }

  runTest(run: string, action: string, target: string, intervention: string): string | null {
    if (!this.state.caps.canReplay || this.activeJob(run)) return null;
    const id = newRequestId();
    this.addJob({ id, kind: "test", run, action, target, intervention, state: "running", phase: "starting", done: 0, total: 0 });
    this.host.post({ type: "runTest", requestId: id, run, intervention, target, n: 20, nMax: 160 });
    return id;
  }

  findCause(run: string, action: string, target: string): string | null {
    if (!this.state.caps.canReplay || this.activeJob(run)) return null;
    const id = newRequestId();
    this.addJob({ id, kind: "attribution", run, action, target, state: "running", phase: "starting", done: 0, total: 0 });
    this.host.post({ type: "findCause", requestId: id, run, target });
    return id;
  }

  /** Replays with a fix applied (harm without → with it, and the intended actions). */
  checkFix(run: string, action: string, harm: string, fix: string[]): string | null {
    if (!this.state.caps.canReplay || this.activeJob(run)) return null;
    const id = newRequestId();
    this.addJob({ id, kind: "fixCheck", run, action, target: harm, intervention: fix.join(" + "), state: "running", phase: "starting", done: 0, total: 0 });
    this.host.post({ type: "checkFix", requestId: id, run, fix, harm });
    return id;
  }

  /** Saves the case file of an action (VS Code only: the host asks where). */
  exportCase(run: string, target: string): void {
    if (this.linksEnabled) this.host.post({ type: "exportCase", run, target });
  }

  cancel(id: string): void {
    const j = this.state.jobs[id];
    if (!j || j.state !== "running") return;
    this.updateJob(id, (x) => ({ ...x, state: "cancelling" }));
    this.host.post({ type: "cancel", requestId: id });
  }

  dismissJob(id: string): void {
    const { [id]: _gone, ...jobs } = this.state.jobs;
    this.store.set({ jobs });
  }

  private addJob(j: Job): void {
    this.store.set((s) => ({ jobs: { ...s.jobs, [j.id]: j } }));
  }

  // ------------------------------------------------------------------ editor links (VS Code only)

  get linksEnabled(): boolean {
    return this.state.caps.mode === "vscode";
  }

  openSite(run: string, file: string, line: number): void {
    if (this.linksEnabled) this.host.post({ type: "openSite", run, file, line });
  }

  openEvent(run: string, line: number): void {
    if (this.linksEnabled) this.host.post({ type: "openEvent", run, line });
  }

  openBlob(run: string, ref: string): void {
    if (this.linksEnabled) this.host.post({ type: "openBlob", run, ref });
  }

  revealInTree(run: string, seq?: number): void {
    if (this.linksEnabled) this.host.post({ type: "revealInTree", run, seq });
  }

  exportReport(): void {
    if (this.linksEnabled) this.host.post({ type: "exportReport" });
  }
}
