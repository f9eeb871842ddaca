import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { nodeId } from "../../../core/graph/graph";
import { readRun, type RunData } from "../../../core/log/reader";
import { analyseRun } from "../../../extension/logic/analysis";
import type { RunEntry } from "../../../extension/logic/workspace-runs";
import {
  CONTEXT,
  agentChildren,
  agentItem,
  compareRuns,
  eventItem,
  folderItem,
  parentOf,
  remoteRunItem,
  runChildren,
  runItem,
} from "../../../extension/logic/tree";
import { REFERENCE_RUNS, copyDir, demoWorkspace, tmpDir } from "./helpers";

function entry(dir: string, run = readRun(dir)): RunEntry {
  return { dir, root: path.dirname(dir), version: 1, analysedVersion: 1, analysis: analyseRun(run) };
}

let seed0: string;
beforeAll(async () => {
  seed0 = path.join(await demoWorkspace(), "runs", "demo-seed0");
});

describe("the runs tree", () => {
  it("shows a run's status, alert counts and program; a run not yet read says so", () => {
    const e = entry(seed0);
    const item = runItem(e);
    expect(item.label).toBe("demo-seed0");
    expect(item.description).toMatch(/^intact · 1 high · 3 review · causeway:demo$/);
    expect(item.icon.id).toBe("verified");
    expect(item.contextValue).toBe(CONTEXT.runReplayable);
    expect(runItem({ ...e, analysis: undefined }).description).toBe("reading…");
  });

  it("shows a cut-off run as failed verify, its problems first, and still lists its intact events", () => {
    const dir = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(tmpDir(), "runs", "cut"));
    const file = path.join(dir, "events.jsonl");
    const buf = fs.readFileSync(file);
    fs.writeFileSync(file, buf.subarray(0, buf.length - 200)); // cut in the middle of the last line
    const run = readRun(dir);
    const e = entry(dir, run);
    expect(runItem(e).description).toMatch(/^failed verify/);
    expect(runItem(e).icon.id).toBe("error");
    expect(runItem(e).contextValue).toBe(CONTEXT.runReplayable); // it names a program (the reference's Python one)
    const kids = runChildren(dir, run);
    expect(kids[0]).toEqual({ kind: "problems", dir });
    const events = kids.filter((k) => k.kind === "agent").flatMap((k) => agentChildren(dir, run, (k as { agent: string }).agent));
    expect(events).toHaveLength(run.events.length);
    expect(run.events.length).toBeGreaterThan(15);
  });

  it("groups events under their agents, in order, and marks the exfiltration email by its alert", () => {
    const run = readRun(seed0);
    const e = entry(seed0, run);
    const agents = runChildren(seed0, run).map((k) => (k as { agent: string }).agent);
    expect(agents).toEqual(["run", "researcher", "planner", "executor"]);
    const exec = agentChildren(seed0, run, "executor");
    expect(exec.map((k) => (k as { seq: number }).seq)).toEqual(run.events.filter((x) => x.agent === "executor").map((x) => x.seq));
    const email = run.events.find((x) => x.seq === 18)!;
    const item = eventItem(seed0, run, email, e.analysis!.alerts, [], nodeId);
    expect(item.label).toBe("send_email");
    expect(item.icon).toEqual({ id: "error", color: "problemsErrorIcon.foreground" });
    expect(item.contextValue).toBe(CONTEXT.action);
    expect(item.description).toContain("#18 · 1 high");
    expect(item.description).toContain("sensitive");
    expect(item.description).toContain("audit@vendor-compliance.example");
    expect(item.open).toEqual({ kind: "reveal", run: seed0, seq: 18, node: nodeId(String(email.id)), action: true });
    expect(agentItem(seed0, run, "executor", e.analysis!.alerts).icon.id).toBe("error");
    expect(parentOf({ kind: "event", dir: seed0, agent: "executor", seq: 18 })).toEqual({ kind: "agent", dir: seed0, agent: "executor" });
  });

  it("marks blocked and sensitive calls at a glance", () => {
    const run = readRun(seed0);
    const refund = run.events.find((x) => x.type === "action" && x.tool === "lookup_order")!;
    const blocked = { ...refund, status: "blocked" } as typeof refund;
    expect(eventItem(seed0, run, blocked, [], [], nodeId)).toMatchObject({ icon: { id: "circle-slash" } });
    expect(eventItem(seed0, run, blocked, [], [], nodeId).description).toContain("blocked");
    const sensitive = { ...refund, sensitive: true } as typeof refund;
    expect(eventItem(seed0, run, sensitive, [], [], nodeId).icon.id).toBe("shield");
  });

  it("shows markup and script in a run's strings as text", () => {
    const evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const src = readRun(seed0);
    const e = { ...src.events.find((x) => x.seq === 18)!, tool: evil, agent: `**bold** ${evil}` } as RunData["events"][number];
    const item = eventItem(seed0, src, e, [], [], nodeId);
    expect(item.label).toBe(evil);
    expect(typeof item.tooltip).toBe("string");
    expect(item.tooltip).toContain(`by **bold** ${evil}`);
  });

  it("shows a collector's run not opened yet from its runs-table row; clicking it opens it", () => {
    const dir = path.join(tmpDir(), "collectors", "abc", "run-7");
    const row = {
      run_id: "run-7",
      program: "agents/support.ts:SYSTEM",
      started: "2026-12-01T10:00:00Z",
      ended: null,
      status: "running" as const,
      events: 40,
      head: { seq: 39, hash: "a".repeat(64) },
      alerts: { high: 2, review: 1, info: 0 },
      tests: 0,
      tools: [],
      sources: [],
      updated: "2026-12-01T10:00:05Z",
    };
    const item = remoteRunItem(dir, row);
    expect(item.label).toBe("run-7");
    expect(item.description).toBe("on the collector · running · 2 high · 1 review · agents/support.ts:SYSTEM");
    expect(item.collapsible).toBe("collapsed");
    expect(item.contextValue).toBe(CONTEXT.remoteRun);
    expect(item.open).toEqual({ kind: "remote", run: dir });
    expect(item.id).toBe(runItem(entry(seed0)).id.replace(seed0, dir)); // the same tree id once opened: it stays expanded
    expect(folderItem(path.dirname(dir), "collector x", [entry(seed0)], 3).description).toBe("4 runs · 3 not opened · 1 high");
  });

  it("orders runs with numbers as numbers", () => {
    expect(["run-10", "run-9", "run-1"].sort(compareRuns)).toEqual(["run-1", "run-9", "run-10"]);
  });
});
