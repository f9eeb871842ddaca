/**
 * The queue of runs waiting for analysis, worked off in small time slices off the caller's path:
 * changed and asked-for runs (urgent) first, the rest in the background unless held. Each slice
 * runs after pending I/O (messages from the UI) has been handled. vscode-free.
 */

/** Totals of the slices run (the scale benchmark and the status line read them). */
export interface SliceStats {
  slices: number;
  longestSliceMs: number;
  slicesOver50ms: number;
}

export interface AnalysisQueueOptions {
  /** Longest slice before yielding to the event loop (ms). */
  sliceMs: number;
  /** Analyses one queued run (it may queue it again, e.g. with blobs left to check). */
  step: (dir: string) => void;
  /** After each slice: announce what changed. */
  sliceDone: () => void;
  /** Held with nothing urgent: announce added and removed runs all the same. */
  held: () => void;
  stats: SliceStats;
}

export class AnalysisQueue {
  private readonly queue = new Set<string>();
  private readonly urgent = new Set<string>();
  private pumping: ReturnType<typeof setImmediate> | undefined;
  /** Holds on the background analysis (see {@link AnalysisQueue.hold}). */
  private holds = 0;
  private disposed = false;

  constructor(private readonly o: AnalysisQueueOptions) {}

  /** Runs waiting. */
  get pending(): number {
    return this.queue.size + this.urgent.size;
  }

  /** Whether a slice is scheduled. */
  get busy(): boolean {
    return this.pumping !== undefined;
  }

  /** Queues a run; `urgent` runs (changed, asked for) go first. */
  enqueue(dir: string, urgent: boolean): void {
    if (urgent) {
      this.queue.delete(dir);
      this.urgent.add(dir);
    } else if (!this.urgent.has(dir)) this.queue.add(dir);
    this.pump();
  }

  /** Takes a run off the background queue (an urgent one stays). */
  dropBackground(dir: string): void {
    this.queue.delete(dir);
  }

  /** Takes a run off the queue. */
  drop(dir: string): void {
    this.queue.delete(dir);
    this.urgent.delete(dir);
  }

  /**
   * Holds the background analysis (not urgent runs: a changed or asked-for run is still analysed)
   * until the returned function is called.
   */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.pump();
    };
  }

  private pump(): void {
    if (this.holds > 0 && !this.urgent.size) {
      this.o.held();
      return;
    }
    if (this.pumping || this.disposed) return;
    this.pumping = setImmediate(() => this.slice());
  }

  private slice(): void {
    this.pumping = undefined;
    if (this.disposed) return;
    const t0 = performance.now();
    while (this.urgent.size || (this.queue.size && this.holds === 0)) {
      const dir = (this.urgent.size ? this.urgent : this.queue).values().next().value!;
      this.urgent.delete(dir);
      this.queue.delete(dir);
      this.o.step(dir);
      if (performance.now() - t0 >= this.o.sliceMs) break;
    }
    const took = performance.now() - t0;
    const stats = this.o.stats;
    stats.slices++;
    stats.longestSliceMs = Math.max(stats.longestSliceMs, took);
    if (took > 50) stats.slicesOver50ms++;
    this.o.sliceDone();
    if (this.urgent.size || (this.queue.size && this.holds === 0)) this.pump();
  }

  dispose(): void {
    this.disposed = true;
    if (this.pumping) clearImmediate(this.pumping);
  }
}
