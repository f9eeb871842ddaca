/**
 * Finding the run folders of a workspace folder with a walk of its directories, for discovery's
 * first listing. VS Code's findFiles (ripgrep) lists every file of the folder, the blobs of every
 * run included (thousands of files per run), before answering; this walk reads directories only,
 * and never enters a run's blobs folder, node_modules or .git. It is core's walk (core/log/run-dirs.ts)
 * run a few milliseconds at a time, yielding to the event loop in between: awaiting a readdir per
 * folder (the walk before) took 1.2–3.5 s for 1,000 runs on a busy extension host, where the
 * synchronous reads take 20–60 ms in all. vscode-free.
 */
import { RunDirWalk } from "../../core/log/run-dirs";
import { isUnderRunsGlob } from "./glob";

export interface FindRunsOptions {
  /** Longest stretch of reading before yielding to the event loop (ms). */
  sliceMs?: number;
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
  const { sliceMs = 8, maxDepth = 32, onRun, cancelled } = opts;
  const walk = new RunDirWalk(root, { maxDepth, onRun, accept: (dir) => isUnderRunsGlob(dir, root, runsGlob) });
  while (!cancelled?.() && !walk.step(sliceMs)) await new Promise((r) => setImmediate(r));
  return walk.found;
}
