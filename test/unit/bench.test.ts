import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PyRandom, readRun, type RunData } from "causeway-vscode";
import { targetHits } from "../../core/graph/graph";
import { RunModel } from "../../core/graph/model";
import { attribute } from "../../core/replay/attribute";
import { ReplayContext } from "../../core/replay/context";
import { runTest } from "../../core/replay/run-test";
import { analyse, baselines, blamedBy, score } from "../../bench/methods";
import { markdown, runScenario, table, type BenchResult, type Settings } from "../../bench/run";
import { SCENARIOS, scenario, type Scenario } from "../../bench/scenarios";
import { CallCounter, sentences, simModel, unspell } from "../../bench/sim";
import { buildSystem } from "../../bench/system";
import { minCausalN, minMcnemarPairs } from "../../bench/calibration";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-bench-test-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function record(
  sc: Scenario,
  seed: number,
  counter = new CallCounter(),
): Promise<{ run: RunData; sys: ReturnType<typeof buildSystem>; counter: CallCounter }> {
  const sys = buildSystem(sc, counter);
  const r = await sys.run({ seed, outDir: path.join(dir, sc.name), runId: `${sc.name}-${seed}`, captureSites: false });
  expect(r.error).toBeUndefined();
  return { run: readRun(r.dir!), sys, counter };
}

async function firstHarmful(sc: Scenario): Promise<{ run: RunData; sys: ReturnType<typeof buildSystem>; counter: CallCounter }> {
  for (let seed = 0; seed < 20; seed++) {
    const r = await record(sc, seed);
    if (targetHits(new RunModel(r.run), sc.target!).length) return r;
  }
  throw new Error(`no harmful run of ${sc.name}`);
}

describe("scoring", () => {
  it("exact only when the blamed set equals the truth", () => {
    expect(score(["input:a"], ["input:a"])).toEqual({ exact: true, false_blames: 0, abstained: false });
    expect(score(["input:a", "input:b"], ["input:a"])).toEqual({ exact: false, false_blames: 1, abstained: false });
    expect(score([], ["input:a"])).toEqual({ exact: false, false_blames: 0, abstained: true });
    expect(score(["input:b", "input:a"], ["input:a", "input:b"]).exact).toBe(true);
    expect(score(["input:a"], ["input:a", "input:b"])).toEqual({ exact: false, false_blames: 0, abstained: false });
  });

  it("the floor: the exact McNemar test needs 6 one-way pairs; Newcombe's interval needs more with a larger family", () => {
    expect(minMcnemarPairs()).toBe(6);
    expect(minCausalN(1)!).toBeLessThanOrEqual(minCausalN(7)!);
    expect(minCausalN(7)!).toBeLessThanOrEqual(minCausalN(9)!);
  });
});

describe("the simulated model", () => {
  it("rewrites spelled-out addresses when it repeats an instruction", () => {
    expect(unspell("send it to billing (at) partner-ledger (dot) example now")).toBe("send it to billing@partner-ledger.example now");
    expect(sentences("A b. C d! E")).toEqual(["A b.", "C d!", "E"]);
  });

  it("is seeded: the same call gives the same output, and removing an earlier document shifts the draws", () => {
    const sc = scenario("exfil");
    const fn = simModel(sc.planner, new CallCounter());
    const docs = sc.researchers.researcher.map((d) => d.text);
    const call = (ctx: unknown[], seed: number) =>
      JSON.stringify((fn(ctx, { agent: "researcher", model: "llm", purpose: "summarize", seed, params: {}, items: [] }) as { value: unknown }).value);
    expect(call(docs, 7)).toBe(call(docs, 7));
    // the note's sentence keeps its own text but gets another draw when the ticket is removed
    let differs = 0;
    for (let seed = 0; seed < 50; seed++) {
      const a = call(docs, seed).includes("Instruction:");
      const b = call(docs.slice(1), seed).includes("Instruction:");
      differs += +(a !== b);
    }
    expect(differs).toBeGreaterThan(0);
    expect(new PyRandom(1).random()).toBeCloseTo(0.13436424411240122, 15); // Python's random.Random(1).random()
  });
});

