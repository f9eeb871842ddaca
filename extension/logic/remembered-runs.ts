/**
 * The run folders discovery found last time, remembered per workspace folder and runs glob, so
 * that the next window lists them at once (the Runs view's rows from the first listing) while the
 * walk of the workspace checks them. Kept in a file of our own under the extension's global
 * storage, one per workspace folder and glob: a window's workspace storage (and its Memento) is
 * locked by the window that has it, and a second window on the same folder (code-server keeps a
 * closed window's extension host for hours) gets a fresh, empty storage folder. The file is ours
 * but read as untrusted: only relative folder names inside the workspace folder that still exist
 * are listed. vscode-free.
 */
import fs from "node:fs";
import path from "node:path";
import { sha256Hex } from "../../core/log/hash";
import { isInside } from "./glob";

/** Most run folders remembered per workspace folder. */
export const MAX_REMEMBERED = 20_000;

interface Remembered {
  folder: string;
  runsGlob: string;
  dirs: string[];
}

/** The file remembering the runs of `folder` found with `runsGlob`, under `storageDir`. */
export function rememberedFile(storageDir: string, folder: string, runsGlob: string): string {
  return path.join(storageDir, "run-folders", `${sha256Hex(`${folder}\0${runsGlob}`).slice(0, 24)}.json`);
}

/**
 * The run folders (absolute) remembered for `folder` and `runsGlob` that are still there; none
 * when nothing was remembered or the file is unreadable or not ours.
 */
export function readRemembered(storageDir: string, folder: string, runsGlob: string): string[] {
  let data: Partial<Remembered>;
  try {
    data = JSON.parse(fs.readFileSync(rememberedFile(storageDir, folder, runsGlob), "utf8")) as Partial<Remembered>;
  } catch {
    return []; // none yet, or unreadable: the walk lists the runs
  }
  if (!data || data.folder !== folder || data.runsGlob !== runsGlob || !Array.isArray(data.dirs)) return [];
  // a run deleted since is not listed: one readdir per folder of runs (a stat per run took a second
  // for a thousand runs on a busy extension host); a run folder left without its events.jsonl is
  // listed as being read until the walk drops it
  const names = new Map<string, Set<string>>();
  const inParent = (dir: string) => {
    const parent = path.dirname(dir);
    let set = names.get(parent);
    if (!set) {
      try {
        set = new Set(fs.readdirSync(parent));
      } catch {
        set = new Set();
      }
      names.set(parent, set);
    }
    return set.has(path.basename(dir));
  };
  const out: string[] = [];
  for (const rel of data.dirs.slice(0, MAX_REMEMBERED)) {
    if (typeof rel !== "string" || path.isAbsolute(rel)) continue;
    const dir = path.resolve(folder, rel);
    if (isInside(dir, folder) && inParent(dir)) out.push(dir);
  }
  return out;
}

/** Remembers the run folders (absolute, inside `folder`) found for `folder` and `runsGlob`. */
export async function writeRemembered(storageDir: string, folder: string, runsGlob: string, dirs: readonly string[]): Promise<void> {
  const file = rememberedFile(storageDir, folder, runsGlob);
  const data: Remembered = { folder, runsGlob, dirs: dirs.slice(0, MAX_REMEMBERED).map((d) => path.relative(folder, d)) };
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  // write then rename: another window on the same folder may be reading it
  const tmp = `${file}.tmp-${process.pid}`;
  await fs.promises.writeFile(tmp, JSON.stringify(data));
  await fs.promises.rename(tmp, file);
}
