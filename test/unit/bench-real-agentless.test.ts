/**
 * The real-model benchmark's replay without the program (rung 2), end to end against the fake
 * benchmark model on loopback: every harmful run is investigated by re-sending its agents'
 * recorded requests to the benchmark's endpoint, through the benchmark's client (each call counted
 * and under the cap), never to an address or with a key the run holds; the results say which
 * replay each attribution used. `--replay program` still re-runs the scenario programs.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRun } from "causeway-vscode";
import { ModelClient } from "../../bench/real-client";
import { buildEndpointSystem } from "../../bench/real-agents";
import { replayContext } from "../../bench/real-harness";
import { realMain, type Io } from "../../bench/real-main";
import { estimate, parseRealArgs } from "../../bench/real-options";
import type { RealResult } from "../../bench/real-report";
import { SCENARIOS } from "../../bench/scenarios";
import { parseIntervention } from "../../core/specs/grammar";
import { benchPolicy } from "../fake-llm/bench-policy";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";

const KEY = "sk-bench-agentless-7c1e9a2b4d6f";
const env = { ...process.env, BENCH_TEST_KEY: KEY };
const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-realbench-agentless-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), interactive: false, env, out, err };
}

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

const base = (llm: FakeLlm, out: string, more: string[] = []) => [
  "--endpoint",
  `${llm.url}/v1`,
  "--model",
  "fake-7b",
  "--api-key-env",
  "BENCH_TEST_KEY",
  "--scenario",
  "exfil",
  "--runs",
  "3",
  "--truth-n",
  "6",
  "--n",
  "6",
  "--n-max",
  "10",
  "--yes",
  "--json",
  "--out",
  out,
  ...more,
];

describe("the benchmark's replay without the program", () => {
  let llm: FakeLlm;
  beforeAll(async () => {
    llm = await startFakeLlm({ respond: benchPolicy({ followRate: 0.95, oddRate: 0.1 }), errorRate: 0.03, noAuth: true });
  });
  afterAll(() => llm.close());

  it("is the default: harmful runs investigated by re-sending the recorded requests, every call counted, under the cap, no key written", async () => {
    const out = tmp();
    const keep = tmp();
    llm.requests.length = 0;
    const x = io();
    expect(await realMain(base(llm, out, ["--max-calls", "400", "--keep-runs", keep]), x)).toBe(0);
    const doc = JSON.parse(x.out.join("")) as RealResult;
    expect(doc.settings.replay).toBe("agentless");
    expect(doc.model_calls.calls).toBe(llm.requests.length);
    expect(llm.requests.length).toBeLessThanOrEqual(400);
    expect(llm.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const exfil = doc.scenarios[0];
    expect(exfil.ground_truth.verdict).toBe("confirmed");
    expect(exfil.harmful_runs).toBeGreaterThan(0);
    expect(exfil.attributions.map((a) => a.replay)).toEqual(exfil.attributions.map(() => "agentless"));
    expect(exfil.attributions.every((a) => !a.replay_note && !a.error)).toBe(true);
    expect(exfil.exact).toBeGreaterThan(0);
    expect(exfil.false_blames).toBe(0);
    // the attribution's calls are the ones the server received after the ground truth
    expect(exfil.model_calls.attribution.total).toBe(doc.model_calls.calls - exfil.model_calls.record - exfil.model_calls.ground_truth);
    expect(
      fs.readFileSync(
        files(out).find((f) => f.endsWith(".md"))!,
        "utf8",
      ),
    ).toMatch(/agentless replay/);
    for (const f of [...files(out), ...files(keep)]) expect(fs.readFileSync(f, "utf8"), f).not.toContain(KEY);
  }, 60_000);

  it("holds the cap inside a replay: stops cleanly, never a call beyond it", async () => {
    llm.requests.length = 0;
    const x = io();
    // recording (6) and the ground truth (12 fresh runs, 24 calls) fit; the attributions run into it
    expect(await realMain(base(llm, tmp(), ["--max-calls", "45"]), x)).toBe(0);
    const doc = JSON.parse(x.out.join("")) as RealResult;
    expect(llm.requests.length).toBeLessThanOrEqual(45);
    expect(doc.model_calls.calls).toBe(llm.requests.length);
    expect(doc.stopped).toMatchObject({ by: "cap", reason: "45 model calls" });
    expect(doc.scenarios[0].status).toBe("stopped by the cap");
  }, 60_000);

  it("--replay program still re-runs the scenario programs, and says so", async () => {
    const x = io();
    expect(await realMain(base(llm, tmp(), ["--max-calls", "400", "--replay", "program"]), x)).toBe(0);
    const doc = JSON.parse(x.out.join("")) as RealResult;
    expect(doc.settings.replay).toBe("program");
    const exfil = doc.scenarios[0];
    expect(exfil.attributions.length).toBeGreaterThan(0);
    expect(exfil.attributions.every((a) => a.replay === "program")).toBe(true);
    expect(exfil.exact).toBeGreaterThan(0);
  }, 60_000);
});

describe("the estimate without the program", () => {
  it("bounds an arm at three times the recorded calls (an agent that asks for tools is called again), and says so", () => {
    const args = ["--endpoint", "http://h/v1", "--model", "m", "--scenario", "exfil", "--runs", "2", "--n-max", "10"];
    const agentless = estimate(parseRealArgs(args, {}));
    const program = estimate(parseRealArgs([...args, "--replay", "program"], {}));
    expect(parseRealArgs(args, {}).replay).toBe("agentless");
    expect(agentless.calls.attribution_max).toBe(3 * program.calls.attribution_max);
    expect(agentless.calls.attribution_expected).toBe(program.calls.attribution_expected);
    expect(agentless.assumptions.join(" ")).toMatch(/recorded calls \+ 2/);
  });
});

describe("what a recorded run can't choose", () => {
  it("the replay's calls go to the benchmark's endpoint with its key only, whatever address the run recorded or the environment names", async () => {
    const recorded = await startFakeLlm({ respond: benchPolicy({ followRate: 1 }), noAuth: true });
    const other = await startFakeLlm({ respond: benchPolicy({ followRate: 1 }), noAuth: true });
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-from-the-environment-0000";
    try {
      const sc = SCENARIOS.find((s) => s.name === "exfil")!;
      const dir = tmp();
      const sys = buildEndpointSystem(sc, new ModelClient({ api: "openai", endpoint: `${recorded.url}/v1`, model: "m" }));
      const r = await sys.run({ outDir: dir, runId: "exfil-a", captureSites: false });
      const run = readRun(r.dir!);
      // the run names the address it was recorded against in every request record (attacker-controlled)
      const reqs = run.events.filter((e) => e.type === "decision").map((e) => (e as unknown as { request?: string }).request);
      expect(reqs.length).toBeGreaterThan(0);
      expect(reqs.every((x) => typeof x === "string")).toBe(true);
      const before = recorded.requests.length;
      const client = new ModelClient({ api: "openai", endpoint: `${other.url}/v1`, model: "m" });
      const { ctx, replay } = replayContext(run, sys, "agentless", client, `${other.url}/v1`);
      expect(replay).toBe("agentless");
      const arm = await ctx.system.run({ seed: 1, interventions: [parseIntervention("input:supplier:portal-notes")] });
      expect(arm.error).toBeUndefined();
      expect(recorded.requests.length).toBe(before);
      expect(other.requests.length).toBeGreaterThan(0);
      expect(client.counts.calls).toBe(other.requests.length);
      expect(other.requests.every((q) => q.headers.authorization === undefined && q.headers["x-api-key"] === undefined)).toBe(true);
      // the removed document reached no request
      expect(other.requests.some((q) => JSON.stringify(q.body).includes("supplier-audit"))).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
      await recorded.close();
      await other.close();
    }
  }, 30_000);

  it("a run whose calls were not recorded in full is replayed with its program, and the reason is kept", async () => {
    const llm = await startFakeLlm({ respond: benchPolicy({ followRate: 1 }), noAuth: true });
    try {
      const sc = SCENARIOS.find((s) => s.name === "exfil")!;
      const client = new ModelClient({ api: "openai", endpoint: `${llm.url}/v1`, model: "m" });
      const sys = buildEndpointSystem(sc, client);
      const r = await sys.run({ outDir: tmp(), runId: "exfil-b", captureSites: false });
      const run = readRun(r.dir!);
      for (const e of run.events) delete (e as unknown as { request?: unknown }).request;
      const { replay, note } = replayContext(run, sys, "agentless", client, `${llm.url}/v1`);
      expect(replay).toBe("program");
      expect(note).toMatch(/no recorded request/);
    } finally {
      await llm.close();
    }
  }, 30_000);
});
