import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { WorkspaceRuns } from "../../../extension/logic/workspace-runs";
import { DefaultRunChoice } from "../../../extension/logic/default-run";
import { copyDir, demoWorkspace, tmpDir } from "./helpers";

// "Open investigator" with no run: the investigator opens the first run with a high alert. Asked
// before the background analysis (held after activation until the Runs view's first listing) has
// found one, it used to open on the Runs list with "Choose a run…" for good, or on whichever run
// without an alert was analysed first; now it opens the run with the high alert once it is known.

const stores: WorkspaceRuns[] = [];
afterEach(() => {
  while (stores.length) stores.pop()!.dispose();
});

/** A store holding the demo's 8 runs (`names` of them), its background analysis held. */
async function heldStore(names?: string[]): Promise<{ s: WorkspaceRuns; runs: string; release: () => void }> {
  const ws = await demoWorkspace();
  const runs = path.join(ws, "runs");
  const s = new WorkspaceRuns({ debounceMs: 5 });
  stores.push(s);
  const release = s.hold(); // as the extension does until the Runs view's first listing
  for (const name of names ??
    fs
      .readdirSync(runs)
      .filter((n) => n.startsWith("demo-seed"))
      .sort())
    s.add(path.join(runs, name), ws);
  return { s, runs, release };
}

/** The store's changes, as the panel sees them, settling the choice; resolves once idle. */
async function settleWhileAnalysing(s: WorkspaceRuns, choice: DefaultRunChoice): Promise<(string | undefined)[]> {
  const settled: (string | undefined)[] = [];
  const sub = s.onDidChange(() => {
    const r = choice.settle();
    if (r) settled.push(r);
  });
  await s.idle();
  await new Promise((r) => setTimeout(r, 20)); // the last change is announced after the last slice
  sub.dispose();
  return settled;
}

describe("the investigator's default run", () => {
  it("asked before any run is analysed: waits, then names the run with a high alert once it is known", async () => {
    const { s, runs, release } = await heldStore();
    const choice = new DefaultRunChoice(s);
    expect(s.list().every((e) => !e.analysis)).toBe(true);
    expect(choice.ask()).toBeUndefined(); // not known yet: the Runs list for now
    expect(choice.isWaiting).toBe(true);
    release();
    const settled = await settleWhileAnalysing(s, choice);
    expect(settled).toEqual([path.join(runs, "demo-seed0")]); // once, the first run with a high alert
    expect(s.get(settled[0]!)!.analysis!.summary.alerts.high).toBeGreaterThan(0);
    expect(choice.isWaiting).toBe(false);
    expect(choice.settle()).toBeUndefined(); // settled once: later changes do not move the user
  });

  it("asked when only a run without a high alert is analysed: does not settle for it, waits for one with", async () => {
    const { s, runs, release } = await heldStore();
    const quiet = path.join(runs, "demo-seed2");
    s.analyse(quiet);
    expect(s.get(quiet)!.analysis!.summary.alerts.high).toBe(0);
    const choice = new DefaultRunChoice(s);
    expect(choice.ask()).toBeUndefined(); // the old choice opened demo-seed2 here
    release();
    expect(await settleWhileAnalysing(s, choice)).toEqual([path.join(runs, "demo-seed0")]);
  });

  it("asked when a run with a high alert is analysed: names it at once, no wait", async () => {
    const { s, runs } = await heldStore();
    // analysed from the last: the first with a high alert met is not demo-seed0
    const names = ["demo-seed7", "demo-seed6", "demo-seed5", "demo-seed4", "demo-seed3"];
    const alerting = names.map((n) => path.join(runs, n)).find((d) => s.analyse(d)!.summary.alerts.high > 0);
    expect(alerting).toBeDefined();
    const choice = new DefaultRunChoice(s);
    expect(choice.ask()).toBe(alerting);
    expect(choice.isWaiting).toBe(false);
  });

  it("no run has a high alert: names the first run once every run is analysed", async () => {
    const { s, runs, release } = await heldStore(["demo-seed2"]);
    const choice = new DefaultRunChoice(s);
    expect(choice.ask()).toBeUndefined();
    release();
    expect(await settleWhileAnalysing(s, choice)).toEqual([path.join(runs, "demo-seed2")]);
  });

  it("asked before any run is found: waits for the runs discovery adds", async () => {
    const { s, runs, release } = await heldStore([]);
    const choice = new DefaultRunChoice(s);
    expect(choice.ask()).toBeUndefined();
    const copy = copyDir(path.join(runs, "demo-seed1"), path.join(tmpDir(), "runs", "found-later"));
    s.add(copy, path.dirname(path.dirname(copy)));
    release();
    expect(await settleWhileAnalysing(s, choice)).toEqual([copy]);
  });

  it("the user chose a run meanwhile (or closed the investigator): the wait is over", async () => {
    const { s, release } = await heldStore();
    const choice = new DefaultRunChoice(s);
    expect(choice.ask()).toBeUndefined();
    choice.cancel();
    release();
    expect(await settleWhileAnalysing(s, choice)).toEqual([]);
  });
});
