/**
 * `causeway worker`: takes pair batches and driver passes from the queue (core/jobs/queue.ts) on
 * any machine that reaches the database.
 *
 * Safety is the worker's: it replays only what its own `--allow-program` list names (approved as
 * the CLI approves), the built-in programs (`causeway:demo`), and agentless runs: the
 * {@link WorkerOptions.systemFor} hook, given by the host, chooses. Endpoints and
 * keys come from the worker's environment: a job carries none (core/jobs/spec.ts), and the worker
 * reads nothing from a job but its checked spec.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun } from "../log/reader";
import { deriveSeed } from "../log/hash";
import { parseIntervention, parseTarget } from "../specs/grammar";
import type { ArmOutcome } from "../replay/context";
import type { System } from "../sdk/system";
import { PgStore } from "../store/postgres";
import { appendTestFor } from "../store/owners";
import { RunModel } from "../graph/model";
import { checkJob } from "./preflight";
import { RunCopies } from "./run-copy";
import { storeTestBlobs } from "./test-blobs";
import { JobStore } from "./store";
import { SharedCacheContext } from "./shared-context";
import { DEFAULT_WINDOW, checkSpec } from "./spec";
import { BUDGET_REACHED, baseKey, drivePass, treatKey, type StoredOutcome } from "./driver";
import { DEFAULT_TIMING, DRIVE, PAIRS, PAIRS_DEAD, sendDrive, sendPairs, startBoss, type PairTask, type QueueTiming } from "./queue";

export interface WorkerOptions {
  url: string;
  /** Programs this worker may replay (exact strings, as --allow-program). */
  allow: string[];
  concurrency?: number;
  /** Pairs of one task (default 1: the finest split of a test's look-ahead over the workers). */
  batch?: number;
  timing?: Partial<QueueTiming>;
  name?: string;
  log?: (line: string) => void;
  /**
   * The System a run folder replays with, chosen by the worker's host (the CLI: the program its
   * own --allow-program approved, the built-in demo, or the agentless replay to the endpoint of
   * its own environment, else the one recorded call that made the job's target). Nothing from the
   * job reaches it but the run and the target (checked: a target spec, never code or an address).
   */
  systemFor: (runDir: string, target: string) => Promise<System>;
}

/** The look-ahead a job's spec asks for, if any. */
const specWindow = (spec: unknown): number | undefined => {
  const w = (spec as { window?: unknown } | null)?.window;
  return typeof w === "number" && Number.isSafeInteger(w) && w >= 1 && w <= 256 ? w : undefined;
};

/** How often a worker says it is alive (its capacity sets how far a test looks ahead). */
const HEARTBEAT_S = 5;
const STALL_S = 10;

export interface Worker {
  name: string;
  stop(): Promise<void>;
}

