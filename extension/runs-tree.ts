/**
 * The Runs view: runs (status, alert counts, program) → agents → events in order, tool calls
 * marked by alert severity, sensitive and blocked calls tagged, a failed run's problems listed
 * above its intact events. Items are plain text; clicking one reveals it in the investigator.
 */
import * as vscode from "vscode";
import path from "node:path";
import { nodeId } from "../core/graph/graph";
import type { LoadedEvent } from "../core/log/events";
import type { RunData } from "../core/log/reader";
import type { RunEntry, RunsChange } from "./logic/workspace-runs";
import {
  agentChildren,
  agentItem,
  compareRuns,
  folderItem,
  eventItem,
  nodeKey,
  parentOf,
  problemItem,
  problemsItem,
  remoteRunItem,
  runChildren,
  runItem,
  type ItemSpec,
  type RemoteRuns,
  type TreeNode,
} from "./logic/tree";
import type { EventRef, Services } from "./services";
import { COMMANDS, INTERNAL_COMMANDS } from "./logic/command-ids";

export const VIEW_ID = "causeway.runs";
/** Least time between two refreshes while many runs change (ms). */
const FULL_REFRESH_MS = 1000;
/** How often the view looks whether the analysis is over while no run changes (ms). */
const SETTLE_MS = 1000;
/** How long the analysis waits, once the first listing is sent, for the window to draw it (ms). */
const FIRST_DRAW_MS = 1000;
/**
 * The first listing of a long list of runs holds its first rows only (more than a window shows);
 * the rest follows a moment later. The window spent about half a second on a thousand rows before
 * it drew the first of them (a view of plain rows as much as ours: bench/control-tree).
 */
const FIRST_PAGE = 100;
/** How long after the first rows are sent the rest of the listing follows (ms). */
const REST_AFTER_MS = 300;

/** The rest of a first listing sent in part: `sent` resolves once the whole listing is sent. */
interface RestOfListing {
  sent: Promise<void>;
  markSent: () => void;
}

interface RunCache {
  version: number;
  analysis?: RunEntry["analysis"];
  run: RunData;
  bySeq: Map<number, LoadedEvent>;
  problemsByLine: Map<number, string[]>;
}

