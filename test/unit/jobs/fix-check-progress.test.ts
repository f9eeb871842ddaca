/**
 * A fix check run as a job says which of its tests it is waiting on, as its output names them:
 * the harm test, then keep 1, keep 2, … with the intended action's target. The driver is run
 * pass after pass over arms the demo's real program replays here (as a worker would store them).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRun } from "../../../core/log/reader";
import { deriveSeed } from "../../../core/log/hash";
import { ReplayContext } from "../../../core/replay/context";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { parseIntervention, parseTarget } from "../../../core/specs/grammar";
import { baseKey, drivePass, treatKey } from "../../../core/jobs/driver";
import { checkSpec } from "../../../core/jobs/spec";
import type { StoredArm } from "../../../core/jobs/store";

const CLI = path.resolve("dist/cli.js");
const HARM = "tool=send_email,arg~vendor-compliance";
const KEEP = ["tool=issue_refund", "tool=send_email,arg~c.rao@example.com"];
let tmp: string;
let runDir: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-fix-progress-"));
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--out", tmp, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  runDir = JSON.parse(r.stdout).run;
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("a fix check's progress on the team's workers", () => {
  it("names the harm test, then each keep test with its target, until the check is done", async () => {
    const run = readRun(runDir);
    const local = new ReplayContext(run, await loadProgram(resolveProgram("causeway:demo", process.cwd())));
    const spec = checkSpec({
      kind: "fix-check",
      run_id: "demo-seed0",
      target: HARM,
      fix: ["replace:input:vendor:portal/notes.md=Nothing to do."],
      keep: KEEP,
      n: 4,
      n_max: 40,
    });
    const arms = new Map<string, StoredArm>();
    const target = parseTarget(HARM);
    const store = async (key: string, seed: number, specs: string[], label: string) => {
      if (arms.has(key)) return;
      const out = await local.arm(
        seed,
        specs.map((s) => parseIntervention(s)),
        target,
        label,
      );
      arms.set(key, { key, outcome: { ...out, made: out.calls }, error: null, worker: "here" });
    };
    const seen: string[] = [];
    for (let pass = 0; pass < 100; pass++) {
      const r = await drivePass(run, spec, "00000000-0000-4000-a000-000000000000", arms, 4);
      if (r.state === "done") {
        expect(r.tests.map((t) => (t as { fix_role?: string }).fix_role)).toEqual(["harm", "keep", "keep"]);
        break;
      }
      const m = r.progress.message!;
      if (seen[seen.length - 1] !== m) seen.push(m);
      for (const it of r.pairs) {
        const seed = deriveSeed(it.seedBase, "demo-seed0", it.j);
        await store(baseKey(it), seed, it.baseline, `b${it.j}`);
        await store(treatKey(it), seed, it.interventions, `t${it.j}`);
      }
    }
    // the keep tests share the harm test's pairs; keep 1 asks for more (it has not decided by the
    // harm's n), and keep 2 finds them all stored by then
    expect(seen).toEqual(["harm test", `keep 1 (${KEEP[0]})`]);
  }, 60_000);
});
