/**
 * The job's model-call cache (core/jobs/cache.ts) gives back exactly what the model gave, through
 * a real PostgreSQL table: a replay whose every arm loads the cache from the table and stores what
 * it computed (as a worker does per pair) makes the model calls and reaches the verdicts of a
 * replay in one process. Through plain JSON the refund's amount 89.0 came back as 89: the refund
 * no longer matched the tape, later calls missed the cache, 626 model calls instead of 543.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PyFloat, dumps, pyFloat } from "../../../core/log/pyjson";
import { refOf } from "../../../core/log/hash";
import { readRun } from "../../../core/log/reader";
import { ReplayContext, type ArmOutcome } from "../../../core/replay/context";
import { attribute } from "../../../core/replay/attribute";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import type { Intervention, Target } from "../../../core/specs/grammar";
import { decodeEntry, encodeEntry } from "../../../core/jobs/cache";
import { SharedCacheContext } from "../../../core/jobs/shared-context";
import { JobStore } from "../../../core/jobs/store";
import { PgCluster, pgAvailable } from "../../pg/cluster";

const CLI = path.resolve("dist/cli.js");
const HAVE_PG = pgAvailable();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-job-cache-"));
let cluster: PgCluster;
let jobs: JobStore;

beforeAll(async () => {
  if (!HAVE_PG) return;
  cluster = await PgCluster.start();
  jobs = new JobStore(cluster.url);
  await jobs.init();
}, 180_000);

afterAll(async () => {
  await jobs?.close();
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe("the job's model-call cache", () => {
  it("writes a value losslessly: Python floats, big integers and key order survive", () => {
    const value = {
      steps: [{ tool: "issue_refund", args: { order_id: 1042, amount: pyFloat(89) } }],
      z: 1,
      a: [0.5, 12345678901234567890n, null, "é\n\u0000"],
    };
    const text = dumps(value, "ordered");
    expect(text).toBe('{"steps":[{"tool":"issue_refund","args":{"order_id":1042,"amount":89.0}}],"z":1,"a":[0.5,12345678901234567890,null,"é\\n\\u0000"]}');
    const back = decodeEntry(JSON.parse(JSON.stringify(encodeEntry({ value, usage: { input_tokens: 3 } }))))!;
    expect(refOf(back.value)).toBe(refOf(value));
    expect(Object.keys(back.value as object)).toEqual(["steps", "z", "a"]);
    expect((back.value as typeof value).steps[0].args.amount).toBeInstanceOf(PyFloat);
    expect(back.usage).toEqual({ input_tokens: 3 });
    // what this version did not write is a miss, never a wrong value
    expect(decodeEntry({ value: { amount: 89 } })).toBeUndefined();
    expect(decodeEntry("{not json")).toBeUndefined();
    expect(decodeEntry('{"other":1}')).toBeUndefined();
  });

  it.skipIf(!HAVE_PG)(
    "a replay through the table makes the calls and verdicts of one process",
    async () => {
      // a run of the demo whose Find the cause goes on to the other inputs (six tests): its plans
      // carry the refund's amount, a Python float, from the cache into the executor's tool call
      const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--run-id", "jobs-slow-demo-seed0", "--out", tmp, "--json"], {
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      const run = readRun(JSON.parse(r.stdout).run);
      const sys = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
      const JOB = "job-cache-test";
      /** Each arm as a worker runs one: the cache loaded from the table, what it made stored back. */
      class ViaTable extends ReplayContext {
        override async arm(seed: number, ivs: Intervention[], target: Target, label: string): Promise<ArmOutcome> {
          const c = new SharedCacheContext(this.run, this.system, await jobs.cache(JOB));
          c.budget = this.budget;
          const out = await c.arm(seed, ivs, target, label);
          await jobs.putCache(JOB, c.fresh);
          this.counts.made += c.counts.made;
          this.counts.naive += c.counts.naive;
          return out;
        }
      }
      const target = "tool=send_email,arg~vendor-compliance";
      const local = await attribute(new ReplayContext(run, sys), { target, save: false });
      const shared = await attribute(new ViaTable(run, sys, { cache: false }), { target, save: false });
      const shape = (a: typeof local) => a.tests.map((t) => [t.intervention, t.verdict, t.n, t.off_tape_actions]);
      expect(local.tests.length).toBeGreaterThan(2);
      expect(shape(shared)).toEqual(shape(local));
      expect(shared.model_calls).toBe(local.model_calls);
    },
    120_000,
  );
});
