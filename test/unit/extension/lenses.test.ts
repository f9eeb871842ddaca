import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { readRun } from "../../../core/log/reader";
import { analyseRun, type RunAnalysis } from "../../../extension/logic/analysis";
import { buildSiteIndex, lensTitle, lensTooltip, type LensItem } from "../../../extension/logic/lenses";
import { SiteResolver } from "../../../extension/logic/sites";
import { ROOT, demoWorkspace, tmpDir } from "./helpers";

let runs: { dir: string; analysis: RunAnalysis }[];

beforeAll(async () => {
  const ws = await demoWorkspace();
  runs = fs
    .readdirSync(path.join(ws, "runs"))
    .filter((n) => n.startsWith("demo-seed"))
    .map((n) => path.join(ws, "runs", n))
    .map((dir) => ({ dir, analysis: analyseRun(readRun(dir)) }));
});

describe("code lenses", () => {
  it("sit above each SDK call of the demo's agents, with runs, alerts and the tested cause", () => {
    // the workspace has no copy of the demo's sources: they resolve to the extension's own
    const index = buildSiteIndex(runs, new SiteResolver({ folders: [tmpDir()], extensionPath: ROOT }));
    const lines = index.get(path.join(ROOT, "examples/demo/agents.ts"))!;
    expect(lines).toBeDefined();
    const src = fs.readFileSync(path.join(ROOT, "examples/demo/agents.ts"), "utf8").split("\n");
    for (const [line, items] of lines) {
      const call = items[0].call;
      expect(src[line - 1]).toContain(`.${call}(`); // the lens is on the call's own line
    }
    const act = lines.get(25)!;
    const email = act.find((i) => i.tool === "send_email")!;
    const sendingRuns = runs.filter((r) => r.analysis.sites.some((h) => h.tool === "send_email")).length;
    const highs = runs.reduce((n, r) => n + r.analysis.alerts.filter((a) => a.tool === "send_email" && a.severity === "high").length, 0);
    expect(email.runs.size).toBe(sendingRuns);
    expect(email.alerts.high).toBe(highs);
    expect(act[0]).toBe(email); // the call with the worst alert comes first
    expect(lensTitle(email)).toMatch(
      new RegExp(`^send_email · ${sendingRuns} runs · ${highs} high · \\d+ review · cause: vendor:portal/notes\\.md \\+0\\.\\d\\d$`),
    );
    // a click goes to a run and event where the high alert is
    const focus = runs.find((r) => r.dir === email.focus.run)!;
    expect(focus.analysis.alerts.some((a) => a.seq === email.focus.seq && a.severity === "high")).toBe(true);
    expect(lensTitle(lines.get(14)![0])).toBe(`observe · 4 sources · ${runs.length} runs`);
    expect(lensTitle(lines.get(17)![0])).toBe(`send → planner · ${runs.length} runs`);
    expect(lensTitle(lines.get(16)![0])).toBe(`decide (summarize) · ${runs.length} runs`);
  });

  it("say nothing about sites that resolve nowhere (the reference's runs record none)", () => {
    const index = buildSiteIndex(runs, new SiteResolver({ folders: [tmpDir()], extensionPath: tmpDir() }));
    expect(index.size).toBe(0);
  });

  it("show untrusted labels as plain, bounded text", () => {
    const item: LensItem = {
      call: "act",
      tool: "<img src=x onerror=alert(1)>\n".repeat(20),
      labels: [],
      runs: new Set(["a"]),
      events: 1,
      alerts: { high: 0, review: 0, info: 0 },
      cause: { intervention: "input:[evil](command:workbench.action.quit)", role: "primary", effect: 0.5, ci: [0.2, 0.7], n: 20 },
      focus: { run: "a", seq: 1 },
      worst: 3,
    };
    const t = lensTitle(item);
    expect(t).not.toContain("\n");
    expect(t.startsWith("<img src=x onerror=alert(1)> <img")).toBe(true);
    expect(t).toContain("cause: [evil](command:workbench.action.quit) +0.50");
    expect(t.length).toBeLessThan(200);
    expect(lensTooltip(item)).toContain("Tested cause: input:[evil]");
  });
});
