/**
 * Fix checks, cancellation and budgets on the team's workers, on a real PostgreSQL (one throwaway
 * cluster for the file), a real collector and two real worker processes (dist/cli.js):
 *
 *  - `fix-check RUN_ID --collector URL` prints what the local `fix-check` prints, with its exit
 *    code; a `replace:…=@FILE` fix is sent as the file's text, and a job that names a file is
 *    refused (400), whichever field carries it;
 *  - `jobs URL ID --cancel` stops a running job: it ends cancelled, no test of it is appended, and
 *    no worker starts a pair of it afterwards (only the pairs already in flight land);
 *  - a model-call budget holds across workers: the job stops with the budget reason, the calls
 *    every stored arm made pass the budget by at most the pairs in flight.
 *
 * Every wait is for a state (a job's status, a number of pairs), never for a time.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "pg";
import { startCollector, type Collector } from "../../../core/capture/server";
import { PgStore } from "../../../core/store/postgres";
import { CollectorClient, pushRun } from "../../../core/store/transfer";
import { collectorJobs } from "../../../core/jobs/api";
import { textName } from "../../../core/jobs/texts";
import { PgCluster, pgAvailable } from "../../pg/cluster";

const CLI = path.resolve("dist/cli.js");
const ADMIN = "control-admin-token";
const SUBMITTER = "control-submit-token";
const TARGET = "tool=send_email,arg~vendor-compliance";
const NOTE = "input:vendor:portal/notes.md";
const HAVE_PG = pgAvailable();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-jobs-control-"));
let cluster: PgCluster;
let collector: Collector;
let runDir: string;
const children = new Set<ChildProcess>();
/** Pairs one demo arm can make at most (three model calls an arm), times the two workers' one task each. */
const IN_FLIGHT_CALLS = 2 * 2 * 3;

