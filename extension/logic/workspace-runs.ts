/**
 * The runs of the workspace and what is known about each. Runs are added by discovery and the file
 * watchers; a changed run is tailed (only its appended bytes are read) after a short per-run
 * debounce; analysis happens in small time slices off the caller's path, changed and requested
 * runs first (analysis-queue.ts), so a workspace with a thousand runs stays responsive. Events
 * read are kept for a bounded number of finished runs (re-read on demand); summaries and alerts are
 * kept for all; the blobs events name are checked in the background (run-blob-check.ts).
 * vscode-free: the extension wires it to watchers and views.
 */
import fs from "node:fs";
import path from "node:path";
import { BlobStore } from "../../core/log/blobs";
import { readRun, runDataFromParser, type RunData } from "../../core/log/reader";
import { RunTail } from "../../core/log/tail";
import { verifyRun, type VerifyResult } from "../../core/log/verify";
import { investigate } from "../../core/analysis/investigate";
import type { Investigation } from "../../core/analysis/types";
import { analyseRun, type RunAnalysis } from "./analysis";
import type { LoadedEvent } from "../../core/log/events";
import { Emitter } from "./emitter";
import { AnalysisQueue } from "./analysis-queue";
import { blobProblems, blobsPending, checkBlobsStep, type BlobCheck } from "./run-blob-check";
import { isInside } from "./glob";
import { runFilesStamp } from "../../core/log/run-dirs";

export interface RunEntry {
  /** The run folder (absolute): the key everywhere, also in the webview protocol. */
  readonly dir: string;
  /** The workspace folder holding the run (the root replays resolve programs against). */
  readonly root: string;
  /** Bumped on every change of events.jsonl or tests.jsonl. */
  version: number;
  analysis?: RunAnalysis;
  analysedVersion: number;
  /** The last analysis failed (a bug, or an unreadable run): why. */
  error?: string;
  /** A verify (blobs checked) of this version. */
  verified?: { version: number; result: VerifyResult };
}

interface Internal extends RunEntry {
  tail?: RunTail;
  blobs?: BlobStore;
  /** When events.jsonl last grew (ms since epoch; its mtime at the first read). */
  lastGrowth: number;
  lastUse: number;
  timer?: ReturnType<typeof setTimeout>;
  settleTimer?: ReturnType<typeof setTimeout>;
  /** The background blob check (see {@link checkBlobsStep}). */
  blobCheck?: BlobCheck;
  /** events.jsonl and tests.jsonl as the current version read them (see {@link runFilesStamp}). */
  stamp?: string;
}

export interface RunsChange {
  added: string[];
  removed: string[];
  /** Runs whose analysis (or content) changed. */
  changed: string[];
}

export interface WorkspaceRunsOptions {
  /** Per-run debounce of file events (ms). */
  debounceMs?: number;
  /** A run whose last line is partial and has not grown for this long was cut off (ms). */
  settleMs?: number;
  /** Longest analysis slice before yielding to the event loop (ms). */
  sliceMs?: number;
  /** Finished runs whose events stay in memory. */
  maxTails?: number;
  /** Investigations kept. */
  maxInvestigations?: number;
  now?: () => number;
  /** Where analysis failures and timings go. */
  log?: (level: "info" | "warn" | "error", msg: string) => void;
}

export class WorkspaceRuns {
  private runs = new Map<string, Internal>();
  /** Runs whose tail (events read) is in memory. */
  private held = new Set<string>();
  private invCache = new Map<string, { version: number; inv: Investigation }>();
  private batch: RunsChange = { added: [], removed: [], changed: [] };
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private readonly o: Required<Omit<WorkspaceRunsOptions, "log">> & Pick<WorkspaceRunsOptions, "log">;
  private readonly changeEmitter = new Emitter<RunsChange>();
  /** Fires (coalesced, at most every few ms) when runs were added, removed or re-analysed. */
  readonly onDidChange = this.changeEmitter.event;
  /** Totals: how many analyses ran and how long they took (ms), and the longest slice. */
  readonly stats = { analyses: 0, analysisMs: 0, slices: 0, longestSliceMs: 0, slicesOver50ms: 0, tailBytes: 0 };
  private readonly queue: AnalysisQueue;

