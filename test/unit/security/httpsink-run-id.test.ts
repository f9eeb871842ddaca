/**
 * Two agents shipping to one collector with no run id each get a run of their own: the default
 * was `agent-run` for openRun and `NAME-seed0` for System.run, so the second agent's batches were
 * refused (409) or, worse, read as the first's. An HttpSink names a run given no id uniquely
 * (BASE-YYYYMMDD-HHMMSS-RANDOM); an explicit id is kept as it is. A real collector on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCollector, type Collector } from "../../../core/capture/server";
import { HttpSink } from "../../../core/sdk/httpsink";
import { System } from "../../../core/sdk/system";
import { openRun } from "../../../core/adapters/shared";
import { readRun } from "../../../core/log/reader";
import { RUN_ID_RE } from "../../../core/store/http";

const TOKEN = "sink-token";
const root = fs.mkdtempSync(path.join(os.tmpdir(), "cw-sinkid-"));
let c: Collector;
beforeAll(async () => {
  c = await startCollector({ root, token: TOKEN, port: 0 });
});
afterAll(async () => {
  await c.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const agent = () =>
  new System({
    name: "support",
    task: "answer",
    models: { mock: () => "ok" },
    tools: { lookup: () => "found" },
    program: async (rt) => {
      const a = rt.agent("a");
      const d = await a.decide([rt.taskRef!], { model: "mock" });
      await a.act("lookup", { q: "x" }, { decision: d });
    },
  });

describe("HttpSink's run id", () => {
  it("two System runs with the same seed and no id are two runs, both whole", async () => {
    const [r1, r2] = [
      await agent().run({ seed: 0, sink: new HttpSink(c.url, TOKEN), captureSites: false }),
      await agent().run({ seed: 0, sink: new HttpSink(c.url, TOKEN), captureSites: false }),
    ];
    expect(r1.error).toBeUndefined();
    expect(r2.error).toBeUndefined();
    expect(r1.runId).not.toBe(r2.runId);
    for (const r of [r1, r2]) {
      expect(r.runId).toMatch(RUN_ID_RE);
      expect(r.runId.startsWith("support-seed0-")).toBe(true);
      const run = readRun(path.join(root, r.runId), { checkBlobs: true });
      expect(run.problems).toEqual([]);
      expect(run.events.at(-1)?.type).toBe("run.end");
    }
  });

  it("two openRun runs with no id are two runs", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const rt = openRun({ sink: new HttpSink(c.url, TOKEN), captureSites: false });
      rt.agent("a").observe("hello", { source: "user", trust: "trusted" });
      await rt.finish();
      ids.push(rt.runId);
    }
    expect(ids[0]).not.toBe("agent-run");
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(readRun(path.join(root, id)).problems).toEqual([]);
  });

  it("an explicit run id is used as it is", async () => {
    const r = await agent().run({ sink: new HttpSink(c.url, TOKEN), runId: "desk-42", captureSites: false });
    expect(r.runId).toBe("desk-42");
    expect(fs.existsSync(path.join(root, "desk-42", "events.jsonl"))).toBe(true);
    const rt = openRun({ sink: new HttpSink(c.url, TOKEN), runId: "desk-43", captureSites: false });
    await rt.finish();
    expect(rt.runId).toBe("desk-43");
  });
});