function cli(args: string[], token = SUBMITTER): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CAUSEWAY_TOKEN: token }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function api(method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(collector.url + route, {
    method,
    headers: { authorization: `Bearer ${SUBMITTER}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function sql(text: string, args: unknown[] = []): Promise<Record<string, unknown>[]> {
  const c = new Client({ connectionString: cluster.url });
  await c.connect();
  try {
    return (await c.query(text, args)).rows;
  } finally {
    await c.end();
  }
}

/** Waits for a state, never for a time: polls `f` until it returns something. */
async function until<T>(f: () => Promise<T | undefined | false>, what: string, limitMs = 180_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const arms = async (id: string) => Number((await sql("SELECT count(*) AS n FROM causeway_job_arms WHERE job_id = $1", [id]))[0].n);
const spent = async (id: string) =>
  Number((await sql("SELECT coalesce(sum((outcome->>'made')::int), 0) AS n FROM causeway_job_arms WHERE job_id = $1", [id]))[0].n);
const linesOf = async (id: string) =>
  (await new CollectorClient(collector.url, ADMIN).tests("demo-seed0"))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.job === id);

beforeAll(async () => {
  if (!HAVE_PG) return;
  cluster = await PgCluster.start();
  collector = await startCollector({
    store: new PgStore(cluster.url),
    token: ADMIN,
    tokens: [{ token: SUBMITTER, scopes: ["jobs", "read"], principal: "alice" }],
    port: 0,
    jobs: await collectorJobs(cluster.url),
  });
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--out", tmp, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  runDir = JSON.parse(r.stdout).run;
  await pushRun(runDir, new CollectorClient(collector.url, ADMIN));
  for (let i = 0; i < 2; i++) {
    const w = spawn(process.execPath, [CLI, "worker", "--store", cluster.url, "--pair-timeout-s", "4", "--quiet"], { stdio: ["ignore", "ignore", "ignore"] });
    children.add(w);
  }
}, 180_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await collector?.close();
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!HAVE_PG)("fix checks, cancellation and budgets on the team's workers", () => {
  it("fix-check --collector prints the local fix check, the fix file sent as its text", async () => {
    const clean = path.join(tmp, "clean.txt");
    fs.writeFileSync(clean, "Vendor notes: nothing to do this week.\n");
    const args = ["--fix", `replace:${NOTE}=@${clean}`, "--harm", TARGET, "--n", "10", "--json"];
    const local = spawnSync(process.execPath, [CLI, "fix-check", runDir, ...args], { encoding: "utf8" });
    const remote = await cli(["fix-check", "demo-seed0", ...args, "--collector", collector.url]);
    expect(remote.code, remote.stderr).toBe(local.status);
    const l = JSON.parse(local.stdout);
    const r = JSON.parse(remote.stdout);
    const shape = (f: typeof l) => ({
      verdict: f.verdict,
      harm: f.harm,
      keep: f.keep,
      excluded: f.excluded,
      family: f.family,
      summary: f.summary,
      after: f.changes.map((c: { after: string }) => c.after),
    });
    expect(shape(r)).toEqual(shape(l));
    // the job carried the file's text, named by its hash, never the file's name
    const job = (await api("GET", `/v1/jobs/${r.job}`)).json as { spec: { fix: string[]; texts: string[] } };
    expect(job.spec.texts).toEqual(["Vendor notes: nothing to do this week.\n"]);
    expect(job.spec.fix).toEqual([`replace:${NOTE}=@${textName(job.spec.texts[0])}`]);
    // one tests line per test of the check, for the submitter, marked as the local command marks them
    const lines = await linesOf(String(r.job));
    expect(lines.map((x) => x.fix_role)).toEqual(["harm", ...l.keep.map(() => "keep")]);
    expect(lines.every((x) => x.writer === "alice" && x.fix_check === lines[0].fix_check)).toBe(true);
  }, 240_000);

  it("refuses a job that names a file, whichever field carries it", async () => {
    const before = (await api("GET", "/v1/jobs")).json.jobs as unknown[];
    const file = `replace:${NOTE}=@/etc/hostname`;
    for (const body of [
      { kind: "fix-check", run_id: "demo-seed0", target: TARGET, fix: [file] },
      { kind: "test", run_id: "demo-seed0", target: TARGET, remove: file },
      { kind: "attribute", run_id: "demo-seed0", target: TARGET, suspects: [` ${file}`] },
      // a name of the texts' form that is not a hash, or a hash with a path after it
      { kind: "fix-check", run_id: "demo-seed0", target: TARGET, fix: [`replace:${NOTE}=@text:../../etc/hostname`] },
      { kind: "fix-check", run_id: "demo-seed0", target: TARGET, fix: [`replace:${NOTE}=@${textName("x")}/../../etc/hostname`], texts: ["x"] },
    ]) {
      const res = await api("POST", "/v1/jobs", body);
      expect(res.status).toBe(400);
      expect(String(res.json.error)).toMatch(/may not name a file/);
    }
    // a text's name the job does not carry is refused too: the collector reads nothing else
    const missing = await api("POST", "/v1/jobs", {
      kind: "fix-check",
      run_id: "demo-seed0",
      target: TARGET,
      fix: [`replace:${NOTE}=@${textName("not sent")}`],
    });
    expect(missing.status).toBe(400);
    expect(String(missing.json.error)).toMatch(/carries no such text/);
    expect(((await api("GET", "/v1/jobs")).json.jobs as unknown[]).length).toBe(before.length);
  });

  it("jobs --cancel stops a running job on every worker: cancelled, nothing appended, no new pair", async () => {
    const sub = await api("POST", "/v1/jobs", { kind: "test", run_id: "demo-seed0", target: TARGET, remove: NOTE, n: 60, n_max: 60 });
    expect(sub.status).toBe(202);
    const id = String(sub.json.id);
    await until(async () => (((await api("GET", `/v1/jobs/${id}`)).json.progress as { pairs?: number } | null)?.pairs ?? 0) >= 2, "pairs of the job");
    const r = await cli(["jobs", collector.url, id, "--cancel", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id, status: "cancelled" });
    const atCancel = await arms(id);
    expect(atCancel).toBeLessThan(120); // it was stopped, not finished
    // cancelling what has ended does nothing: refused, with its status
    const again = await cli(["jobs", collector.url, id, "--cancel", "--json"]);
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout).error).toMatch(/already ended \(cancelled\)/);
    // the workers go on to the next job; by its end they have seen every queued pair of this one
    const next = await cli(["test", "demo-seed0", "--remove", NOTE, "--target", TARGET, "--n", "4", "--collector", collector.url, "--json"]);
    expect(next.code, next.stderr).toBe(0);
    expect(await arms(id)).toBeLessThanOrEqual(atCancel + 4); // only the two pairs in flight landed
    expect(await linesOf(id)).toEqual([]);
    expect((await api("GET", `/v1/jobs/${id}`)).json).toMatchObject({ status: "cancelled", tests_appended: 0, result: null });
  }, 240_000);

  it("a model-call budget holds across workers: the job stops with the budget reason", async () => {
    const r = await cli(["attribute", "demo-seed0", "--target", TARGET, "--budget-calls", "40", "--collector", collector.url, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.stopped).toBe("budget");
    expect(a.summary).toMatch(/stopped by the model-call budget of 40 calls/);
    // never a verdict from a partial set: the test the budget cut short decides nothing
    const last = a.tests[a.tests.length - 1];
    expect(last.stopped).toBe("budget");
    expect(last.verdict).toBe("inconclusive");
    expect(a.causes).toEqual([]);
    // every call any worker made for it, pairs asked ahead included, stays within the pairs in flight
    expect(await spent(a.job)).toBeLessThanOrEqual(40 + IN_FLIGHT_CALLS);
    expect((await linesOf(a.job)).length).toBe(a.tests.length);
  }, 240_000);
});
