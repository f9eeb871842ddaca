/**
 * Investigations as jobs on a real PostgreSQL (a throwaway cluster), a real collector and real
 * worker processes (dist/cli.js): Find the cause of the demo's exfiltrating run submitted through
 * the collector with `causeway attribute --collector`, one worker killed with SIGKILL and
 * PostgreSQL restarted while the job runs; the job must give the local attribution's causes and
 * roles with at most 1.5 × its model calls, one tests line per finished test, and a copy that
 * still verifies. Then the attacks: a token without the jobs scope, a job carrying an endpoint, a
 * key or a program, and a run whose program the workers did not allow.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "pg";
import { startCollector, type Collector } from "../../../core/capture/server";
import { PgStore } from "../../../core/store/postgres";
import { CollectorClient, pullRun, pushRun } from "../../../core/store/transfer";
import { collectorJobs } from "../../../core/jobs/api";
import { readRun } from "../../../core/log/reader";
import { ReplayContext } from "../../../core/replay/context";
import { attribute } from "../../../core/replay/attribute";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { PgCluster, pgAvailable } from "../../pg/cluster";

const CLI = path.resolve("dist/cli.js");
const ADMIN = "jobs-admin-token";
const READER = "jobs-read-token";
const SUBMITTER = "jobs-submit-token";
const TARGET = "tool=send_email,arg~vendor-compliance";
const HAVE_PG = pgAvailable();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-jobs-"));
let cluster: PgCluster;
let collector: Collector;
const children = new Set<ChildProcess>();

function worker(args: string[] = []): ChildProcess {
  const p = spawn(process.execPath, [CLI, "worker", "--store", cluster.url, "--pair-timeout-s", "4", "--quiet", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  p.stderr.on("data", () => {});
  children.add(p);
  p.on("exit", () => children.delete(p));
  return p;
}

function record(program: string, seed: number): string {
  const out = path.join(tmp, `rec-${seed}-${program.length}`);
  const r = spawnSync(process.execPath, [CLI, "record", program, "--seed", String(seed), "--out", out, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout).run as string;
}

async function api(method: string, route: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(collector.url + route, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Waits for a state, never for a time: polls `f` until it returns something. */
async function until<T>(f: () => Promise<T | undefined | false>, what: string, limitMs = 240_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function jobRow(id: string): Promise<Record<string, unknown> | undefined> {
  const c = new Client({ connectionString: cluster.url });
  await c.connect();
  try {
    return (await c.query("SELECT * FROM causeway_jobs WHERE id = $1", [id])).rows[0];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  if (!HAVE_PG) return;
  cluster = await PgCluster.start();
  const jobs = await collectorJobs(cluster.url);
  collector = await startCollector({
    store: new PgStore(cluster.url),
    token: ADMIN,
    tokens: [
      { token: READER, scopes: ["read", "ingest"], principal: "reader" },
      { token: SUBMITTER, scopes: ["jobs", "read"], principal: "alice" },
    ],
    port: 0,
    jobs,
  });
}, 180_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await collector?.close();
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!HAVE_PG)("Find the cause on the team's workers", () => {
  it("survives a killed worker and a PostgreSQL restart with the local verdicts, each test appended once", async () => {
    const dir = record("causeway:demo", 0);
    const client = new CollectorClient(collector.url, ADMIN);
    expect((await pushRun(dir, client)).sent).toBeGreaterThan(0);
    // the local attribution of the same run (in-process, the demo's seeded model)
    const sys = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
    const local = await attribute(new ReplayContext(readRun(dir), sys), { target: TARGET, n: 10, nMax: 80, save: false });
    expect(local.causes.length).toBeGreaterThan(0);

    const ws = [worker(), worker(), worker()];
    const sub = spawn(process.execPath, [CLI, "attribute", "demo-seed0", "--target", TARGET, "--collector", collector.url, "--json"], {
      env: { ...process.env, CAUSEWAY_TOKEN: SUBMITTER },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    sub.stdout.on("data", (d) => (stdout += d));
    sub.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => sub.on("close", r));
    const id = await until(async () => /submitted job ([0-9a-f-]{36})/.exec(stderr)?.[1], "the job id");
    // kill a worker once pairs are being stored, then restart PostgreSQL while the job goes on
    await until(async () => Number(((await jobRow(id))?.progress as { pairs?: number } | null)?.pairs ?? 0) >= 2, "first pairs");
    ws[0].kill("SIGKILL");
    await cluster.stopServer();
    await cluster.startServer();
    const code = await exited;
    expect(code, stderr).toBe(0);
    const r = JSON.parse(stdout);
    expect(r.causes.map((c: { spec: string; role: string }) => [c.spec, c.role])).toEqual(local.causes.map((c) => [c.spec, c.role]));
    expect(r.tests.map((t: { intervention: string; verdict: string; n: number }) => [t.intervention, t.verdict, t.n])).toEqual(
      local.tests.map((t) => [t.intervention, t.verdict, t.n]),
    );
    expect(r.model_calls).toBeLessThanOrEqual(1.5 * local.model_calls);
    // every model call any worker stored, wasted look-ahead pairs included
    const c = new Client({ connectionString: cluster.url });
    await c.connect();
    const made = Number((await c.query("SELECT coalesce(sum((outcome->>'made')::int), 0) AS n FROM causeway_job_arms WHERE job_id = $1", [id])).rows[0].n);
    await c.end();
    expect(made).toBeLessThanOrEqual(1.5 * local.model_calls);
    // one line per finished test on the collector's copy, for the submitter, never twice
    const lines = (await client.tests("demo-seed0"))
      .toString("utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const mine = lines.filter((l) => l.job === id);
    expect(mine.map((l) => l.job_test)).toEqual(r.tests.map((_: unknown, k: number) => k));
    expect(mine.every((l) => l.asked_by === "alice" && l.writer === "alice" && l.workers.length >= 1)).toBe(true);
    const pulled = await pullRun(client, "demo-seed0", path.join(tmp, "pulled"));
    expect(pulled.ok, pulled.problems.join("; ")).toBe(true);
    for (const w of ws) w.kill("SIGTERM");
  }, 300_000);

  it("refuses a token without the jobs scope and a job carrying an endpoint, a key or a program", async () => {
    const spec = { kind: "attribute", run_id: "demo-seed0", target: TARGET };
    expect((await api("POST", "/v1/jobs", READER, spec)).status).toBe(401);
    expect((await api("POST", "/v1/jobs", "not-a-token", spec)).status).toBe(401);
    for (const extra of [
      { endpoint: "http://evil.example/v1" },
      { api_key: "sk-x" },
      { program: "/tmp/evil.js:SYSTEM" },
      { allow_program: ["x"] },
      { env: { OPENAI_BASE_URL: "http://evil" } },
    ]) {
      const res = await api("POST", "/v1/jobs", SUBMITTER, { ...spec, ...extra });
      expect(res.status).toBe(400);
      expect(String(res.json.error)).toMatch(/may not carry/);
    }
    const list = await api("GET", "/v1/jobs", SUBMITTER);
    expect((list.json.jobs as unknown[]).length).toBe(1); // only the job of the first test was taken
  });

  it("a worker replays no program its own --allow-program does not name: the job fails with the refusal", async () => {
    const dir = record("test/fixtures/programs/plain.cjs:SYSTEM", 1);
    const client = new CollectorClient(collector.url, ADMIN);
    await pushRun(dir, client);
    const runId = path.basename(dir);
    const w = worker();
    const res = await api("POST", "/v1/jobs", SUBMITTER, {
      kind: "test",
      run_id: runId,
      target: "tool=forward,arg~eve@evil.example",
      remove: "input:mail:inbox",
      n: 4,
    });
    expect(res.status).toBe(202);
    const id = String(res.json.id);
    const row = await until(async () => {
      const j = (await api("GET", `/v1/jobs/${id}`, SUBMITTER)).json;
      return j.status === "failed" || j.status === "done" ? j : undefined;
    }, "the job to end");
    expect(row.status).toBe("failed");
    expect(String(row.error)).toMatch(/refused by worker .*allow-program/);
    expect((await client.tests(runId)).length).toBe(0); // no verdict from nothing
    w.kill("SIGTERM");
  }, 120_000);
});
