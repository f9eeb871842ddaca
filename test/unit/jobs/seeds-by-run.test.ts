/**
 * Why the benchmark's two scenarios ran 2 and 6 tests for "the same" Find the cause: each pair's
 * seed is derived from the run's id (deriveSeed("cf", run_id, j)), and the scenarios recorded two
 * runs (`demo-seed0`, `jobs-slow-demo-seed0`). On one run, Find the cause is the same in this
 * process and in the out-of-process replay worker (dist/worker.js); the same program on a run
 * recorded under the other id is another sequence of pairs, with its own number of tests.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { readRun } from "../../../core/log/reader";
import { ReplayContext } from "../../../core/replay/context";
import { attribute } from "../../../core/replay/attribute";
import type { Attribution } from "../../../core/replay/attribute-types";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { runInWorker } from "../../../core/replay/client";

const CLI = path.resolve("dist/cli.js");
const TARGET = "tool=send_email,arg~vendor-compliance";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-seeds-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function record(runId: string): string {
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--run-id", runId, "--out", tmp, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout).run as string;
}

const shape = (a: Attribution) => ({
  calls: a.model_calls,
  tests: a.tests.map((t) => [t.intervention, t.verdict, t.n]),
  causes: a.causes.map((c) => [c.spec, c.role]),
});

describe("the tests of a Find the cause follow the run, not the process", () => {
  it("agrees in and out of process on one run; another run id is another sequence of pairs", async () => {
    const sys = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
    const demo = record("demo-seed0");
    const inProcess = await attribute(new ReplayContext(readRun(demo), sys), { target: TARGET, save: false });
    const outOfProcess = (await runInWorker(
      { op: "attribute", run: demo, program: "causeway:demo", root: process.cwd(), target: TARGET },
      { workerPath: path.resolve("dist/worker.js") },
    )) as Attribution;
    expect(shape(outOfProcess)).toEqual(shape(inProcess));
    expect(inProcess.tests.length).toBe(2);
    // the same program and recording seed under the slow scenario's run id
    const other = await attribute(new ReplayContext(readRun(record("jobs-slow-demo-seed0")), sys), { target: TARGET, save: false });
    expect(other.tests.length).toBe(6);
    expect(other.causes.map((c) => c.spec)).toEqual(inProcess.causes.map((c) => c.spec));
  }, 120_000);
});
