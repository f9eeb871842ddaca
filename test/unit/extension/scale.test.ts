/**
 * A workspace with 1,000 small runs: the tree's first level is available before any analysis, and
 * the analysis runs in slices between which timers (and so messages from the UI) get their turn.
 * Asserted by counting, not by timing: a loaded machine must not fail a correct build. The times
 * it prints are figures; the benchmark with the speed targets is bench/vscode-runs-list.mjs.
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { WorkspaceRuns } from "../../../extension/logic/workspace-runs";
import { runItem } from "../../../extension/logic/tree";
import { REFERENCE_RUNS, tmpDir } from "./helpers";

const N = 1000;

describe("1,000 runs", () => {
  it("are listed before any analysis, then analysed in slices between which timers run", async () => {
    const base = tmpDir("cw-ext-scale-");
    const names = fs.readdirSync(REFERENCE_RUNS);
    const dirs: string[] = [];
    // each run: its own folder, events.jsonl and tests.jsonl hard-linked, blobs/ a link to the
    // reference run's blobs (the content is the reference's; only the file-system work is saved)
    for (let i = 0; i < N; i++) {
      const src = path.join(REFERENCE_RUNS, names[i % names.length]);
      const d = path.join(base, "runs", `run-${String(i).padStart(4, "0")}`);
      fs.mkdirSync(d, { recursive: true });
      for (const f of ["events.jsonl", "tests.jsonl"]) if (fs.existsSync(path.join(src, f))) fs.linkSync(path.join(src, f), path.join(d, f));
      fs.symlinkSync(path.join(src, "blobs"), path.join(d, "blobs"), "dir");
      dirs.push(d);
    }
    const s = new WorkspaceRuns();
    try {
      // a timer that counts its turns while runs wait for analysis: were the event loop blocked
      // until the analysis ended, it would count none
      let lastTick = performance.now();
      let worstLag = 0;
      let ticksWhilePending = 0;
      const ticker = setInterval(() => {
        const now = performance.now();
        worstLag = Math.max(worstLag, now - lastTick - 5);
        lastTick = now;
        if (s.pending > 0) ticksWhilePending++;
      }, 5);
      const t0 = performance.now();
      for (const d of dirs) s.add(d, base);
      const addMs = performance.now() - t0;
      const t1 = performance.now();
      const listed = s.list();
      const analysedAtFirstLevel = listed.filter((e) => e.analysis).length;
      const items = listed.map((e) => runItem(e)); // the tree's first level, before any analysis
      const firstLevelMs = performance.now() - t1;
      let firstBatchMs = -1;
      s.onDidChange((c) => {
        if (firstBatchMs < 0 && c.changed.length) firstBatchMs = performance.now() - t0;
      });
      await s.idle();
      const totalMs = performance.now() - t0;
      clearInterval(ticker);
      expect(items).toHaveLength(N);
      expect(s.list().every((e) => e.analysis)).toBe(true);
      expect(s.list().filter((e) => e.analysis!.summary.alerts.high > 0).length).toBeGreaterThan(0);
      expect(s.tailsHeld).toBeLessThanOrEqual(48);
      console.log(
        `[scale] ${N} runs: add ${addMs.toFixed(1)} ms, first tree level ${firstLevelMs.toFixed(1)} ms, first analysed batch after ${firstBatchMs.toFixed(0)} ms, ` +
          `all analysed in ${totalMs.toFixed(0)} ms (${(s.stats.analysisMs / N).toFixed(2)} ms/run), ${s.stats.slices} slices, longest ${s.stats.longestSliceMs.toFixed(1)} ms, ${s.stats.slicesOver50ms} over 50 ms, worst event-loop lag ${worstLag.toFixed(1)} ms`,
      );
      // nothing is analysed before the tree asks for its first level; the analysis is cut into
      // many slices, and the timer ran between them while runs were still waiting (at least once
      // per ten slices: each slice yields with setImmediate, so timers due run in between)
      expect(analysedAtFirstLevel).toBe(0);
      expect(s.stats.slices).toBeGreaterThan(10);
      expect(ticksWhilePending).toBeGreaterThanOrEqual(Math.floor(s.stats.slices / 10));
    } finally {
      s.dispose();
      fs.rmSync(base, { recursive: true, force: true });
    }
  }, 180_000);
});