export class RunsTree implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private nodes = new Map<string, TreeNode>();
  private cache = new Map<string, RunCache>();
  private emitter = new vscode.EventEmitter<TreeNode | TreeNode[] | undefined | void>();
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<TreeNode>;
  private pending = new Set<string>();
  /** Runs are grouped under their folders (they live in more than one). */
  private grouped = false;
  /** What each folder's row last said. */
  private folderText = new Map<string, string | undefined>();
  private pendingRoot = false;
  /** When the whole tree was last refreshed (ms since epoch). */
  private lastFull = 0;
  private listedOnce = false;
  /** The first listing's items: how many were made, in how long (logged once they are sent). */
  private firstItems = { n: 0, ms: 0, logged: false };
  private markListed!: () => void;
  /** Resolves once the view's first listing of runs has been sent to the window. */
  readonly listed = new Promise<void>((r) => (this.markListed = r));
  private timer: ReturnType<typeof setTimeout> | undefined;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Runs were waiting for analysis at the last refresh. */
  private analysing = false;
  private disposables: vscode.Disposable[] = [];
  /** A collector's listed runs (extension/collector.ts), shown beside the store's until opened. */
  private remote: RemoteRuns | undefined;
  /** While set, the first listing waits for it (the runs known at start: see {@link waitForRuns}). */
  private startup: Promise<void> | undefined;
  /** The top-level items last sent to the window (a refresh that would send the same is skipped). */
  private sentRoot: readonly TreeNode[] | undefined;
  /** Whether the root must be sent even when its items are the same (a collector's rows changed). */
  private rootText = false;
  /** Set while the window holds the first rows only: resolves once the whole listing is sent. */
  private rest: RestOfListing | undefined;

  constructor(private s: Services) {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.emitter,
      s.store.onDidChange((c) => this.onStoreChange(c)),
    );
  }

  /** Shows a collector's listed runs; `onDidChange` fires when the listing changes. */
  setRemote(remote: RemoteRuns, onDidChange: vscode.Event<void>): void {
    this.remote = remote;
    this.disposables.push(onDidChange(() => this.onStoreChange({ added: [], removed: [], changed: [], listing: true })));
  }

  /**
   * The view's first listing waits until `runs` resolves (discovery's runs known at start: those
   * the last session found, or the first walk's), rather than answering "no runs" and then
   * listing them all again a moment later.
   */
  waitForRuns(runs: Promise<void>): void {
    const p = runs.then(() => {
      if (this.startup === p) this.startup = undefined;
    });
    this.startup = p;
  }

  private onStoreChange(c: RunsChange & { listing?: boolean }): void {
    if (c.listing) this.pendingRoot = this.rootText = true;
    if (c.added.length || c.removed.length) this.pendingRoot = true;
    for (const d of c.removed) {
      this.cache.delete(d);
      for (const [k, n] of [...this.nodes]) if (n.dir === d) this.nodes.delete(k);
    }
    for (const d of c.changed) {
      this.pending.add(d);
      this.cache.delete(d);
    }
    if (this.timer) return;
    // New or removed runs show at once. While many runs are being analysed (a workspace opening
    // with a thousand runs), the whole tree is refreshed at most once a second: a refresh every
    // few milliseconds kept the view re-fetching and re-rendering every run, and the first rows
    // came only once the analysis was over.
    const bulk = !this.pendingRoot && this.pending.size > 25;
    const wait = bulk ? Math.max(50, this.lastFull + FULL_REFRESH_MS - Date.now()) : 50;
    this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.timer = undefined;
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    const left = this.s.store.pending;
    // The analysis is over: the whole tree is sent once more, so every row ends with what it says
    // now. A row refreshed alone can be lost in the window: VS Code applies an item's refresh to
    // the row it has, and a listing of the row's parent answered just before (same message batch)
    // then replaces that row with its older copy. Seen on CI: every run analysed, their folder's
    // row still "8 runs" without its high alerts, and no later change to send it again.
    const settled = left === 0 && this.analysing;
    this.analysing = left > 0;
    if (this.pending.size > 25 || this.pendingRoot || settled) this.lastFull = Date.now();
    // runs added that the window was already sent (the last session's, found again by the walk)
    // need no new listing: a listing of a thousand runs costs the window half a second. (Grouped,
    // the folders' rows stay the same while their runs change: then the whole tree is sent.)
    let root = this.pendingRoot;
    if (root && !this.rootText && this.sentRoot) {
      const nodes = this.rootNodes();
      root = this.grouped || !sameNodes(this.sentRoot, nodes);
    }
    if (root || (settled && this.sentRoot)) this.emitter.fire();
    else if (this.pending.size) {
      // the changed runs, and (grouped) their folders' counts, in one event: the window asks for
      // those items only. (A refresh of the whole tree each second while a thousand runs were
      // analysed sent every row again, and the first rows came late.)
      const nodes: TreeNode[] = [];
      const folders = new Set<string>();
      for (const d of this.pending) {
        nodes.push(this.node({ kind: "run", dir: d }));
        if (this.grouped) folders.add(path.dirname(d));
      }
      // a folder's row is refreshed only when what it says changed (a refresh re-renders its runs)
      for (const f of folders) {
        const spec = this.spec({ kind: "folder", dir: f });
        if (spec && spec.description !== this.folderText.get(f)) nodes.push(this.node({ kind: "folder", dir: f }));
      }
      this.emitter.fire(nodes);
    }
    this.pending.clear();
    this.pendingRoot = this.rootText = false;
    this.view.message = left > 0 ? vscode.l10n.t("Reading runs… {0} left", left) : undefined;
    // runs whose last step changed nothing (a blob check that found no problem) send no change:
    // look again, so the count above moves and the end of the analysis is seen
    if (left > 0) this.settleTimer = setTimeout(() => (this.timer ? undefined : this.flush()), SETTLE_MS);
  }

  /** The one instance of a node (tree views track elements by identity). */
  node<T extends TreeNode>(n: T): T {
    const k = nodeKey(n);
    const hit = this.nodes.get(k);
    if (hit) return hit as T;
    this.nodes.set(k, n);
    return n;
  }

  /** The folders holding runs, each with its runs' folders (a collector's listed runs too). */
  private folders(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    const put = (dir: string) => {
      const d = path.dirname(dir);
      const list = m.get(d);
      if (list) list.push(dir);
      else m.set(d, [dir]);
    };
    for (const e of this.s.store.list()) put(e.dir);
    for (const dir of this.remote?.listed().keys() ?? []) if (!this.s.store.has(dir)) put(dir);
    return m;
  }

  private folderLabel(dir: string): string {
    if (this.remote && dir === this.remote.folder()) return this.remote.label();
    const root = this.s.sites.folderOf(dir);
    const multi = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
    if (!root) return dir;
    const rel = path.relative(root, dir) || ".";
    return multi ? path.join(path.basename(root), rel) : rel;
  }

  private runsIn(dirs: string[]): TreeNode[] {
    return dirs.sort((a, b) => compareRuns(path.basename(a), path.basename(b))).map((dir) => this.node({ kind: "run", dir }));
  }

  private runCache(dir: string): RunCache | undefined {
    const entry = this.s.store.get(dir);
    if (!entry) return undefined;
    const hit = this.cache.get(dir);
    // the analysis changes within a version when the background blob check finds a problem
    if (hit && hit.version === entry.version && hit.analysis === entry.analysis) return hit;
    const run = this.s.store.runData(dir);
    if (!run) return undefined;
    const problemsByLine = new Map<number, string[]>();
    for (const p of this.problemsOf(dir, run)) {
      if (p.line && p.severity === "error" && (p.file ?? "events.jsonl") === "events.jsonl")
        problemsByLine.set(p.line, [...(problemsByLine.get(p.line) ?? []), p.message]);
    }
    const c = { version: entry.version, analysis: entry.analysis, run, bySeq: new Map(run.events.map((e) => [e.seq, e])), problemsByLine };
    this.cache.set(dir, c);
    return c;
  }

  private problemsOf(dir: string, run: RunData) {
    const e = this.s.store.get(dir);
    if (e?.verified && e.verified.version === e.version) return e.verified.result.problems;
    // the analysis's problems include what the background blob check found
    return e?.analysis && e.analysedVersion === e.version ? e.analysis.problems : run.problems;
  }

  /** The top-level items: the runs, or (runs in more than one folder) their folders. */
  private rootNodes(): TreeNode[] {
    const folders = this.folders();
    this.grouped = folders.size > 1;
    if (this.grouped)
      return [...folders.keys()].sort((a, b) => compareRuns(this.folderLabel(a), this.folderLabel(b))).map((dir) => this.node({ kind: "folder", dir }));
    return this.runsIn([...folders.values()][0] ?? []);
  }

  getChildren(el?: TreeNode): TreeNode[] | Thenable<TreeNode[]> {
    try {
      if (!el) {
        if (this.startup) return this.startup.then(() => this.getChildren());
        let nodes = this.rootNodes();
        if (this.rest) {
          this.rest.markSent();
          this.rest = undefined;
          this.s.log.info(`Runs view: the whole listing sent, ${nodes.length} rows`);
        }
        let rest: RestOfListing | undefined;
        if (!this.listedOnce && nodes.length) {
          this.listedOnce = true;
          this.s.log.info(
            `Runs view: first listing, ${this.s.store.size} runs (${this.s.store.pending} not analysed yet; ${nodes.length > FIRST_PAGE ? `the first ${FIRST_PAGE} rows sent first; ` : ""}extension host up ${Math.round(process.uptime() * 1000)} ms)`,
          );
          if (nodes.length > FIRST_PAGE) {
            nodes = nodes.slice(0, FIRST_PAGE);
            let markSent!: () => void;
            rest = this.rest = { sent: new Promise<void>((r) => (markSent = r)), markSent };
          }
          // The analysis pauses while the window draws the rows: on a machine of two cores, the
          // analysis of a thousand runs took the core the window needed, and the rows came 1.5 s
          // after the listing was sent (0.4-1 s for a view that analyses nothing).
          const resume = this.s.store.pending ? this.s.store.hold() : undefined;
          // the items are made and sent once this returns (promises): resolve after that
          const t0 = performance.now();
          setTimeout(() => {
            this.firstItems.logged = true;
            this.s.log.info(
              `Runs view: ${this.firstItems.n} items made in ${this.firstItems.ms.toFixed(0)} ms, sent ${(performance.now() - t0).toFixed(0)} ms after the listing`,
            );
            this.markListed();
            if (resume) setTimeout(resume, FIRST_DRAW_MS);
            // the rest, once the window has had time to draw the first rows (unless a refresh of
            // the whole tree has sent it already)
            if (rest) setTimeout(() => this.rest === rest && this.emitter.fire(), REST_AFTER_MS);
          }, 0);
        }
        this.sentRoot = nodes;
        return nodes;
      }
      if (el.kind === "folder") return this.runsIn(this.folders().get(el.dir) ?? []);
      // a collector's run not opened yet: expanding it opens it (pulled, verified, cached)
      if (el.kind === "run" && !this.s.store.has(el.dir) && this.remote?.listed().has(el.dir))
        return this.remote.open(el.dir).then((ok) => (ok ? this.getChildren(el) : []));
      const c = this.runCache(el.dir);
      if (!c) return [];
      switch (el.kind) {
        case "run":
          return runChildren(el.dir, c.run, this.problemsOf(el.dir, c.run)).map((n) => this.node(n));
        case "agent":
          return agentChildren(el.dir, c.run, el.agent).map((n) => this.node(n));
        case "problems":
          return this.problemsOf(el.dir, c.run)
            .filter((p) => p.severity === "error" || p.line)
            .map((_, index) => this.node({ kind: "problem", dir: el.dir, index }));
        default:
          return [];
      }
    } catch (err) {
      this.s.log.error(`tree: ${(err as Error)?.stack ?? err}`);
      return [];
    }
  }

  getTreeItem(el: TreeNode): vscode.TreeItem {
    const t0 = this.listedOnce && !this.firstItems.logged ? performance.now() : 0;
    try {
      return this.treeItem(el);
    } finally {
      if (t0) {
        this.firstItems.n++;
        this.firstItems.ms += performance.now() - t0;
      }
    }
  }

  private treeItem(el: TreeNode): vscode.TreeItem {
    const spec = this.spec(el);
    if (el.kind === "folder") this.folderText.set(el.dir, spec?.description);
    return spec ? toItem(spec) : new vscode.TreeItem(vscode.l10n.t("(gone)"));
  }

  /**
   * The tooltip, asked for when the row is hovered: a listing of a thousand runs carried half a
   * megabyte of tooltips that the window decoded before it drew a row.
   */
  resolveTreeItem(item: vscode.TreeItem, el: TreeNode): vscode.TreeItem {
    try {
      item.tooltip = this.spec(el)?.tooltip;
    } catch (err) {
      this.s.log.error(`tree: ${(err as Error)?.stack ?? err}`);
    }
    return item;
  }

  private spec(el: TreeNode): ItemSpec | undefined {
    if (el.kind === "folder") {
      const dirs = this.folders().get(el.dir);
      if (!dirs) return undefined;
      const entries = dirs.map((d) => this.s.store.get(d)).filter((e): e is RunEntry => e !== undefined);
      return folderItem(el.dir, this.folderLabel(el.dir), entries, dirs.length - entries.length);
    }
    const entry = this.s.store.get(el.dir);
    if (!entry) {
      const row = el.kind === "run" ? this.remote?.listed().get(el.dir) : undefined;
      return row ? remoteRunItem(el.dir, row) : undefined;
    }
    if (el.kind === "run") {
      const multi = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
      return runItem(entry, { where: multi && !this.grouped ? path.basename(entry.root) : undefined });
    }
    const c = this.runCache(el.dir);
    if (!c) return undefined;
    const alerts = entry.analysis?.alerts ?? [];
    switch (el.kind) {
      case "agent":
        return agentItem(el.dir, c.run, el.agent, alerts);
      case "event": {
        const e = c.bySeq.get(el.seq);
        return e ? eventItem(el.dir, c.run, e, alerts, c.problemsByLine.get(e.line) ?? [], nodeId) : undefined;
      }
      case "problems": {
        const ps = this.problemsOf(el.dir, c.run);
        return problemsItem(el.dir, ps.filter((p) => p.severity === "error").length, ps.filter((p) => p.severity === "warning" && p.line).length);
      }
      case "problem": {
        const p = this.problemsOf(el.dir, c.run).filter((q) => q.severity === "error" || q.line)[el.index];
        return p ? problemItem(el.dir, el.index, p) : undefined;
      }
    }
  }

  getParent(el: TreeNode): TreeNode | undefined {
    if (el.kind === "run") return this.grouped ? this.node({ kind: "folder", dir: path.dirname(el.dir) }) : undefined;
    const p = parentOf(el);
    return p ? this.node(p) : undefined;
  }

  /** Selects a run, or one of its events, in the view. */
  async reveal(run: string, seq?: number): Promise<void> {
    const entry = this.s.store.get(run);
    if (!entry) return;
    // a run beyond the first rows is not in the window yet: the rest of the listing first
    if (this.rest) {
      const sent = this.rest.sent;
      this.emitter.fire();
      // a hidden view asks for it once shown: show it (revealing a row it has) before waiting
      const shown = this.sentRoot?.[0];
      if (!this.view.visible && shown) await this.view.reveal(shown, { select: false, focus: false });
      await sent;
    }
    let target: TreeNode = this.node({ kind: "run", dir: entry.dir });
    if (seq !== undefined) {
      const e = this.runCache(entry.dir)?.bySeq.get(seq);
      if (e) target = this.node({ kind: "event", dir: entry.dir, agent: String(e.agent), seq });
    }
    await this.view.reveal(target, { select: true, focus: true, expand: seq === undefined ? false : 1 });
  }

  /** The run and event of the current selection, if any. */
  selection(): EventRef | undefined {
    const el = this.view.selection[0];
    if (!el) return undefined;
    return { run: el.dir, seq: el.kind === "event" ? el.seq : undefined };
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.settleTimer);
    for (const d of this.disposables) d.dispose();
  }
}

