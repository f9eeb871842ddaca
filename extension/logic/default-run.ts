/**
 * The run the investigator opens when it is asked for none ("Open investigator"): the first run,
 * by folder, with a high alert, else the first analysed run. Asked before the background analysis
 * has found a run with a high alert, it waits: it names that run once it is known (or, once every
 * run is analysed and none has one, the first run), as a user who asked for the investigator
 * expects; until then the investigator shows its Runs list. vscode-free.
 */
import type { RunEntry } from "./workspace-runs";

/** What the choice reads of the run store. */
export interface KnownRuns {
  list(): readonly RunEntry[];
}

/** The default run among the runs analysed so far, and whether a later analysis can change it. */
export function defaultRunOf(runs: readonly RunEntry[]): { run: string | undefined; final: boolean } {
  const analysed = runs.filter((e) => e.analysis);
  const alerting = analysed.filter((e) => e.analysis!.summary.alerts.high > 0).sort((a, b) => a.dir.localeCompare(b.dir, undefined, { numeric: true }));
  if (alerting.length) return { run: alerting[0].dir, final: true };
  // a run not analysed yet (and not failed) may still have a high alert; no run found yet either
  const unread = runs.length === 0 || runs.some((e) => !e.analysis && e.error === undefined);
  return unread ? { run: undefined, final: false } : { run: analysed[0]?.dir, final: true };
}

/** The investigator's default run, with the wait for one asked for before it is known. */
export class DefaultRunChoice {
  private waiting = false;

  constructor(private readonly store: KnownRuns) {}

  /** Asked for now: the run to open, or undefined (then it waits, see {@link settle}). */
  ask(): string | undefined {
    const { run, final } = defaultRunOf(this.store.list());
    this.waiting = !final;
    return final ? run : undefined;
  }

  /** The run chosen without waiting (a restored panel: the user asked nothing now). */
  peek(): string | undefined {
    return defaultRunOf(this.store.list()).run;
  }

  /**
   * After the store changed: the run asked for earlier, once it is known (then the wait is over),
   * else undefined.
   */
  settle(): string | undefined {
    if (!this.waiting) return undefined;
    const { run, final } = defaultRunOf(this.store.list());
    if (!final) return undefined;
    this.waiting = false;
    return run;
  }

  /** The user chose a run (or closed the investigator): the wait is over. */
  cancel(): void {
    this.waiting = false;
  }

  get isWaiting(): boolean {
    return this.waiting;
  }
}