// long: the task handlers share one queue handle, store and system cache as closures; a class is next
export async function startWorker(o: WorkerOptions): Promise<Worker> {
  const log = o.log ?? (() => {});
  const name = o.name ?? `${os.hostname()}:${process.pid}`;
  const timing = { ...DEFAULT_TIMING, ...o.timing };
  const batch = o.batch ?? 1;
  const store = new PgStore(o.url, log, { max: 4 });
  const jobs = new JobStore(o.url, log);
  await store.init();
  await jobs.init();
  const boss = await startBoss(o.url, timing, log);
  /** This process's pg-boss workers (their ids), woken by {@link wake}. */
  const workers: string[] = [];
  /**
   * Wakes this process's idle workers at once (pg-boss's notifyWorker) after it queued a task:
   * pg-boss polls every pollS otherwise, and waits out the rest of that interval after each task
   * even when more are queued, which made one worker wait about 0.2 s per pair. Other processes'
   * workers still find the task at their next poll.
   */
  const wake = () => {
    for (const id of workers) boss.notifyWorker(id);
  };
  const copies = new RunCopies(fs.mkdtempSync(path.join(os.tmpdir(), "causeway-worker-")));
  const systems = new Map<string, Promise<System>>();

  /** The System of a run copy and a target (a copy refreshed since is a new key: its head differs). */
  const systemOf = (runDir: string, target: string): Promise<System> => {
    const key = JSON.stringify([runDir, fs.statSync(path.join(runDir, "events.jsonl")).size, target]);
    let s = systems.get(key);
    if (!s) {
      s = o.systemFor(runDir, target);
      systems.set(key, s);
      s.catch(() => systems.delete(key));
    }
    return s;
  };

  const runPairs = async (t: PairTask, final: boolean): Promise<void> => {
    const job = await jobs.get(t.job);
    if (!job || job.status === "done" || job.status === "failed" || job.status === "cancelled" || (await jobs.cancelRequested(t.job))) return;
    const spec = checkSpec(job.spec);
    const keys = t.items.flatMap((it) => [baseKey(it), treatKey(it)]);
    const have = await jobs.armsFor(t.job, keys);
    if (t.items.every((it) => have.has(baseKey(it)) && have.has(treatKey(it)))) return next(t.job);
    // the budget holds across workers: once their arms made the calls it allows, no pair starts
    if (spec.max_calls !== undefined && (await jobs.spent(t.job)) >= spec.max_calls) {
      for (const it of t.items) for (const k of [baseKey(it), treatKey(it)]) if (!have.has(k)) await jobs.putArm(t.job, k, null, BUDGET_REACHED, name);
      return next(t.job);
    }
    const dir = await copies.dir(store, job.run_id);
    let system: System;
    try {
      system = await systemOf(dir, spec.target);
    } catch (err) {
      // this worker may not replay the run's program: a refusal, the same on every retry here
      const why = `refused by worker ${name}: ${(err as Error).message}`;
      for (const it of t.items) await jobs.putArm(t.job, treatKey(it), null, why, name);
      await sendDrive(boss, t.job, timing);
      wake();
      return;
    }
    const ctx = new SharedCacheContext(readRun(dir), system, await jobs.cache(t.job));
    const target = parseTarget(spec.target);
    const arm = async (key: string, seed: number, specs: string[], label: string): Promise<void> => {
      if (have.has(key)) return;
      const before = ctx.counts.made;
      try {
        const out: ArmOutcome = await ctx.arm(seed, specs.map(parseIntervention), target, label);
        await jobs.putArm(t.job, key, { ...out, made: ctx.counts.made - before, rung: ctx.rung } satisfies StoredOutcome, null, name);
      } catch (err) {
        if (!final) throw err;
        await jobs.putArm(t.job, key, null, `a pair failed after its retries: ${(err as Error).message}`, name);
      }
    };
    try {
      for (const it of t.items) {
        const seed = deriveSeed(it.seedBase, job.run_id, it.j);
        await arm(baseKey(it), seed, it.baseline, `b${it.j}`);
        await arm(treatKey(it), seed, it.interventions, `t${it.j}`);
      }
    } finally {
      await jobs.putCache(t.job, ctx.fresh).catch(() => undefined);
    }
    await next(t.job);
  };

  /** One pass under the job's lock; false (nothing done) when another pass holds it. */
  const tryDrive = async (jobId: string): Promise<boolean> =>
    jobs.with(async (c) => {
      const got = (await c.query("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [`causeway.job:${jobId}`])).rows[0].ok;
      if (!got) return false;
      try {
        await drivePassOf(jobId);
        return true;
      } finally {
        await c.query("SELECT pg_advisory_unlock(hashtext($1))", [`causeway.job:${jobId}`]).catch(() => undefined);
      }
    });

  // a pass queued (or retried in a second while another pass runs)
  const drive = async (jobId: string): Promise<void> => {
    if (!(await tryDrive(jobId))) throw new Error("another pass of this job is running");
  };

  /** After storing arms: the next pass at once on this worker, else queued behind the running one. */
  const next = async (jobId: string): Promise<void> => {
    if (!(await tryDrive(jobId).catch(() => false))) {
      await sendDrive(boss, jobId, timing);
      wake();
    }
  };

  const drivePassOf = async (jobId: string): Promise<void> => {
    const job = await jobs.get(jobId);
    if (!job || job.status === "done" || job.status === "failed" || job.status === "cancelled") return;
    if (await jobs.cancelRequested(jobId)) {
      await jobs.finish(jobId, "cancelled", null, "cancelled");
      return;
    }
    // the database or the run being unreachable is transient: thrown, the pass is retried; what
    // the job itself gets wrong (its spec, a target the run never did, a failed pair) fails it
    const dir = await copies.dir(store, job.run_id);
    const arms = await jobs.arms(jobId);
    const window = specWindow(job.spec) ?? Math.max(DEFAULT_WINDOW, 2 * batch * (await jobs.capacity(3 * HEARTBEAT_S)));
    let r;
    let run;
    try {
      const spec = checkSpec(job.spec);
      run = readRun(dir);
      // what the local command refuses before any model call, the job refuses before any pair
      // (the collector refused it at submit already; the database is trusted no more than a request)
      checkJob(new RunModel(run), spec);
      // how this worker replays the run (its rung, what it can't test) shapes the pass as locally;
      // a worker that may not replay it passes none, and the pairs fail with its refusal
      const scope = await systemOf(dir, spec.target).catch(() => undefined);
      r = await drivePass(run, spec, jobId, arms, window, scope);
    } catch (err) {
      await jobs.finish(jobId, "failed", null, (err as Error).message);
      log(`job ${jobId}: failed: ${(err as Error).message}`);
      return;
    }
    if (r.state === "need") {
      await jobs.setProgress(jobId, r.progress);
      await sendPairs(boss, jobId, r.pairs, batch, timing);
      wake();
      return;
    }
    // each finished test appended once, for the submitter, with the workers that ran it; a pass
    // that died between an append and its record finds its line by (job, job_test) and skips it
    const stored = ((await store.readTests(job.run_id)) ?? Buffer.alloc(0)).toString("utf8").split("\n").filter(Boolean);
    const done = new Set(
      stored.flatMap((l) => {
        try {
          const x = JSON.parse(l) as { job?: string; job_test?: number };
          return x.job === jobId ? [x.job_test] : [];
        } catch {
          return [];
        }
      }),
    );
    // a job cancelled while this pass ran appends nothing
    if (await jobs.cancelRequested(jobId)) {
      if (!done.size) {
        await jobs.finish(jobId, "cancelled", null, "cancelled");
        return;
      }
    }
    const model = new RunModel(run);
    for (let k = 0; k < r.tests.length; k++) {
      if (done.has(k)) continue;
      // the content its edits produced goes into the run's blobs first, as the local command writes it
      await storeTestBlobs(store, job.run_id, model, r.tests[k], job.asked_by);
      const line = { ...r.tests[k], job: jobId, job_test: k, asked_by: job.asked_by, workers: r.workers };
      const v = await appendTestFor(store, job.run_id, JSON.parse(JSON.stringify(line)), job.asked_by);
      if (!v.ok) throw new Error(`appending test ${k + 1} to ${job.run_id}: ${v.error}`);
      await jobs.setAppended(jobId, k + 1);
    }
    await jobs.finish(jobId, "done", { ...r.result, workers: r.workers }, null);
    log(`job ${jobId}: done (${r.tests.length} tests)`);
  };

  for (let i = 0; i < Math.max(1, o.concurrency ?? 1); i++) {
    workers.push(
      await boss.work<PairTask>(PAIRS, { includeMetadata: true, batchSize: 1, pollingIntervalSeconds: timing.pollS }, async ([t]) =>
        runPairs(t.data, t.retryCount >= t.retryLimit),
      ),
    );
    workers.push(await boss.work<{ job: string }>(DRIVE, { batchSize: 1, pollingIntervalSeconds: timing.pollS }, async ([t]) => drive(t.data.job)));
  }
  // a batch that failed after its retries (a worker that died every time, or an error): its job fails with the reason
  workers.push(
    await boss.work<PairTask>(PAIRS_DEAD, { batchSize: 1, pollingIntervalSeconds: timing.pollS }, async ([t]) => {
      for (const it of t.data.items) await jobs.putArm(t.data.job, treatKey(it), null, "a pair batch failed after its retries", name);
      await sendDrive(boss, t.data.job, timing);
    }),
  );
  const concurrency = Math.max(1, o.concurrency ?? 1);
  // the heartbeat also wakes a job nothing moved for STALL_S (its pass lost with a killed worker):
  // a pass that finds nothing new costs a look at the stored arms
  const beat = async () => {
    try {
      await jobs.heartbeat(name, concurrency);
      for (const id of await jobs.stalled(STALL_S)) await sendDrive(boss, id, timing);
    } catch (err) {
      log(`heartbeat: ${(err as Error).message}`);
    }
  };
  await beat();
  const beating = setInterval(() => void beat(), HEARTBEAT_S * 1000);
  beating.unref();
  log(`worker ${name}: taking pairs and passes (concurrency ${concurrency})`);
  return {
    name,
    stop: async () => {
      clearInterval(beating);
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 }).catch(() => undefined);
      await jobs.leave(name).catch(() => undefined);
      await jobs.close().catch(() => undefined);
      await store.close().catch(() => undefined);
      copies.remove();
    },
  };
}