  constructor(opts: WorkspaceRunsOptions = {}) {
    this.queue = new AnalysisQueue({
      sliceMs: opts.sliceMs ?? 12,
      step: (dir) => this.analyseQueued(dir),
      sliceDone: () => this.flush(),
      held: () => this.scheduleFlush(),
      stats: this.stats,
    });
    this.o = {
      debounceMs: opts.debounceMs ?? 30,
      settleMs: opts.settleMs ?? 2000,
      sliceMs: opts.sliceMs ?? 12,
      maxTails: opts.maxTails ?? 48,
      maxInvestigations: opts.maxInvestigations ?? 6,
      now: opts.now ?? Date.now,
      log: opts.log,
    };
  }

  // ------------------------------------------------------------------ membership

  /** Adds a run folder (idempotent). Its analysis is queued (first when `urgent`), not done now. */
  add(dir: string, root: string, urgent = false): boolean {
    dir = path.resolve(dir);
    if (this.disposed || this.runs.has(dir)) return false;
    this.runs.set(dir, { dir, root, version: 1, analysedVersion: 0, lastGrowth: 0, lastUse: 0 });
    this.batch.added.push(dir);
    this.enqueue(dir, urgent);
    return true;
  }

  remove(dir: string): boolean {
    dir = path.resolve(dir);
    const e = this.runs.get(dir);
    if (!e) return false;
    clearTimeout(e.timer);
    clearTimeout(e.settleTimer);
    this.runs.delete(dir);
    this.held.delete(dir);
    this.queue.drop(dir);
    this.invCache.delete(dir);
    this.batch.removed.push(dir);
    this.scheduleFlush();
    return true;
  }

  /** A file or folder was deleted: drop the runs it held. */
  removeUnder(p: string): string[] {
    p = path.resolve(p);
    const gone = [...this.runs.keys()].filter((d) => isInside(d, p));
    for (const d of gone) this.remove(d);
    return gone;
  }

  /** Keeps only the runs `keep` says yes to (a settings change, a removed workspace folder). */
  retain(keep: (dir: string) => boolean): void {
    for (const d of [...this.runs.keys()]) if (!keep(d)) this.remove(d);
  }

  has(dir: string): boolean {
    return this.runs.has(path.resolve(dir));
  }
  get(dir: string): RunEntry | undefined {
    return this.runs.get(path.resolve(dir));
  }
  list(): RunEntry[] {
    return [...this.runs.values()];
  }
  get size(): number {
    return this.runs.size;
  }
  /** Runs waiting for analysis. */
  get pending(): number {
    return this.queue.pending;
  }

  // ------------------------------------------------------------------ changes

