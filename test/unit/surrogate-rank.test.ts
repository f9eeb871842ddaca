/**
 * Ranking many blocks (AttributeOptions.rankBlocks): the surrogate's prediction orders the suspects
 * (its top one becomes the lead) and never blames anything by itself: the paired tests decide.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PyRandom, System, readRun, type RunData, type Runtime } from "causeway-vscode";
import { attribute } from "../../core/replay/attribute";
import { ReplayContext } from "../../core/replay/context";
import { rankBySurrogate } from "../../core/replay/surrogate";
import { DOCS, spec, surrogateSystem } from "../../bench/surrogate";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-surrogate-test-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

async function harmful(sys: System, dir: string): Promise<RunData> {
  for (let seed = 0; seed < 200; seed++) {
    const r = await sys.run({ seed, outDir: dir, runId: `s-${seed}`, captureSites: false });
    if (r.actions.some((a) => a.tool === "delete_path")) return readRun(r.dir!);
  }
  throw new Error("no harmful run");
}

const suspects = Array.from({ length: DOCS }, (_, j) => spec(j));

describe("ranking many blocks with a surrogate", () => {
  it("predicts the planted document among 32, tests it first as the lead, and the tests blame it", async () => {
    const sys = surrogateSystem(19, "reshuffle");
    const run = await harmful(sys, tmp());
    const plain = await attribute(new ReplayContext(run, sys), {
      target: "tool=delete_path",
      suspects,
      n: 10,
      nMax: 30,
      roles: false,
      save: false,
      seedBase: "t",
    });
    const ranked = await attribute(new ReplayContext(run, sys), {
      target: "tool=delete_path",
      suspects,
      n: 10,
      nMax: 30,
      roles: false,
      save: false,
      seedBase: "t",
      rankBlocks: 48,
    });
    const ph = ranked.phases![0];
    expect(ph.predicted?.k).toBe(48);
    expect(ph.predicted?.order[0].spec).toBe(spec(19));
    expect(ph.lead).toBe(spec(19));
    expect(ranked.causes.map((c) => c.spec)).toEqual([spec(19)]);
    // the first test is the lead's, on its own: the prediction is tested, not trusted
    expect(ranked.tests[0].intervention).toBe(spec(19));
    expect(ranked.model_calls).toBeGreaterThanOrEqual(48);
    expect(plain.phases![0].predicted).toBeUndefined();
  }, 30_000);

  it("never blames by itself: when no document matters, the fit may rank one first, the tests blame nothing", async () => {
    // the agent deletes the logs half the time whatever it read
    const program = async (rt: Runtime) => {
      const a = rt.agent("ops");
      const items = suspects.map((_, j) => a.observe(`note ${j}`, { source: `kb:note-${String(j).padStart(2, "0")}`, trust: "untrusted" }));
      const d = await a.decide([rt.taskRef!, ...items], { model: "m" });
      for (const t of d.value as string[]) await a.act(t, {}, { decision: d });
    };
    const sys = new System({
      program,
      models: { m: (_c: unknown[], call: { seed: number }) => (new PyRandom(call.seed).random() < 0.5 ? ["delete_path"] : ["summarize"]) },
      tools: { delete_path: () => ({ ok: true }), summarize: () => ({ ok: true }) },
      task: "t",
      sensitiveTools: ["delete_path"],
    });
    const run = await harmful(sys, tmp());
    const ctx = new ReplayContext(run, sys);
    const r = await rankBySurrogate(ctx, { target: "tool=delete_path", suspects, k: 32 });
    expect(r.order).toHaveLength(32);
    expect(ctx.counts.made).toBe(32);
    const a = await attribute(new ReplayContext(run, sys), {
      target: "tool=delete_path",
      suspects,
      n: 10,
      nMax: 30,
      roles: false,
      save: false,
      rankBlocks: 32,
    });
    expect(a.phases![0].predicted).toBeDefined();
    expect(a.causes).toEqual([]);
    expect(a.joint).toEqual([]);
  }, 30_000);

  it("refuses a K below 2", async () => {
    const sys = surrogateSystem(3, "identical");
    const run = await harmful(sys, tmp());
    await expect(rankBySurrogate(new ReplayContext(run, sys), { target: "tool=delete_path", suspects, k: 1 })).rejects.toThrow(/k must be/);
  });
});
