import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { findRunDirs } from "../../../extension/logic/find-runs";

const tmps: string[] = [];
afterEach(() => {
  for (const d of tmps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function workspace(files: string[]): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "findruns-"));
  tmps.push(root);
  for (const f of files) {
    fs.mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), "{}\n");
  }
  return root;
}

const rel = (root: string, dirs: string[]) => dirs.map((d) => path.relative(root, d)).sort();

describe("finding run folders by walking the workspace", () => {
  it("finds the runs the runs glob accepts, at any depth, and nothing else", async () => {
    const root = workspace([
      "runs/r1/events.jsonl",
      "runs/r1/blobs/sha256-x.json",
      "a/b/runs/r2/events.jsonl",
      "runs/nested/deeper/r3/events.jsonl",
      "other/r4/events.jsonl", // not under a runs folder
      "node_modules/pkg/runs/r5/events.jsonl",
      ".git/runs/r6/events.jsonl",
      "runs/.hidden/events.jsonl",
      "runs/r7/tests.jsonl", // no events.jsonl: not a run
    ]);
    expect(rel(root, await findRunDirs(root, "**/runs/**"))).toEqual(["a/b/runs/r2", "runs/nested/deeper/r3", "runs/r1"]);
    expect(rel(root, await findRunDirs(root, "other/*"))).toEqual(["other/r4"]);
  });

  it("does not enter a run's blobs folder (a run cannot hide there)", async () => {
    const root = workspace(["runs/r1/events.jsonl", "runs/r1/blobs/runs/x/events.jsonl"]);
    expect(rel(root, await findRunDirs(root, "**/runs/**"))).toEqual(["runs/r1"]);
  });

  it("follows a symbolic link to a folder of runs once, and survives a link loop", async () => {
    const root = workspace(["store/r1/events.jsonl"]);
    fs.symlinkSync(path.join(root, "store"), path.join(root, "runs"), "dir");
    fs.symlinkSync(root, path.join(root, "store", "loop"), "dir");
    fs.symlinkSync(path.join(root, "missing"), path.join(root, "dangling"), "dir");
    const found = rel(root, await findRunDirs(root, "**/runs/**"));
    expect(found).toContain("runs/r1");
    expect(found.every((d) => d.endsWith("r1"))).toBe(true);
  });

  it("reports each run as it is found and stops when cancelled", async () => {
    const root = workspace(Array.from({ length: 40 }, (_, i) => `runs/r${i}/events.jsonl`));
    const seen: string[] = [];
    expect(await findRunDirs(root, "**/runs/**", { onRun: (d) => seen.push(d) })).toHaveLength(40);
    expect(seen).toHaveLength(40);
    expect(await findRunDirs(root, "**/runs/**", { cancelled: () => true })).toEqual([]);
  });
});