  /**
   * events.jsonl or tests.jsonl of the run changed (or was created): re-read after a debounce,
   * unless neither file changed since it was last read (a late or repeated file event: re-reading
   * then made a new version, and the Runs view refreshed the run's row and its children for it).
   */
  touch(dir: string): void {
    const e = this.runs.get(path.resolve(dir));
    if (!e || this.disposed) return;
    clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = undefined;
      if (e.stamp === undefined || e.stamp !== runFilesStamp(e.dir)) this.refresh(e.dir);
    }, this.o.debounceMs);
  }

  /**
   * Re-reads runs still being written (no run.end yet, grown in the last `withinMs`) whose file
   * size changed: a file event the watcher missed then costs one interval, not the update.
   */
  pollLive(withinMs = 5 * 60_000): number {
    let n = 0;
    for (const e of this.runs.values()) {
      if (!e.tail || e.timer || e.analysis?.summary.status !== "running" || this.o.now() - e.lastGrowth > withinMs) continue;
      let size: number;
      try {
        size = fs.statSync(e.tail.file).size;
      } catch {
        size = -1;
      }
      if (size !== e.tail.position) {
        this.refresh(e.dir);
        n++;
      }
    }
    return n;
  }

  /** Reads what changed now: the appended bytes of events.jsonl, and queues the run first. */
  refresh(dir: string): void {
    const e = this.runs.get(path.resolve(dir));
    if (!e || this.disposed) return;
    if (!fs.existsSync(path.join(e.dir, "events.jsonl"))) {
      this.remove(e.dir);
      return;
    }
    // taken before the read: a write after it is seen as a change by the next touch
    e.stamp = runFilesStamp(e.dir);
    if (e.tail) this.poll(e);
    e.version++;
    this.enqueue(e.dir, true);
  }

  private poll(e: Internal): void {
    const u = e.tail!.poll();
    this.stats.tailBytes += u.bytesRead;
    if (u.reset) e.blobs = new BlobStore(e.dir);
    if (u.bytesRead > 0) e.lastGrowth = this.o.now();
    this.watchSettle(e);
  }

  /** A partial last line: look again once it has had time to settle (written, or cut off). */
  private watchSettle(e: Internal): void {
    clearTimeout(e.settleTimer);
    if (!e.tail?.parser.hasPartialLine || this.disposed) return;
    const wait = Math.max(10, e.lastGrowth + this.o.settleMs - this.o.now() + 5);
    e.settleTimer = setTimeout(() => {
      e.settleTimer = undefined;
      if (!this.runs.has(e.dir) || !e.tail?.parser.hasPartialLine) return;
      if (this.settled(e)) {
        e.version++;
        this.enqueue(e.dir, true);
      } else this.watchSettle(e);
    }, wait);
  }

  private settled(e: Internal): boolean {
    return this.o.now() - e.lastGrowth >= this.o.settleMs;
  }

  // ------------------------------------------------------------------ reading

  private ensureTail(e: Internal): RunTail {
    if (!e.tail) {
      e.tail = new RunTail(e.dir);
      this.held.add(e.dir);
      e.blobs = new BlobStore(e.dir);
      let mtime = this.o.now();
      try {
        mtime = fs.statSync(e.tail.file).mtimeMs;
      } catch {
        /* gone: the poll reads nothing */
      }
      const u = e.tail.poll();
      this.stats.tailBytes += u.bytesRead;
      e.lastGrowth = Math.min(mtime, this.o.now());
      this.watchSettle(e);
    }
    e.lastUse = this.o.now();
    return e.tail;
  }

  /**
   * The run as read so far. A run whose last line is partial and has stopped growing is read in
   * full, so its cut-off line is reported as the reader reports it.
   */
  runData(dir: string): RunData | undefined {
    const e = this.runs.get(path.resolve(dir));
    if (!e) return undefined;
    const tail = this.ensureTail(e);
    if (tail.parser.hasPartialLine && this.settled(e)) return readRun(e.dir);
    return runDataFromParser(e.dir, tail.parser, e.blobs);
  }

  /** The latest analysis, computing it now when it is missing or stale. */
  analyse(dir: string): RunAnalysis | undefined {
    const e = this.runs.get(path.resolve(dir));
    if (!e) return undefined;
    const fresh = e.analysis && e.analysedVersion === e.version;
    if (fresh && !this.blobsPending(e)) return e.analysis;
    const version = e.version;
    // what the first version reflects (later versions: refresh); taken before the read
    e.stamp ??= runFilesStamp(e.dir);
    try {
      const before = e.blobCheck ? blobProblems(e.blobCheck).length : 0;
      if (fresh) {
        // the analysis stands; only blobs are left to check (without re-reading evicted events)
        this.checkBlobsStep(e, e.tail ? e.tail.parser.events : [], e.blobs ?? new BlobStore(e.dir));
        if (blobProblems(e.blobCheck).length === before) {
          this.queue.dropBackground(e.dir);
          if (this.blobsPending(e)) this.enqueue(e.dir, false);
          return e.analysis;
        }
      }
      let run = this.runData(e.dir)!;
      if (!fresh) this.checkBlobsStep(e, run.events, run.blobs);
      const found = blobProblems(e.blobCheck);
      if (found.length) run = { ...run, problems: [...run.problems, ...found] };
      const a = analyseRun(run);
      this.stats.analyses++;
      this.stats.analysisMs += a.ms;
      e.analysis = a;
      e.error = undefined;
    } catch (err) {
      e.error = (err as Error)?.stack ?? String(err);
      this.o.log?.("error", `analysing ${e.dir} failed: ${e.error}`);
    }
    e.analysedVersion = version;
    this.queue.drop(e.dir);
    if (this.blobsPending(e)) this.enqueue(e.dir, false); // more blobs to check, in a later slice
    this.evict();
    return e.analysis;
  }

  /** Blobs of this run still to check. */
  private blobsPending(e: Internal): boolean {
    return blobsPending(e.blobCheck, e.tail?.parser.events.length);
  }

  /** Checks the blobs named by events not yet scanned, for at most one slice's time. */
  private checkBlobsStep(e: Internal, events: readonly LoadedEvent[], store: BlobStore): void {
    e.blobCheck = checkBlobsStep(e.blobCheck, events, store, this.o.sliceMs);
  }

  /** The full investigation of a run (for the investigator and the commands), cached per version. */
  investigation(dir: string): Investigation | undefined {
    const e = this.runs.get(path.resolve(dir));
    if (!e) return undefined;
    const hit = this.invCache.get(e.dir);
    if (hit && hit.version === e.version) return hit.inv;
    let run = this.runData(e.dir)!;
    const found = blobProblems(e.blobCheck);
    if (found.length) run = { ...run, problems: [...run.problems, ...found] };
    const inv = investigate(run);
    this.invCache.delete(e.dir);
    this.invCache.set(e.dir, { version: e.version, inv });
    while (this.invCache.size > this.o.maxInvestigations) this.invCache.delete(this.invCache.keys().next().value!);
    return inv;
  }

  /** Verifies the run with every blob checked; the result is kept for this version. */
  verify(dir: string): VerifyResult | undefined {
    const e = this.runs.get(path.resolve(dir));
    if (!e) return undefined;
    const result = verifyRun(e.dir);
    e.verified = { version: e.version, result };
    // blobs may have been repaired (or damaged) since the background check: check them again
    e.blobCheck = undefined;
    e.blobs?.forget();
    e.analysedVersion = 0;
    this.enqueue(e.dir, true);
    this.batch.changed.push(e.dir);
    this.scheduleFlush();
    return result;
  }

  /** Drops the events of the least recently used finished runs beyond the limit. */
  private evict(): void {
    if (this.held.size <= this.o.maxTails) return;
    const candidates = [...this.held]
      .map((d) => this.runs.get(d)!)
      .filter((e) => e?.tail && e.analysis?.summary.status !== "running" && !e.tail.parser.hasPartialLine);
    if (candidates.length <= this.o.maxTails) return;
    candidates.sort((a, b) => a.lastUse - b.lastUse);
    // drop down to three quarters of the limit, so that eviction runs once per many analyses
    for (const e of candidates.slice(0, candidates.length - Math.floor(this.o.maxTails * 0.75))) {
      e.tail = undefined;
      e.blobs = undefined;
      this.held.delete(e.dir);
    }
  }

  /** Runs whose events are in memory (for tests and the status line). */
  get tailsHeld(): number {
    return this.held.size;
  }

  // ------------------------------------------------------------------ the analysis queue

  /** Queues a run for analysis; `urgent` runs (changed, asked for) go first. */
  enqueue(dir: string, urgent: boolean): void {
    this.queue.enqueue(dir, urgent);
  }

  /**
   * Holds the background analysis (not urgent runs: a changed or asked-for run is still analysed)
   * until the returned function is called: while the Runs view lists a thousand runs for the first
   * time, analysis slices back to back kept the extension host busy and the listing waited.
   * Added and removed runs are still announced.
   */
  hold(): () => void {
    return this.queue.hold();
  }

  /** One queued run, in a slice: analysed unless already current, and announced if that changed anything. */
  private analyseQueued(dir: string): void {
    const e = this.runs.get(dir);
    if (!e || (e.analysis && e.analysedVersion === e.version && !this.blobsPending(e))) return;
    const before = { analysis: e.analysis, version: e.analysedVersion, error: e.error };
    this.analyse(dir);
    // a blob-check step that found nothing changes nothing: announcing it refreshed the run's
    // row in the Runs view, and re-fetched its children, for nothing
    if (e.analysis !== before.analysis || e.analysedVersion !== before.version || e.error !== before.error) this.batch.changed.push(dir);
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.disposed) return;
    this.flushTimer = setTimeout(() => this.flush(), 0);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const b = this.batch;
    if (!b.added.length && !b.removed.length && !b.changed.length) return;
    this.batch = { added: [], removed: [], changed: [] };
    const uniq = (xs: string[]) => [...new Set(xs)];
    this.changeEmitter.fire({ added: uniq(b.added), removed: uniq(b.removed), changed: uniq(b.changed).filter((d) => this.runs.has(d)) });
  }

  /** Resolves once nothing is queued (tests, the scale benchmark). */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.pending === 0 && !this.queue.busy ? resolve() : setTimeout(check, 5));
      check();
    });
  }

  dispose(): void {
    this.disposed = true;
    this.queue.dispose();
    clearTimeout(this.flushTimer);
    for (const e of this.runs.values()) {
      clearTimeout(e.timer);
      clearTimeout(e.settleTimer);
    }
    this.runs.clear();
    this.held.clear();
    this.changeEmitter.dispose();
  }
}
