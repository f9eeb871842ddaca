/**
 * One job's pairs are replayed one way: when a worker stored arms at another rung than the job's
 * (workers configured differently: one may re-run the program, another replays without it), the
 * test fails with the reason instead of mixing the two kinds of evidence into one verdict. The
 * driver is run over arms the demo's real program replays here, as a worker would store them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRun, type RunData } from "../../../core/log/reader";
import { deriveSeed } from "../../../core/log/hash";
import { ReplayContext } from "../../../core/replay/context";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { parseIntervention, parseTarget } from "../../../core/specs/grammar";
import { baseKey, drivePass, treatKey } from "../../../core/jobs/driver";
import { checkSpec, type JobSpec } from "../../../core/jobs/spec";
import type { StoredArm } from "../../../core/jobs/store";
import type { System } from "../../../core/sdk/system";

const CLI = path.resolve("dist/cli.js");
const TARGET = "tool=send_email,arg~vendor-compliance";
const JOB = "00000000-0000-4000-a000-000000000001";
let tmp: string;
let run: RunData;
let demo: System;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-mixed-rungs-"));
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--out", tmp, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  run = readRun(JSON.parse(r.stdout).run);
  demo = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Drives the job to its end, storing each asked arm at `rungOf(label)`; returns how it ended. */
async function drive(spec: JobSpec, rungOf: (label: string) => number, scope?: System): Promise<{ done: boolean; error?: string }> {
  const local = new ReplayContext(run, demo);
  const arms = new Map<string, StoredArm>();
  const target = parseTarget(spec.target);
  const store = async (key: string, seed: number, specs: string[], label: string) => {
    if (arms.has(key)) return;
    const out = await local.arm(seed, specs.map(parseIntervention), target, label);
    arms.set(key, { key, outcome: { ...out, made: out.calls, rung: rungOf(label) }, error: null, worker: label.startsWith("t") ? "worker-b" : "worker-a" });
  };
  for (let pass = 0; pass < 100; pass++) {
    let r;
    try {
      r = await drivePass(run, spec, JOB, arms, 4, scope);
    } catch (err) {
      return { done: false, error: (err as Error).message };
    }
    if (r.state === "done") return { done: true };
    for (const it of r.pairs) {
      const seed = deriveSeed(it.seedBase, "demo-seed0", it.j);
      await store(baseKey(it), seed, it.baseline, `b${it.j}`);
      await store(treatKey(it), seed, it.interventions, `t${it.j}`);
    }
  }
  throw new Error("the job never ended");
}

describe("a job's pairs at one rung", () => {
  const spec = () => checkSpec({ kind: "test", run_id: "demo-seed0", target: TARGET, remove: "input:vendor:portal/notes.md", n: 6, n_max: 6 });

  it("a job whose workers all replayed the program ends with its test", async () => {
    expect(await drive(spec(), () => 3, demo)).toEqual({ done: true });
  }, 60_000);

  it("arms at rung 2 beside a driver at rung 3 fail the test, naming the worker and both rungs", async () => {
    const r = await drive(spec(), (label) => (label.startsWith("t") ? 2 : 3), demo);
    expect(r.done).toBe(false);
    expect(r.error).toMatch(/worker worker-b replayed this run at rung 2 where this job replays it at rung 3: .*same configuration/);
  }, 60_000);

  it("a driver that can't replay the run holds the arms to one rung among themselves", async () => {
    expect(await drive(spec(), () => 2)).toEqual({ done: true });
    const r = await drive(spec(), (label) => (label.startsWith("t") ? 2 : 3));
    expect(r.error).toMatch(/replayed this run at rung [23] where this job replays it at rung [23]/);
  }, 60_000);
});
