/**
 * Submitting jobs on a real PostgreSQL (a throwaway cluster), a real collector, one real worker
 * process (dist/cli.js) and the fake model servers over real HTTP:
 *
 *  - a job that would do nothing on its run (a target that never happened, a removal, fix or
 *    suspect that matches nothing) is refused at submit: the CLI exits 2 with the collector's
 *    reason (one `{error, code: 2}` object with --json), says nothing of a job, and no job row or
 *    queued task is created;
 *  - a test with a `replace:` edit (a file's text, or inline): the changed content its line names
 *    is stored in the run's blobs on the collector, the same blob the local command writes, and a
 *    pulled copy still verifies;
 *  - a gateway-recorded run whose request holds a hosted tool, on a worker with no program to run:
 *    the worker falls back to rung 1 (the one recorded call that made the action, re-sent to the
 *    endpoint of its own environment with its own key) and names the planted document.
 *
 * Every wait is for a state (a job's status), never for a time.
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
import { PgCluster, pgAvailable } from "../../pg/cluster";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { recordMailer } from "../agentless/desk";

const CLI = path.resolve("dist/cli.js");
const ADMIN = "submit-admin-token";
const SUBMITTER = "submit-jobs-token";
const KEY = "sk-worker-own-key-77c1";
const TARGET = "tool=send_email,arg~vendor-compliance";
const NOTE = "input:vendor:portal/notes.md";
const VENDOR = 'input:tool:fetch_doc {"name":"vendor-note"}';
const HAVE_PG = pgAvailable();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-jobs-submit-"));
/** Where the collector copies a submitted job's run to check it. */
let checks = "";
let cluster: PgCluster;
let collector: Collector;
let recorded: FakeLlm;
let replay: FakeLlm;
let demoDir: string;
let mailer: string;
let marker: string;
let worker: ChildProcess | undefined;

