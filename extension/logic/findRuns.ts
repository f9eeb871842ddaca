/**
 * Finding the run folders of a workspace folder with a walk of its directories, for discovery's
 * first listing. VS Code's findFiles (ripgrep) lists every file of the folder, the blobs of every
 * run included (thousands of files per run), before answering; this walk reads directories only,
 * and never enters a run's blobs folder, node_modules or .git. Directories are read a few at a
 * time with the promise API, so the extension host's event loop stays free meanwhile.
 * vscode-free.
 */
import fs from "node:fs";
import path from "node:path";
import { isUnderRunsGlob } from "./glob";

/** Folders never entered (runs inside node_modules are not the workspace's: isRunDirAllowed). */
const SKIP = new Set(["node_modules", ".git"]);

export interface FindRunsOptions {
  /** Directories read at once. */
  concurrency?: number;
  /** Deepest folder level entered below the root (a guard against symbolic link loops). */
  maxDepth?: number;
  /** Called with each run folder as it is found (before the walk ends). */
  onRun?: (dir: string) => void;
  /** True when the result is no longer wanted: the walk stops early. */
  cancelled?: () => boolean;
}

/**
 * Every folder under `root` (absolute) holding an events.jsonl that the runs glob accepts
 * (isUnderRunsGlob), in no particular order. Symbolic links to folders are followed once each.
 */
export async function findRunDirs(root: string, runsGlob: unknown, opts: FindRunsOptions = {}): Promise<string[]> {
  const { concurrency = 8, maxDepth = 32, onRun, cancelled } = opts;
  const found: string[] = [];
  const linked = new Set<string>();
  const queue: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  const visit = async (dir: string, depth: number): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      return; // gone, or not readable
    }
    const isRun = entries.some((e) => e.name === "events.jsonl" && !e.isDirectory()) && isUnderRunsGlob(dir, root, runsGlob);
    if (isRun) {
      found.push(dir);
      onRun?.(dir);
    }
    if (depth >= maxDepth) return;
    for (const e of entries) {
      if (SKIP.has(e.name) || (isRun && e.name === "blobs")) continue;
      const child = path.join(dir, e.name);
      if (e.isDirectory()) queue.push({ dir: child, depth: depth + 1 });
      else if (e.isSymbolicLink()) {
        try {
          const real = await fs.promises.realpath(child);
          if (linked.has(real) || !(await fs.promises.stat(real)).isDirectory()) continue;
          linked.add(real);
          queue.push({ dir: child, depth: depth + 1 });
        } catch {
          /* a dangling link */
        }
      }
    }
  };
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (cancelled?.()) return;
      await visit(next.dir, next.depth);
    }
  };
  // workers stop when the queue is empty: start again while others may still add to it
  while (queue.length && !cancelled?.()) {
    const n = Math.min(concurrency, queue.length);
    await Promise.all(Array.from({ length: n }, worker));
  }
  return found;
}
