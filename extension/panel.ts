/**
 * The investigator: a webview panel running the webview bundle (dist/webview/). The host sends
 * the capabilities, the workspace (summaries and cross-run influence) and investigations, pushes a
 * fresh investigation whenever a shown run changes, and answers the webview's requests. Every
 * message from the webview is validated with parseWebviewMessage; anything else is logged and
 * ignored. The webview keeps its own state (getState/setState), so it is not retained when hidden.
 */
import * as vscode from "vscode";
import fs from "node:fs";
import path from "node:path";
import { influence } from "../core/analysis/influence";
import { runGraphOf } from "../core/analysis/run-graph";
import type { RunSummary, Workspace } from "../core/analysis/types";
import type { RunData } from "../core/log/reader";
import { parseWebviewMessage, type HostToWebview, type Screen, type WebviewToHost } from "../core/protocol/messages";
import { DefaultRunChoice } from "./logic/default-run";
import { makeNonce, renderMissing, renderShell } from "./logic/html";
import type { RunsChange } from "./logic/workspace-runs";
import type { ReplayService } from "./replay";
import type { Services } from "./services";
import { COMMANDS } from "./logic/command-ids";
import { confirmCost } from "./cost-confirm";
import { DEFAULT_N_MAX } from "../core/replay/sequential";

export const PANEL_TYPE = "causeway.investigator";

/** What the panel asks of the rest of the extension. */
export interface PanelHost {
  revealInTree(run: string, seq?: number): Promise<void>;
  openBlob(run: string, ref: string): Promise<void>;
  exportReport(): Promise<void>;
  exportCase(run: string, target: string): Promise<void>;
}

export interface RevealTarget {
  seq?: number;
  node?: string;
  /** The event is a tool call: open the "why" screen. */
  action?: boolean;
}

/** A run with more graph nodes than this is pushed unasked as its graph part only. */
const PUSH_WHOLE_MAX_NODES = 600;

