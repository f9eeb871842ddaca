/**
 * Finding and watching runs: every folder holding an events.jsonl under the runs folders of each
 * workspace folder (the causeway.runsGlob setting; node_modules excluded). Found once at start,
 * then kept current by file-system watchers: a new events.jsonl adds a run, a change to
 * events.jsonl or tests.jsonl tails that run only, a deleted file or folder removes its runs.
 */
import * as vscode from "vscode";
import path from "node:path";
import fs from "node:fs";
import { eventsGlob, isInside, isUnderRunsGlob, runDirOfFile, runFilesGlob } from "./logic/glob";
import { findRunDirs } from "./logic/find-runs";
import { readRemembered, writeRemembered } from "./logic/remembered-runs";
import type { Services } from "./services";

/** When a new folder may become a run, look for its events.jsonl again after these delays (ms). */
const RECHECK_MS = [250, 1000, 3000, 10_000];
/** Runs being written are re-read this often even without a file event (ms). */
const LIVE_POLL_MS = 1000;

export class RunDiscovery implements vscode.Disposable {
  private watchers: vscode.Disposable[] = [];
  private candidates = new Map<string, ReturnType<typeof setTimeout>>();
  private livePoll: ReturnType<typeof setInterval> | undefined;
  private scannedOnce = false;
  private lastSessionListed = false;
  private scanning: Promise<void> | undefined;
  private generation = 0;
  /** Resolves when the first scan is done. */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  /**
   * Resolves when the store first holds the runs known at start: those the last session found
   * (still there), or, when none were remembered, those the first scan found.
   */
  readonly listed: Promise<void>;
  private markListed!: () => void;

  constructor(private s: Services) {
    this.ready = new Promise((r) => (this.markReady = r));
    this.listed = new Promise((r) => (this.markListed = r));
  }

  /** Scans and watches the current workspace folders with the current setting. */
  start(): Promise<void> {
    this.watch();
    this.livePoll ??= setInterval(() => {
      this.s.store.pollLive();
      this.scanRunFolders();
    }, LIVE_POLL_MS);
    return this.rescan();
  }

  private folders(): readonly vscode.WorkspaceFolder[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
  }

  private folderOf(p: string): vscode.WorkspaceFolder | undefined {
    let best: vscode.WorkspaceFolder | undefined;
    for (const f of this.folders()) if (isInside(p, f.uri.fsPath) && (!best || f.uri.fsPath.length > best.uri.fsPath.length)) best = f;
    return best;
  }

  /** Finds every run now; drops runs that are no longer under a runs folder. */
  rescan(): Promise<void> {
    const gen = ++this.generation;
    const t0 = Date.now();
    const run = async () => {
      if (!this.scannedOnce) this.listLastSession();
      const found = new Set<string>();
      const globs: string[] = [];
      for (const folder of this.folders()) {
        const runsGlob = this.s.settings(folder.uri.fsPath).runsGlob;
        const glob = eventsGlob(runsGlob);
        if (!globs.includes(glob)) globs.push(glob);
        // a walk of the folders (not findFiles, which lists every blob of every run first)
        const dirs = await findRunDirs(folder.uri.fsPath, runsGlob, { cancelled: () => gen !== this.generation });
        if (gen !== this.generation) return;
        for (const dir of dirs) {
          found.add(dir);
          this.s.store.add(dir, folder.uri.fsPath);
        }
        void this.remember(folder.uri.fsPath, runsGlob, dirs);
      }
      // runs cached from a collector (extension/collector.ts) are not the workspace's to drop
      const cache = path.join(this.s.context.globalStorageUri.fsPath, "collectors") + path.sep;
      this.s.store.retain((d) => found.has(d) || d.startsWith(cache));
      this.scannedOnce = true;
      this.s.log.info(`found ${found.size} run${found.size === 1 ? "" : "s"} in ${Date.now() - t0} ms (runs folders: ${globs.join(", ") || "no folder"})`);
    };
    this.scanning = run()
      .catch((err) => this.s.log.error(`finding runs failed: ${(err as Error)?.stack ?? err}`))
      .finally(() => {
        this.markListed();
        this.markReady();
      });
    return this.scanning;
  }

  /**
   * Lists at once the runs the last session found (those still there), once, and says how many: the walk of the
   * workspace corrects this listing when it ends (runs gone are dropped, new ones added). Called
   * from activate() itself, so that the Runs view's first request finds them (a timer after
   * activation ran a second or two late on a busy extension host, behind other extensions).
   */
  listLastSession(): number {
    if (this.lastSessionListed) return 0;
    this.lastSessionListed = true;
    const storage = this.storageDir();
    if (!storage) return 0;
    const t0 = Date.now();
    let n = 0;
    for (const folder of this.folders()) {
      const root = folder.uri.fsPath;
      for (const dir of readRemembered(storage, root, this.s.settings(root).runsGlob)) if (this.s.store.add(dir, root)) n++;
    }
    if (!n) return 0;
    this.s.log.info(
      `listed ${n} run${n === 1 ? "" : "s"} found by the last session in ${Date.now() - t0} ms (extension host up ${Math.round(process.uptime() * 1000)} ms)`,
    );
    this.markListed();
    return n;
  }

