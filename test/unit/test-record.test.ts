/**
 * The one builder of a test's record (core/replay/test-record.ts): what it keeps, leaves out and
 * derives, and that both methods of a run test and the decision test write their records through it.
 */
import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun } from "../../core/log/reader";
import { readTestsLog } from "../../core/log/testslog";
import { ReplayContext } from "../../core/replay/context";
import { runTest } from "../../core/replay/run-test";
import { decisionTest } from "../../core/replay/decision-test";
import { newcombeNeeded, testRecord, type DecisionMeasure, type RunMeasure } from "../../core/replay/test-record";
import { SYSTEM as DEMO, EXFIL_TARGET } from "../../examples/demo/system";

const run = (over: Partial<RunMeasure> = {}): RunMeasure => ({
  scope: "run",
  intervention: "input:vendor:*",
  target: "tool=send_email",
  ending: { n: 12, verdict: "causal", ci: [0.41234567, 0.98765432], n_needed: null, stopped: "decisive", p_value: 0.001 },
  looks: 2,
  nMax: 40,
  minEffect: 0.2,
  family: 1,
  p_with: 10 / 12,
  p_without: 1 / 12,
  effect: 9 / 12,
  pairs: { flips: { removed: 9, added: 0 }, applied: 12, off: { with: 1, without: 3 }, baseRuns: 12 },
  model_calls: 70,
  naive_model_calls: 72,
  method: "paired re-execution",
  rung: 3,
  assumptions: ["tools are deterministic"],
  ...over,
});

const decision = (over: Partial<DecisionMeasure> = {}): DecisionMeasure => ({
  scope: "decision",
  intervention: "input:vendor:*",
  target: "decision#10 output changed",
  decision: { id: "ev-10", seq: 10 },
  ending: { n: 8, verdict: "inconclusive", ci: [-0.1, 0.5], n_needed: 30 },
  looks: 1,
  nMax: 8,
  minEffect: 0.2,
  p_with: null,
  p_without: null,
  effect: 0.25,
  noise: 0.125,
  model_calls: 24,
  method: "re-call one recorded model call",
  ...over,
});

describe("testRecord", () => {
  it("rounds rates and the interval to 4 places and derives the pairs' fields of a run record", () => {
    const r = testRecord(run());
    expect(r).toMatchObject({ n: 12, n_max: 40, p_with: 0.8333, p_without: 0.0833, effect: 0.75, ci: [0.4123, 0.9877], pair_flips: { removed: 9, added: 0 } });
    // the arm without the item is the one whose off-tape actions count; every pair and every shared arm ran the program
    expect([r.off_tape_actions, r.off_tape_by_arm, r.intervention_applied_in, r.program_runs]).toEqual([3, { with: 1, without: 3 }, 12, 24]);
    expect([r.rung, r.assumptions, r.scope]).toEqual([3, ["tools are deterministic"], "run"]);
  });

  it("leaves out what a test did not measure, never writing an undefined field", () => {
    const r = testRecord(run());
    expect(Object.values(r)).not.toContain(undefined);
    // a Newcombe ending has no e-value, alpha or stop reason; a single-input test no group, no baseline, no note
    for (const k of ["e_value", "alpha", "stop_reason", "group", "baseline", "note", "changes", "noise", "decision"]) expect(r).not.toHaveProperty(k);
    const d = testRecord(decision());
    expect(Object.values(d)).not.toContain(undefined);
    for (const k of ["family", "pair_flips", "program_runs", "naive_model_calls", "off_tape_actions", "stopped", "p_value", "role"])
      expect(d).not.toHaveProperty(k);
  });

  it("keeps a decision's null rates and noise, names the decision, and puts the caller's own fields last", () => {
    const d = testRecord(decision({ extra: { removed_blocks: 1, endpoint: { api: "openai.chat" } } }));
    expect(d).toMatchObject({ p_with: null, p_without: null, noise: 0.125, decision: "ev-10", decision_seq: 10, scope: "decision", n_needed: 30 });
    expect(Object.keys(d).slice(-2)).toEqual(["removed_blocks", "endpoint"]);
  });

  it("gives a causal verdict a role from the interval and P(with) as measured, and none otherwise", () => {
    // lower bound 0.41 over P(with) 0.83 is under half: confirmed, not primary; 0.5 of 0.8 is primary
    expect(testRecord(run()).role).toBe("confirmed");
    expect(testRecord(run({ ending: { n: 12, verdict: "causal", ci: [0.5, 0.9], n_needed: null, stopped: "decisive" }, p_with: 0.8 })).role).toBe("primary");
    expect(testRecord(run({ ending: { n: 12, verdict: "ruled-out", ci: [-0.1, 0.1], n_needed: null, stopped: "decisive" } }))).not.toHaveProperty("role");
    // a decision measured without a text to look for has no P(with): no role even when causal
    expect(testRecord(decision({ ending: { n: 8, verdict: "causal", ci: [0.3, 0.9], n_needed: null } }))).not.toHaveProperty("role");
  });

  it("asks an inconclusive Newcombe test for at least the pairs it ran, and a decided one for none", () => {
    expect(newcombeNeeded(20, [-0.3, 0.4], "inconclusive", 0.2)).toBeGreaterThan(20);
    expect(newcombeNeeded(20, [-0.05, 0.05], "inconclusive", 0.2)).toBe(20);
    expect(newcombeNeeded(20, [0.3, 0.9], "causal", 0.2)).toBeNull();
  });
});

describe("every test writes its record through the one builder", () => {
  let ctx: ReplayContext;
  beforeAll(async () => {
    const r = await DEMO.run({ seed: 0, outDir: fs.mkdtempSync(path.join(os.tmpdir(), "cw-record-")), runId: "demo-seed0" });
    ctx = new ReplayContext(readRun(r.dir!), DEMO);
  });

  it("both methods of a run test give the same fields in the same order, betting adding its own", async () => {
    const betting = await runTest(ctx, { intervention: "input:vendor:portal/notes.md", target: EXFIL_TARGET, nMax: 40 });
    const newcombe = await runTest(ctx, { intervention: "input:vendor:portal/notes.md", target: EXFIL_TARGET, n: 10, method: "newcombe" });
    const bettingOnly = ["e_value", "alpha", "stop_reason"];
    expect(Object.keys(betting).filter((k) => !bettingOnly.includes(k))).toEqual(Object.keys(newcombe));
    expect(Object.keys(betting)).toEqual(expect.arrayContaining(bettingOnly));
  });

  it("a decision record has a run record's shared fields in the same order, and is saved as returned", async () => {
    const run = await runTest(ctx, { intervention: "input:web:shipping_faq", target: EXFIL_TARGET, nMax: 20 });
    const dec = await decisionTest(ctx, { decision: ctx.model.decisions[0].seq, intervention: "input:vendor:*", contains: "vendor-compliance", nMax: 20 });
    const shared = Object.keys(run).filter((k) => k in dec);
    expect(Object.keys(dec).filter((k) => k in run)).toEqual(shared);
    expect(shared).toEqual(
      expect.arrayContaining([
        "intervention",
        "target",
        "n",
        "looks",
        "n_max",
        "stopped",
        "p_with",
        "ci",
        "verdict",
        "p_value",
        "min_effect",
        "n_needed",
        "model_calls",
        "method",
        "scope",
      ]),
    );
    const saved = readTestsLog(ctx.run.dir).records.at(-1)! as Record<string, unknown>;
    for (const [k, v] of Object.entries(dec)) expect(saved[k], k).toEqual(v);
  });
});