export class InvestigatorPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private panelDisposables: vscode.Disposable[] = [];
  private ready = false;
  /**
   * Runs the webview holds, and what of them: their graph part only, or all of the investigation
   * (pushed again when they change).
   */
  private shown = new Map<string, "graph" | "all">();
  private selected: string | undefined;
  private pendingReveal: { run: string; screen?: Screen; node?: string; seq?: number } | undefined;
  private requests = new Map<string, AbortController>();
  private liveTimer: ReturnType<typeof setTimeout> | undefined;
  private liveRuns = new Set<string>();
  private workspaceTimer: ReturnType<typeof setTimeout> | undefined;
  private disposables: vscode.Disposable[] = [];
  private readonly defaultRun: DefaultRunChoice;

  constructor(
    private s: Services,
    private replay: ReplayService,
    private host: PanelHost,
  ) {
    this.defaultRun = new DefaultRunChoice(s.store);
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, {
        deserializeWebviewPanel: (panel, state) => {
          const run = state && typeof state === "object" && typeof (state as { run?: unknown }).run === "string" ? (state as { run: string }).run : undefined;
          this.adopt(panel, run && this.s.store.has(run) ? run : undefined);
          return Promise.resolve();
        },
      }),
      s.store.onDidChange((c) => this.onStoreChange(c)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.post({ type: "init", capabilities: this.capabilities() })),
    );
  }

  get isOpen(): boolean {
    return !!this.panel;
  }

  /** Opens (or brings forward) the investigator on a run, optionally on one event. */
  show(run?: string, reveal?: RevealTarget): void {
    const asked = run && this.s.store.has(run) ? path.resolve(run) : undefined;
    if (asked) this.defaultRun.cancel();
    // with none asked for and none chosen yet, the default run; before the analysis knows it, the
    // investigator opens on its Runs list and goes to it once it is known (onStoreChange)
    const target = asked ?? this.selected ?? this.defaultRun.ask();
    this.selected = target;
    if (target && reveal && (reveal.seq !== undefined || reveal.node)) {
      this.pendingReveal = { run: target, screen: reveal.action ? "why" : "timeline", node: reveal.node ?? this.nodeOf(target, reveal.seq), seq: reveal.seq };
    } else if (target) this.pendingReveal = { run: target, screen: "overview" };
    if (!this.panel) {
      const column = vscode.window.activeTextEditor ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
      this.adopt(vscode.window.createWebviewPanel(PANEL_TYPE, "Causeway", { viewColumn: column, preserveFocus: true }, this.options()), target);
      return;
    }
    this.panel.reveal(this.panel.viewColumn, true);
    if (this.ready) this.sendSelected();
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [this.webviewRoot()], enableFindWidget: true };
  }

  private webviewRoot(): vscode.Uri {
    return vscode.Uri.joinPath(this.s.context.extensionUri, "dist", "webview");
  }

  private adopt(panel: vscode.WebviewPanel, run: string | undefined): void {
    this.disposePanel();
    this.panel = panel;
    this.selected = run ?? this.selected ?? this.defaultRun.peek();
    panel.webview.options = { enableScripts: true, localResourceRoots: [this.webviewRoot()] };
    panel.iconPath = vscode.Uri.joinPath(this.s.context.extensionUri, "media", "causeway.svg");
    this.panelDisposables.push(
      panel.onDidDispose(() => {
        this.panel = undefined;
        this.defaultRun.cancel();
        this.ready = false;
        this.shown.clear();
        for (const r of this.requests.values()) r.abort();
        this.requests.clear();
        for (const d of this.panelDisposables) d.dispose();
        this.panelDisposables = [];
      }),
      panel.onDidChangeViewState((e) => {
        // hidden webviews are discarded (not retained); the page says "ready" again when shown
        if (!e.webviewPanel.visible) {
          this.ready = false;
          this.shown.clear();
        }
      }),
      panel.webview.onDidReceiveMessage((m) => this.onMessage(m)),
    );
    this.render();
  }

  private render(): void {
    if (!this.panel) return;
    const webview = this.panel.webview;
    const root = this.webviewRoot();
    const js = vscode.Uri.joinPath(root, "webview.js");
    const css = vscode.Uri.joinPath(root, "webview.css");
    this.ready = false;
    if (!fs.existsSync(js.fsPath)) {
      this.s.log.warn(`investigator bundle missing: ${js.fsPath}`);
      webview.html = renderMissing("dist/webview/webview.js");
      return;
    }
    webview.html = renderShell({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(js).toString(),
      cytoscapeUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "cytoscape.js")).toString(),
      styleUri: webview.asWebviewUri(css).toString(),
    });
  }

  private post(msg: HostToWebview): void {
    if (!this.panel || !this.ready) return;
    void this.panel.webview.postMessage(msg).then(undefined, (err) => this.s.log.warn(`posting to the investigator failed: ${err}`));
  }

  private capabilities() {
    return { mode: "vscode" as const, canReplay: this.replay.canReplay, replayReason: this.replay.reason };
  }

  /** The default run asked for before it was known: open it now that it is (once). */
  private settleDefaultRun(): void {
    if (!this.panel || !this.defaultRun.isWaiting) return;
    if (this.selected) return this.defaultRun.cancel(); // a run was chosen meanwhile
    const run = this.defaultRun.settle();
    if (!run) return;
    this.selected = run;
    this.pendingReveal = { run, screen: "overview" };
    if (this.ready) this.sendSelected();
  }

  private nodeOf(run: string, seq?: number): string | undefined {
    if (seq === undefined) return undefined;
    const inv = this.s.store.investigation(run);
    return inv?.timeline.find((t) => t.seq === seq)?.node ?? undefined;
  }

  // ------------------------------------------------------------------ sending

  /**
   * Sends a run: its graph part when the webview asked for only that (a big run's Graph screen
   * draws before the rest is sent), else the investigation. Unasked, a big run is pushed as its
   * graph part: the webview asks for the rest when a screen needs it.
   */
  private sendInvestigation(run: string, part?: "graph" | "all"): void {
    try {
      const inv = this.s.store.investigation(run);
      if (!inv) return;
      const want = part ?? this.shown.get(run) ?? (inv.graph.nodes.length > PUSH_WHOLE_MAX_NODES ? "graph" : "all");
      if (want === "graph" && this.shown.get(run) !== "all") {
        this.shown.set(run, "graph");
        this.post({ type: "runGraph", run, graph: runGraphOf(inv) });
        return;
      }
      this.shown.set(run, "all");
      this.post({ type: "investigation", run, investigation: inv });
    } catch (err) {
      this.s.log.error(`investigating ${run} failed: ${(err as Error)?.stack ?? err}`);
    }
  }

  private sendSelected(): void {
    if (this.selected) this.sendInvestigation(this.selected);
    if (this.pendingReveal && this.s.store.has(this.pendingReveal.run)) {
      if (!this.shown.has(this.pendingReveal.run)) this.sendInvestigation(this.pendingReveal.run);
      this.post({ type: "reveal", ...this.pendingReveal });
    }
    this.pendingReveal = undefined;
  }

  /** Summaries of every analysed run and their cross-run influence. */
  workspace(): Workspace {
    const t0 = Date.now();
    const entries = this.s.store.list().filter((e) => e.analysis);
    const runs: RunSummary[] = entries.map((e) => e.analysis!.summary);
    runs.sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : a.run_id.localeCompare(b.run_id)));
    const data: RunData[] = [];
    for (const e of entries) {
      const d = this.s.store.runData(e.dir);
      if (d) data.push(d);
    }
    const ws: Workspace = { schema: "causeway.workspace.v1", runs, influence: influence(data) };
    const ms = Date.now() - t0;
    if (ms > 200) this.s.log.debug(`workspace view of ${entries.length} runs built in ${ms} ms`);
    return ws;
  }

  private sendWorkspace(): void {
    try {
      this.post({ type: "workspace", workspace: this.workspace() });
    } catch (err) {
      this.s.log.error(`building the workspace view failed: ${(err as Error)?.stack ?? err}`);
    }
  }

  private onStoreChange(c: RunsChange): void {
    this.settleDefaultRun();
    if (!this.panel || !this.ready) return;
    for (const d of c.removed) {
      if (this.shown.delete(d)) this.post({ type: "runRemoved", run: d });
      if (this.selected === d) this.selected = undefined;
    }
    for (const d of c.changed) if (this.shown.has(d)) this.liveRuns.add(d);
    if (this.liveRuns.size && !this.liveTimer) {
      this.liveTimer = setTimeout(() => {
        this.liveTimer = undefined;
        const runs = [...this.liveRuns];
        this.liveRuns.clear();
        for (const d of runs) if (this.shown.has(d) && this.s.store.has(d)) this.sendInvestigation(d);
      }, 200);
    }
    if (!this.workspaceTimer) {
      this.workspaceTimer = setTimeout(
        () => {
          this.workspaceTimer = undefined;
          if (this.ready) this.sendWorkspace();
        },
        this.s.store.pending > 0 ? 2000 : 600,
      );
    }
  }

  // ------------------------------------------------------------------ receiving

  private onMessage(raw: unknown): void {
    const m = parseWebviewMessage(raw);
    if (!m) {
      this.s.log.warn(`ignored a message from the investigator that is not part of the protocol: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    if ("run" in m && !this.s.store.has(m.run)) {
      this.s.log.warn(`ignored a "${m.type}" message for an unknown run: ${m.run.slice(0, 200)}`);
      if (m.type === "runTest" || m.type === "findCause" || m.type === "checkFix")
        this.post({ type: "result", requestId: m.requestId, ok: false, error: "that run is not in this workspace" });
      return;
    }
    void this.handle(m).catch((err) => this.s.log.error(`handling "${m.type}" failed: ${(err as Error)?.stack ?? err}`));
  }

  private async handle(m: WebviewToHost): Promise<void> {
    switch (m.type) {
      case "ready":
        this.ready = true;
        this.shown.clear();
        this.post({ type: "init", capabilities: this.capabilities() });
        this.sendWorkspace();
        this.sendSelected();
        return;
      case "openRun":
        this.defaultRun.cancel(); // the user chose a run
        this.selected = path.resolve(m.run);
        this.sendInvestigation(this.selected, m.part ?? "all");
        return;
      case "runTest":
      case "findCause":
      case "checkFix":
        return this.request(m);
      case "exportCase":
        return this.host.exportCase(m.run, m.target);
      case "cancel":
        this.requests.get(m.requestId)?.abort();
        return;
      case "openSite":
        return this.openSite(m.run, m.file, m.line);
      case "openEvent":
        return this.openLine(path.join(m.run, "events.jsonl"), m.line);
      case "openBlob":
        return this.host.openBlob(m.run, m.ref);
      case "revealInTree":
        return this.host.revealInTree(m.run, m.seq);
      case "exportReport":
        return this.host.exportReport();
    }
  }

  private async request(m: Extract<WebviewToHost, { type: "runTest" | "findCause" | "checkFix" }>): Promise<void> {
    if (this.requests.has(m.requestId)) return;
    // the same cost question as the commands ask: a test of up to n-max pairs; Find the cause as
    // four tests of up to 80; a fix check as its harm test and one test a kept action, up to 160
    const asked =
      m.type === "runTest"
        ? await confirmCost(this.s, m.run, m.nMax ?? m.n ?? DEFAULT_N_MAX, vscode.l10n.t("This test"), 1, m.target)
        : m.type === "findCause"
          ? await confirmCost(this.s, m.run, 80, vscode.l10n.t("Find the cause"), 4, m.target)
          : await confirmCost(this.s, m.run, 160, vscode.l10n.t("Check a fix"), 1 + (m.keep?.length ?? 0), m.harm);
    if (!asked) {
      this.post({ type: "result", requestId: m.requestId, ok: false, error: vscode.l10n.t("not run: the cost was declined"), cancelled: true });
      return;
    }
    const ac = new AbortController();
    this.requests.set(m.requestId, ac);
    const onProgress = (p: { phase: string; done: number; total: number; message?: string }) =>
      this.post({ type: "progress", requestId: m.requestId, phase: p.phase, done: p.done, total: p.total, message: p.message });
    try {
      const out =
        m.type === "runTest"
          ? await this.replay.run(
              { op: "test", run: m.run, intervention: m.intervention, target: m.target, n: m.n, nMax: m.nMax },
              { title: vscode.l10n.t("Run test on {0}", path.basename(m.run)), signal: ac.signal, onProgress },
            )
          : m.type === "checkFix"
            ? await this.replay.run(
                { op: "fixCheck", run: m.run, fix: m.fix, harm: m.harm, keep: m.keep },
                { title: vscode.l10n.t("Check a fix in {0}", path.basename(m.run)), signal: ac.signal, onProgress },
              )
            : await this.replay.run(
                { op: "attribute", run: m.run, target: m.target, suspects: m.suspects },
                { title: vscode.l10n.t("Find the cause of {0} in {1}", m.target, path.basename(m.run)), signal: ac.signal, onProgress },
              );
      if (out.ok)
        this.post({
          type: "result",
          requestId: m.requestId,
          ok: true,
          kind: m.type === "runTest" ? "test" : m.type === "checkFix" ? "fixCheck" : "attribution",
          result: out.result,
        });
      else this.post({ type: "result", requestId: m.requestId, ok: false, error: out.error, cancelled: out.cancelled });
    } finally {
      this.requests.delete(m.requestId);
    }
  }

  private async openSite(run: string, file: string, line: number): Promise<void> {
    const program = this.s.store.get(run)?.analysis?.program ?? "";
    const hit = this.s.sites.resolve(file, run, program);
    if (!hit) {
      void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: {0} is not in this workspace.", file));
      return;
    }
    await this.openLine(hit.file, line);
  }

  private async openLine(file: string, line: number): Promise<void> {
    await vscode.commands.executeCommand(COMMANDS.openLine, file, line);
  }

  private disposePanel(): void {
    if (this.panel) {
      const p = this.panel;
      this.panel = undefined;
      for (const d of this.panelDisposables) d.dispose();
      this.panelDisposables = [];
      p.dispose();
    }
  }

  dispose(): void {
    clearTimeout(this.liveTimer);
    clearTimeout(this.workspaceTimer);
    this.disposePanel();
    for (const d of this.disposables) d.dispose();
  }
}