  /** Where the run folders found are remembered (the extension's global storage: see logic/remembered-runs.ts). */
  private storageDir(): string | undefined {
    const dir = this.s.context.globalStorageUri;
    return dir.scheme === "file" ? dir.fsPath : undefined;
  }

  private async remember(folder: string, runsGlob: string, dirs: readonly string[]): Promise<void> {
    const storage = this.storageDir();
    if (!storage) return;
    try {
      await writeRemembered(storage, folder, runsGlob, dirs);
    } catch (err) {
      this.s.log.warn(`could not remember the runs found: ${(err as Error).message}`);
    }
  }

  private watch(): void {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    for (const folder of this.folders()) {
      const glob = runFilesGlob(this.s.settings(folder.uri.fsPath).runsGlob);
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, glob));
      const changed = (uri: vscode.Uri) => this.fileChanged(uri, folder);
      // A folder deleted with its runs arrives as one event for the folder; a run folder created
      // with its blobs may have its events.jsonl's creation event coalesced away: watch every
      // creation and deletion, and keep each handler cheap.
      const d = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, "**"), false, true, false);
      this.watchers.push(
        w,
        d,
        w.onDidCreate(changed),
        w.onDidChange(changed),
        w.onDidDelete(changed),
        d.onDidCreate((uri) => this.created(uri, folder)),
        d.onDidDelete((uri) => {
          const gone = this.s.store.removeUnder(uri.fsPath);
          if (gone.length) this.s.log.debug(`removed ${gone.length} run(s) under ${uri.fsPath}`);
        }),
      );
    }
  }

  /**
   * Looks for new runs in the folders that already hold runs (a readdir each): a new run there
   * shows within a poll interval even when the file watcher is slow or drops the event.
   */
  private scanRunFolders(): void {
    if (!this.scannedOnce) return;
    const parents = new Map<string, string>();
    for (const e of this.s.store.list()) parents.set(path.dirname(e.dir), e.root);
    for (const [parent, root] of parents) {
      let names: fs.Dirent[];
      try {
        names = fs.readdirSync(parent, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const n of names) {
        if (!n.isDirectory() || n.name === "node_modules" || n.name === "blobs" || n.name.startsWith(".")) continue;
        const dir = path.join(parent, n.name);
        if (this.s.store.has(dir) || !fs.existsSync(path.join(dir, "events.jsonl"))) continue;
        if (this.s.store.add(dir, root, true)) this.s.log.info(`new run ${dir}`);
      }
    }
  }

  /** Something was created: if it may belong to a new run folder, look for that run's events.jsonl. */
  private created(uri: vscode.Uri, folder: vscode.WorkspaceFolder): void {
    if (uri.scheme !== "file") return;
    const p = uri.fsPath;
    const base = path.basename(p);
    if (base === "events.jsonl" || base === "tests.jsonl") return this.fileChanged(uri, folder);
    // a blob of a new run (runs/x/blobs/h.json), a new run folder (runs/x), or a file in one
    const dir = path.basename(path.dirname(p)) === "blobs" ? path.dirname(path.dirname(p)) : base.includes(".") ? path.dirname(p) : p;
    if (this.s.store.has(dir) || this.candidates.has(dir)) return;
    if (!isUnderRunsGlob(dir, folder.uri.fsPath, this.s.settings(folder.uri.fsPath).runsGlob)) return;
    this.recheck(dir, folder, 0);
  }

  private recheck(dir: string, folder: vscode.WorkspaceFolder, attempt: number): void {
    this.candidates.set(
      dir,
      setTimeout(() => {
        this.candidates.delete(dir);
        if (this.s.store.has(dir)) return;
        if (fs.existsSync(path.join(dir, "events.jsonl"))) {
          if (this.s.store.add(dir, folder.uri.fsPath, true)) this.s.log.info(`new run ${dir}`);
        } else if (attempt + 1 < RECHECK_MS.length && fs.existsSync(dir)) this.recheck(dir, folder, attempt + 1);
      }, RECHECK_MS[attempt]),
    );
  }

  private fileChanged(uri: vscode.Uri, folder: vscode.WorkspaceFolder): void {
    if (uri.scheme !== "file") return;
    const hit = runDirOfFile(uri.fsPath);
    if (!hit) return;
    const store = this.s.store;
    if (store.has(hit.dir)) store.touch(hit.dir);
    else if (hit.kind === "events" && this.folderOf(hit.dir)?.uri.fsPath === folder.uri.fsPath) {
      if (store.add(hit.dir, folder.uri.fsPath, true)) this.s.log.info(`new run ${hit.dir}`);
    }
  }

  /** Settings or workspace folders changed: watch and scan again. */
  restart(): void {
    this.watch();
    void this.rescan();
  }

  dispose(): void {
    this.generation++;
    clearInterval(this.livePoll);
    for (const t of this.candidates.values()) clearTimeout(t);
    this.candidates.clear();
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
  }
}
