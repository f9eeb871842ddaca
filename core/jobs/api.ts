/**
 * The collector's job routes (PostgreSQL store only):
 *
 *   POST /v1/jobs              submit {kind, run_id, target, …} (core/jobs/spec.ts)      jobs
 *   GET  /v1/jobs?limit=N      the newest jobs                                           read
 *   GET  /v1/jobs/ID           one job: status, progress, result, error                  read
 *   POST /v1/jobs/ID/cancel    ask a queued or running job to stop (its submitter or admin) jobs
 *
 * A job runs as whoever submitted it: the principal of the token (`jobs` scope, or admin) is
 * recorded as `asked_by`, and the tests the job finishes are appended for it (appendTestFor).
 * A job that would do nothing on its run (a target that never happened, a removal, fix or suspect
 * that matches nothing: core/jobs/preflight.ts) is refused at submit with 400 and the reason, and
 * no job is created.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type PgBoss from "pg-boss";
import { HttpError, readJsonBody, sendJson } from "../store/http";
import type { CollectorJobs } from "../store/job-routes";
import { JobStore, type JobRow } from "./store";
import { SpecRefused, checkSpec, type JobSpec } from "./spec";
import type { CollectorStore } from "../store/types";
import { sendDrive, startBoss, DEFAULT_TIMING } from "./queue";
import { setSpecFileReader } from "../specs/grammar";
import { jobTextReader } from "./texts";
import { materialize } from "./run-copy";
import { checkJob } from "./preflight";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { Refusal } from "../replay/preflight";

const has = (who: { scopes: Set<string> } | undefined, scope: string) => !!who && (who.scopes.has(scope) || who.scopes.has("admin"));

/** What a job answers with (the spec, never anything of the worker's). */
export const jobView = (j: JobRow) => ({
  id: j.id,
  run_id: j.run_id,
  kind: j.spec.kind,
  spec: j.spec,
  asked_by: j.asked_by,
  status: j.status,
  progress: j.progress,
  result: j.result,
  error: j.error,
  workers: j.workers,
  tests_appended: j.appended,
  created_at: j.created_at,
  updated_at: j.updated_at,
});

/**
 * The job routes of a collector on PostgreSQL at `url`. `scratch`: where a submitted job's run is
 * copied to be checked (a folder of its own a submission, removed once checked).
 */
export async function collectorJobs(url: string, log: (line: string) => void = () => {}, o: { scratch?: string } = {}): Promise<CollectorJobs> {
  // a job's specs are parsed here: they may read the texts the job carries, never a file of this machine
  setSpecFileReader(jobTextReader);
  const jobs = new JobStore(url, log);
  await jobs.init();
  // the collector only submits: no maintenance here, the workers run it
  const boss: PgBoss = await startBoss(url, DEFAULT_TIMING, log, false);
  // the run a job is checked against, copied for that check only: a long-lived collector keeps no
  // copy of every run ever submitted
  const checkAgainst = async (store: CollectorStore, runId: string, spec: JobSpec): Promise<void> => {
    const dir = fs.mkdtempSync(path.join(o.scratch ?? os.tmpdir(), "causeway-job-check-"));
    try {
      checkJob(new RunModel(readRun(await materialize(store, runId, dir))), spec);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  return {
    close: async () => {
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      await jobs.close();
    },
    handle: async (ctx, req, res) => {
      const u = new URL(req.url ?? "/", "http://collector");
      const parts = u.pathname.split("/").filter(Boolean);
      if (parts[0] !== "v1" || parts[1] !== "jobs") return false;
      const who = ctx.principalOf(req);
      if (parts.length === 2 && req.method === "POST") {
        if (!has(who, "jobs")) throw new HttpError(401, "unauthorized: submitting a job needs a token with the jobs scope");
        const body = await readJsonBody(req, Math.min(ctx.maxBody, 1 << 20), ctx.budget);
        let spec;
        try {
          spec = checkSpec(body);
        } catch (err) {
          if (err instanceof SpecRefused) throw new HttpError(400, err.message);
          throw err;
        }
        if (!(await ctx.store.getRun(spec.run_id))) throw new HttpError(404, `no run ${spec.run_id}`);
        // what the local command refuses before any model call is refused here, before any job exists
        try {
          await checkAgainst(ctx.store, spec.run_id, spec);
        } catch (err) {
          if (err instanceof Refusal) throw new HttpError(400, err.message);
          throw err;
        }
        const row = await jobs.create(randomUUID(), spec.run_id, spec, who!.principal);
        await sendDrive(boss, row.id);
        log(`job ${row.id}: ${spec.kind} of ${spec.run_id} for ${row.asked_by}`);
        sendJson(res, 202, jobView(row));
        return true;
      }
      if (parts.length === 2 && req.method === "GET") {
        if (!has(who, "read")) throw new HttpError(401, "unauthorized: listing jobs needs the read scope");
        const lim = Math.min(500, Math.max(1, Number(u.searchParams.get("limit") ?? 50) || 50));
        sendJson(res, 200, { jobs: (await jobs.list(lim)).map(jobView) });
        return true;
      }
      const id = parts[2] ?? "";
      if (!/^[0-9a-f-]{36}$/.test(id)) throw new HttpError(404, "no such job");
      if (parts.length === 3 && req.method === "GET") {
        if (!has(who, "read")) throw new HttpError(401, "unauthorized: reading a job needs the read scope");
        const j = await jobs.get(id);
        if (!j) throw new HttpError(404, "no such job");
        sendJson(res, 200, jobView(j));
        return true;
      }
      if (parts.length === 4 && parts[3] === "cancel" && req.method === "POST") {
        if (!has(who, "jobs")) throw new HttpError(401, "unauthorized: cancelling a job needs the jobs scope");
        const j = await jobs.get(id);
        if (!j) throw new HttpError(404, "no such job");
        if (j.asked_by !== who!.principal && !who!.scopes.has("admin")) throw new HttpError(403, "only who submitted a job (or admin) may cancel it");
        const ok = await jobs.cancel(id);
        await sendDrive(boss, id);
        sendJson(res, 200, { id, cancelled: ok });
        return true;
      }
      throw new HttpError(405, "not a job route");
    },
  };
}