/** The same items in the same order (nodes are single instances: see RunsTree.node). */
function sameNodes(a: readonly TreeNode[], b: readonly TreeNode[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

const COLLAPSIBLE = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
};

function toItem(spec: ItemSpec): vscode.TreeItem {
  const item = new vscode.TreeItem(spec.label, COLLAPSIBLE[spec.collapsible]);
  item.id = spec.id;
  item.description = spec.description;
  // the tooltip (a string: shown as plain text) is given on hover, by resolveTreeItem
  item.iconPath = new vscode.ThemeIcon(spec.icon.id, spec.icon.color ? new vscode.ThemeColor(spec.icon.color) : undefined);
  item.contextValue = spec.contextValue;
  if (spec.open?.kind === "reveal") {
    item.command = {
      command: COMMANDS.reveal,
      title: vscode.l10n.t("Open in investigator"),
      arguments: [{ run: spec.open.run, seq: spec.open.seq, node: spec.open.node, action: spec.open.action }],
    };
  } else if (spec.open?.kind === "remote") {
    item.command = { command: INTERNAL_COMMANDS.openCollectorRun, title: vscode.l10n.t("Open"), arguments: [spec.open.run] };
  } else if (spec.open?.kind === "line") {
    item.command = { command: COMMANDS.openLine, title: vscode.l10n.t("Open"), arguments: [spec.open.file, spec.open.line] };
  }
  return item;
}