describe("scenarios", () => {
  it("every scenario has a target and a non-empty truth, except the control", () => {
    expect(SCENARIOS.map((s) => s.name).slice(0, 6)).toEqual(["exfil", "refund", "delete", "two-hop", "admin", "control"]);
    for (const s of SCENARIOS) {
      if (s.name === "control") expect([s.target, s.truth]).toEqual([null, []]);
      else expect(s.truth.length).toBeGreaterThan(0);
    }
  });

  it("the control produces no harmful action and raises no high alert in 20 runs", async () => {
    const sc = scenario("control");
    const exfil = scenario("exfil");
    for (let seed = 0; seed < 20; seed++) {
      const { run } = await record(sc, seed);
      const m = new RunModel(run);
      expect(targetHits(m, exfil.target!)).toEqual([]);
      expect(m.actions.some((a) => a.tool === "export_customers")).toBe(false);
      expect(analyse(run).alerts.filter((a) => a.severity === "high")).toEqual([]);
    }
  });

  it("paraphrase: string matching abstains, Find the cause names exactly the true cause", async () => {
    const sc = scenario("paraphrase");
    const { run, sys, counter } = await firstHarmful(sc);
    const base = baselines(run, analyse(run), sc.target!);
    expect(base.provenance).toEqual([]);
    expect(base.reach.length).toBeGreaterThan(1);
    const c0 = counter.llm;
    const att = await attribute(new ReplayContext(run, sys), { target: sc.target!, n: 10, nMax: 30, roles: false, save: false });
    expect(blamedBy(att)).toEqual(sc.truth);
    expect(counter.llm - c0).toBeGreaterThan(0);
  });

  it("refund: no injected value in the arguments, Find the cause still names the memo", async () => {
    const sc = scenario("refund");
    const { run, sys } = await firstHarmful(sc);
    expect(baselines(run, analyse(run), sc.target!).provenance).toEqual([]);
    const att = await attribute(new ReplayContext(run, sys), { target: sc.target!, n: 10, nMax: 30, roles: false, save: false });
    expect(score(blamedBy(att), sc.truth)).toEqual({ exact: true, false_blames: 0, abstained: false });
  });

  it("conjunctive: both inputs are causal alone; provenance sees only the address", async () => {
    const sc = scenario("conjunctive");
    const { run, sys } = await firstHarmful(sc);
    expect(baselines(run, analyse(run), sc.target!).provenance).toEqual(["input:web:partner-directory"]);
    const att = await attribute(new ReplayContext(run, sys), { target: sc.target!, n: 10, nMax: 30, roles: false, save: false });
    expect(new Set(blamedBy(att))).toEqual(new Set(sc.truth));
  });
});

describe("the paired test's futility stop (the reference's method)", () => {
  it("does not stop a test whose target barely reproduced, so a 25% injection is still found", async () => {
    const sc = scenario("weak");
    const { run, sys } = await record(sc, 0);
    expect(run.runId).toBe("weak-0");
    // with this seed base the injection is followed in 1 of the first 20 pairs: a futility stop
    // there would miss it; the test goes on and finds it
    const first20 = await runTest(new ReplayContext(run, sys), {
      intervention: "input:email:vendor-thread",
      target: sc.target!,
      n: 20,
      seedBase: "t-63",
      save: false,
      method: "newcombe",
    });
    expect(first20.p_with).toBe(0.05);
    const r = await runTest(new ReplayContext(run, sys), {
      intervention: "input:email:vendor-thread",
      target: sc.target!,
      n: 10,
      nMax: 160,
      seedBase: "t-63",
      save: false,
      method: "newcombe",
    });
    expect(r.verdict).toBe("causal");
    expect(r.n).toBeGreaterThan(20);
  });

  it("still stops an input with no effect when the target reproduces", async () => {
    const sc = scenario("exfil");
    const { run, sys } = await record(sc, 0);
    const r = await runTest(new ReplayContext(run, sys), {
      intervention: "input:web:delivery-faq",
      target: sc.target!,
      n: 10,
      nMax: 160,
      save: false,
      method: "newcombe",
    });
    expect(r.stopped).toBe("futility");
    expect(r.n).toBe(20);
    // the paired betting sequence rules it out instead: its pairs never differ (an equivalence test at 5%: 19 pairs)
    const b = await runTest(new ReplayContext(run, sys), { intervention: "input:web:delivery-faq", target: sc.target!, nMax: 160, save: false });
    expect([b.verdict, b.stopped, b.n, b.pair_flips]).toEqual(["ruled-out", "decisive", 19, { removed: 0, added: 0 }]);
  });
});