/** The CLI as a submitter runs it: a token, and no model endpoint or key of its own. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, CAUSEWAY_TOKEN: SUBMITTER };
  for (const k of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]) delete env[k];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function count(table: string): Promise<number> {
  const c = new Client({ connectionString: cluster.url });
  await c.connect();
  try {
    return Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await c.end();
  }
}

const testLines = async (runId: string) =>
  (await new CollectorClient(collector.url, ADMIN).tests(runId))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  if (!HAVE_PG) return;
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 0.7 });
  marker = path.join(tmp, "executed.log");
  checks = path.join(tmp, "job-checks");
  mailer = await recordMailer(recorded.url, path.join(tmp, "runs"), marker, "mailer-hosted", { searcher: true });
  cluster = await PgCluster.start();
  fs.mkdirSync(checks);
  collector = await startCollector({
    store: new PgStore(cluster.url),
    token: ADMIN,
    tokens: [{ token: SUBMITTER, scopes: ["jobs", "read"], principal: "alice" }],
    port: 0,
    jobs: await collectorJobs(cluster.url, () => {}, { scratch: checks }),
  });
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--out", path.join(tmp, "demo"), "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  demoDir = JSON.parse(r.stdout).run;
  const client = new CollectorClient(collector.url, ADMIN);
  await pushRun(demoDir, client);
  await pushRun(mailer, client);
  // the worker's own endpoint and key, from its own environment: nothing of them is in a job or a run
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: replay.openaiBaseURL, OPENAI_API_KEY: KEY };
  worker = spawn(process.execPath, [CLI, "worker", "--store", cluster.url, "--pair-timeout-s", "20", "--quiet"], { env, stdio: ["ignore", "ignore", "pipe"] });
  worker.stderr!.on("data", () => {});
}, 180_000);

afterAll(async () => {
  worker?.kill("SIGKILL");
  await collector?.close();
  await cluster?.stop();
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!HAVE_PG)("submitting jobs", () => {
  it("refuses at submit a job that would do nothing: exit 2 with the reason, no job created", async () => {
    const jobs = await count("causeway_jobs");
    const tasks = await count("pgboss.job");
    const cases: [string[], RegExp][] = [
      [["attribute", "demo-seed0", "--target", "tool=wire_money"], /never happened in this run and names tool "wire_money", which the run never had/],
      [["attribute", "demo-seed0", "--target", "tool=send_email,arg~nobody@nowhere.example"], /did not happen in this run: there is no action to explain/],
      [["attribute", "demo-seed0", "--target", TARGET, "--suspect", "input:no-such-source"], /the removal "input:no-such-source" matches nothing in this run/],
      [
        ["test", "demo-seed0", "--target", TARGET, "--remove", "input:no-such-source"],
        /matches nothing in this run \(its sources: .*input:vendor:portal\/notes\.md/,
      ],
      [["test", "demo-seed0", "--target", "tool=wire_money", "--remove", NOTE], /names tool "wire_money"/],
      [["fix-check", "demo-seed0", "--harm", TARGET, "--fix", `redact:${NOTE}~not-in-the-note-at-all`], /redacts nothing/],
      [["fix-check", "demo-seed0", "--harm", TARGET, "--fix", "replace:input:no-such-source=clean"], /names no item of this run/],
    ];
    for (const [args, why] of cases) {
      const r = await cli([...args, "--collector", collector.url, "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      const e = JSON.parse(r.stdout);
      expect(e.code).toBe(2);
      expect(e.error).toMatch(why);
      expect(e.error).toMatch(/^refused by the collector: /);
      expect(r.stderr).not.toMatch(/submitted job|job [0-9a-f-]{36}/);
    }
    // without --json: the reason on stderr, nothing on stdout
    const text = await cli([...cases[0][0], "--collector", collector.url]);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe("");
    expect(text.stderr).toMatch(cases[0][1]);
    expect(await count("causeway_jobs")).toBe(jobs);
    expect(await count("pgboss.job")).toBe(tasks);
    expect(await testLines("demo-seed0")).toEqual([]);
  }, 120_000);

  it("a replace: edit's content reaches the collector's copy, as the local command writes it, and the copy verifies", async () => {
    const clean = path.join(tmp, "clean.txt");
    fs.writeFileSync(clean, "Vendor notes:\n  nothing to do this week.\n");
    const inline = "Nothing for the desk to do.";
    for (const [remove, text] of [
      [`replace:${NOTE}=@${clean}`, fs.readFileSync(clean, "utf8")],
      [`replace:${NOTE}=${inline}`, inline],
    ]) {
      const args = ["test", "demo-seed0", "--remove", remove, "--target", TARGET, "--n", "4", "--json"];
      const remote = await cli([...args, "--collector", collector.url]);
      expect(remote.code, remote.stderr).toBe(0);
      const job = JSON.parse(remote.stdout);
      const line = (await testLines("demo-seed0")).find((l) => l.job === job.job)!;
      const after = (line.changes as { after: string }[]).map((c) => c.after);
      expect(after.length).toBeGreaterThan(0);
      // the local command's line names the same content, which it writes into the run folder
      const local = spawnSync(process.execPath, [CLI, ...args.map((a) => (a === "demo-seed0" ? demoDir : a))], { encoding: "utf8" });
      expect(local.status, local.stderr).toBe(0);
      expect(after).toEqual(JSON.parse(local.stdout).changes.map((c: { after: string }) => c.after));
      const pulled = await pullRun(new CollectorClient(collector.url, ADMIN), "demo-seed0", path.join(tmp, "pulled"));
      expect(pulled.ok, pulled.problems.join("; ")).toBe(true);
      for (const ref of after) {
        const file = `blobs/${ref.slice(7)}.json`;
        expect(fs.readFileSync(path.join(pulled.dir, file), "utf8")).toBe(fs.readFileSync(path.join(demoDir, file), "utf8"));
        expect(JSON.parse(fs.readFileSync(path.join(pulled.dir, file), "utf8")).v).toBe(text);
      }
      const verify = spawnSync(process.execPath, [CLI, "verify", pulled.dir, "--json"], { encoding: "utf8" });
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    }
  }, 180_000);

  it("a run with a hosted tool on a worker with no program: rung 1, the planted document named, only the deciding call sent with the worker's key", async () => {
    const ran = fs.readFileSync(marker, "utf8");
    const seen = recorded.requests.length;
    const before = replay.requests.length;
    const runId = path.basename(mailer);
    const r = await cli(["attribute", runId, "--target", TARGET, "--collector", collector.url, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.rung).toBe(1);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([VENDOR]);
    expect(a.causes[0].role).toBe("primary");
    for (const t of a.tests) {
      expect(t.rung).toBe(1);
      expect(t.assumptions.join(" ")).toMatch(/only the recorded call #\d+ \(mailer\) that made the action is re-sent/);
    }
    const lines = (await testLines(runId)).filter((l) => l.job === a.job);
    expect(lines.length).toBe(a.tests.length);
    expect(lines.every((l) => l.rung === 1 && l.writer === "alice")).toBe(true);
    // only the mailer's deciding call went out, to the worker's endpoint with the worker's key
    const sent = replay.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((q) => q.body.messages[0].content.startsWith("You are the mailer") && q.body.web_search_options === undefined)).toBe(true);
    expect(sent.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(recorded.requests.length).toBe(seen);
    expect(fs.readFileSync(marker, "utf8")).toBe(ran);
  }, 180_000);

  it("keeps no copy of a run once its job is checked", () => {
    // every submission above copied its run to be checked: none of the copies is left
    expect(fs.readdirSync(checks)).toEqual([]);
  });
});
