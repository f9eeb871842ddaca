/**
 * Finding run folders (folders holding an events.jsonl) under a root by walking its directories:
 * the one walk behind `listRuns` (CLI, report, capture) and the extension's discovery. It reads
 * directories synchronously, a time budget at a time (`step`), so a caller on an event loop yields
 * between steps: a thousand awaited readdir calls took 1–3.5 s on a busy extension host, where the
 * same walk done synchronously takes tens of milliseconds.
 */
import fs from "node:fs";
import path from "node:path";

export interface RunWalkOptions {
  /** Deepest folder level entered below the root (also a guard against symbolic link loops). */
  maxDepth?: number;
  /** Folders never entered, by name (default: node_modules and .git). */
  skip?: (name: string) => boolean;
  /** Is this folder, which holds an events.jsonl, a run? (default: yes) */
  accept?: (dir: string) => boolean;
  /** Look for runs inside a run's folder too (never in its blobs folder). Default true. */
  nested?: boolean;
  /** Follow symbolic links to folders, each real folder once. Default true. */
  followLinks?: boolean;
  /** Called with each run folder as it is found. */
  onRun?: (dir: string) => void;
}

const DEFAULT_SKIP = new Set(["node_modules", ".git"]);

/** A walk of the folders under `root` (absolute), run a step at a time. */
export class RunDirWalk {
  /** The run folders found so far, in the order found. */
  readonly found: string[] = [];
  private queue: { dir: string; depth: number }[];
  private head = 0;
  private linked = new Set<string>();
  private o: Required<Omit<RunWalkOptions, "onRun" | "accept">> & Pick<RunWalkOptions, "onRun" | "accept">;

  constructor(
    private readonly root: string,
    opts: RunWalkOptions = {},
  ) {
    this.o = { maxDepth: 32, skip: (n) => DEFAULT_SKIP.has(n), nested: true, followLinks: true, ...opts };
    this.queue = [{ dir: root, depth: 0 }];
  }

  get done(): boolean {
    return this.head >= this.queue.length;
  }

  /** Reads folders until the walk is done or `budgetMs` has passed (at least one). True when done. */
  step(budgetMs = Infinity): boolean {
    const t0 = performance.now();
    while (!this.done) {
      const next = this.queue[this.head++];
      this.visit(next.dir, next.depth);
      if (performance.now() - t0 >= budgetMs) break;
    }
    if (this.done) this.queue = [];
    return this.done;
  }

  private visit(dir: string, depth: number): void {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // gone, or not readable
    }
    // a FIFO or a link named events.jsonl is a run too: reading it reports what it is
    const isRun = entries.some((e) => e.name === "events.jsonl" && !e.isDirectory()) && (this.o.accept?.(dir) ?? true);
    if (isRun) {
      this.found.push(dir);
      this.o.onRun?.(dir);
      if (!this.o.nested) return;
    }
    if (depth >= this.o.maxDepth) return;
    for (const e of entries) {
      if (this.o.skip(e.name) || (isRun && e.name === "blobs")) continue;
      const child = path.join(dir, e.name);
      if (e.isDirectory()) this.queue.push({ dir: child, depth: depth + 1 });
      else if (this.o.followLinks && e.isSymbolicLink()) {
        try {
          const real = fs.realpathSync(child);
          if (this.linked.has(real) || !fs.statSync(real).isDirectory()) continue;
          this.linked.add(real);
          this.queue.push({ dir: child, depth: depth + 1 });
        } catch {
          /* a dangling link */
        }
      }
    }
  }
}

/** Every run folder under `root`, walked at once (synchronously), sorted. */
export function listRunDirs(root: string, opts: RunWalkOptions = {}): string[] {
  const walk = new RunDirWalk(root, opts);
  walk.step();
  return walk.found.sort();
}

/**
 * Inode, size and modification time of a run's events.jsonl and tests.jsonl: the run changed when
 * this does (a file event after which it did not needs no re-read).
 */
export function runFilesStamp(dir: string): string {
  const one = (name: string) => {
    try {
      const st = fs.statSync(path.join(dir, name));
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return "-";
    }
  };
  return `${one("events.jsonl")}|${one("tests.jsonl")}`;
}