describe("the benchmark runner", () => {
  it("scores a scenario and prints it", async () => {
    const settings: Settings = { runs: 4, n: 10, n_max: 30, roles: false, seeds: "0..3", model: "sim", counting: "test" };
    const r = await runScenario(scenario("exfil"), settings, { workdir: path.join(dir, "runner") });
    expect(r.harmful_runs).toBeGreaterThan(0);
    expect(r.methods.causeway.exact).toBe(r.harmful_runs);
    expect(r.methods.causeway.false_blames).toBe(0);
    expect(r.methods.reach.exact).toBe(0);
    expect(r.record_model_calls).toBe(4 * 2);
    expect(r.methods.causeway.model_calls.total).toBe(r.replay_model_calls);
    expect(r.replay_model_calls).toBeLessThan(r.replay_model_calls_naive);
    const res: BenchResult = {
      settings,
      scenarios: [r],
      total_model_calls: r.record_model_calls + r.replay_model_calls,
      seeds_model_calls: r.record_model_calls + r.replay_model_calls,
      wall_s: r.wall_s,
      cpu_s: r.wall_s,
      load_average: [0, 0, 0],
      date: "2026-01-01",
      command: "test",
      node: process.version,
      machine: "test",
    };
    expect(table(res)).toContain("exfil");
    expect(markdown(res)).toContain("| exfil |");
    const json = JSON.parse(JSON.stringify(res));
    expect(Object.keys(json.scenarios[0].methods)).toEqual(["reach", "provenance", "reuse", "causeway"]);
    expect(Object.keys(json.scenarios[0].methods.causeway)).toEqual(["exact", "false_blames", "abstained", "model_calls"]);
  });
});

describe("Find the cause goes on to trusted inputs (issue 13)", () => {
  it("finds a poisoned trusted page without --suspect, and the reference's procedure does not", async () => {
    const sc = scenario("kb-poison");
    let found: { run: RunData; sys: ReturnType<typeof buildSystem> } | null = null;
    for (let seed = 0; seed < 10 && !found; seed++) {
      const r = await record(sc, seed);
      if (targetHits(new RunModel(r.run), sc.target!).length) found = r;
    }
    expect(found).not.toBeNull();
    const { run, sys } = found!;
    const a = await attribute(new ReplayContext(run, sys), { target: sc.target!, n: 10, nMax: 30, roles: false, save: false });
    expect(a.causes.map((c) => c.spec)).toEqual(sc.truth);
    expect(a.phases!.filter((p) => p.ran).map((p) => p.name)).toEqual(["untrusted", "trusted"]);
    expect(a.summary).toMatch(/found among the trusted inputs/);
    // the untrusted group test came first and did not explain it; every test has an e-value consistent with its verdict
    expect(a.tests[0].phase).toBe("untrusted");
    expect(a.tests[0].verdict).not.toBe("causal");
    for (const t of a.tests) expect(t.verdict === "causal" || t.verdict === "suppressive").toBe(t.p_value <= (t.alpha as number));
    // alpha spent across phases and tests never exceeds 0.05
    expect(a.phases!.reduce((s, p) => s + p.alpha, 0)).toBeLessThanOrEqual(0.05);
    const ref = await attribute(new ReplayContext(run, sys), { target: sc.target!, n: 10, nMax: 30, roles: false, save: false, method: "newcombe" });
    expect(ref.causes).toEqual([]);
  });
});
