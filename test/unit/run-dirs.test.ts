import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { RunDirWalk } from "../../core/log/run-dirs";
import { listRuns } from "../../core/analysis/influence";
import { findRunDirs } from "../../extension/logic/find-runs";

const tmps: string[] = [];
afterEach(() => {
  for (const d of tmps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function workspace(files: string[]): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "rundirs-"));
  tmps.push(root);
  for (const f of files) {
    fs.mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), "{}\n");
  }
  return root;
}

const rel = (root: string, dirs: string[]) => dirs.map((d) => path.relative(root, d) || ".").sort();

describe("the run-folder walk shared by listRuns and the extension's discovery", () => {
  it("listRuns: sorted, no runs inside runs, no dot-folders, node_modules or blobs, depth 4, links not followed", () => {
    const root = workspace([
      "b/events.jsonl",
      "a/events.jsonl",
      "a/sub/events.jsonl", // inside a run: not listed
      ".hidden/r/events.jsonl",
      "node_modules/p/events.jsonl",
      "x/blobs/r/events.jsonl",
      "1/2/3/4/events.jsonl",
      "1/2/3/4/5/events.jsonl", // deeper than 4
    ]);
    fs.symlinkSync(path.join(root, "a"), path.join(root, "link"), "dir");
    expect(rel(root, listRuns(root))).toEqual(["1/2/3/4", "a", "b"]);
    expect(listRuns(root)).toEqual([...listRuns(root)].sort());
    // a root that is itself a run is listed alone
    expect(listRuns(path.join(root, "a"))).toEqual([path.join(root, "a")]);
  });

  it("a step reads at least one folder and stops when its time is up; the steps together find every run", () => {
    const root = workspace(Array.from({ length: 30 }, (_, i) => `runs/r${i}/events.jsonl`));
    const walk = new RunDirWalk(root);
    let steps = 0;
    while (!walk.step(0)) steps++;
    // a zero budget reads one folder per step: the root, runs/, then each run
    expect(steps).toBe(31);
    expect(walk.found).toHaveLength(30);
    expect(walk.done).toBe(true);
  });

  it("findRunDirs yields to the event loop between slices", async () => {
    const root = workspace(Array.from({ length: 30 }, (_, i) => `runs/r${i}/events.jsonl`));
    let ticks = 0;
    let on = true;
    const tick = () => {
      ticks++;
      if (on) setImmediate(tick);
    };
    setImmediate(tick);
    const found = await findRunDirs(root, "**/runs/**", { sliceMs: 0 });
    on = false;
    expect(found).toHaveLength(30);
    expect(ticks).toBeGreaterThanOrEqual(20);
  });
});
