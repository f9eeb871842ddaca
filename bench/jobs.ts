/**
 * Find the cause on the team's workers (`npm run bench:jobs`): a throwaway PostgreSQL cluster, one
 * collector process (`causeway serve --store`), and 1, 2 and 4 worker processes (`causeway
 * worker`), on the demo's exfiltrating run (seed 0):
 *
 *  demo   the built-in `causeway:demo`, whose seeded model is in-process (CPU-bound);
 *  slow   the same program with every model call making one round trip to the fake model server
 *         at 300 ms (bench/jobs-slow-demo.ts), as a hosted model would;
 *  faults slow, 3 workers, one killed with SIGKILL and PostgreSQL restarted while the job runs.
 *
 * Each row: wall time from submitting (`causeway attribute RUN --collector URL --json`) to the
 * result, model calls the result counts, model calls every stored arm made (look-ahead pairs the
 * test never used included), whether causes, roles and each test's verdict and pair count equal
 * the local `causeway attribute` of the same run, and test lines appended on the collector.
 *
 * Options: --workers 1,2,4 --out bench/results [--tag T] [--latency-ms 300] [--scenarios demo,slow,faults]
 * (faults runs after slow, with its local result)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "pg";
import { PgCluster } from "../test/pg/cluster";
import { startFakeLlm } from "../test/fake-llm/server";
import { CollectorClient, pullRun, pushRun } from "../core/store/transfer";
import { writeResult, runAsCommand } from "./output";

const TOKEN = "bench-jobs-token";
const TARGET = "tool=send_email,arg~vendor-compliance";
const SLOW = "bench/jobs-slow-demo.ts:SYSTEM";
const dist = path.dirname(process.argv[1] ?? __filename);
const CLI = path.join(dist, "..", "cli.js");
const ROOT = path.resolve(dist, "..", "..");

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env, cwd: ROOT });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
  });
}

async function until<T>(f: () => Promise<T | undefined | false>, what: string, limitMs = 600_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Attr {
  causes: { spec: string; role: string }[];
  tests: { intervention: string; verdict: string; n: number }[];
  model_calls: number;
}
const shape = (a: Attr) => JSON.stringify({ causes: a.causes.map((c) => [c.spec, c.role]), tests: a.tests.map((t) => [t.intervention, t.verdict, t.n]) });

async function main(argv: string[]): Promise<number> {
  const opt = (k: string, d: string) => {
    const i = argv.indexOf(`--${k}`);
    return i >= 0 ? argv[i + 1] : d;
  };
  const counts = opt("workers", "1,2,4").split(",").map(Number);
  const outDir = path.resolve(opt("out", "bench/results"));
  const tag = opt("tag", new Date().toISOString().slice(0, 10));
  const latency = Number(opt("latency-ms", "300"));
  const scenarios = opt("scenarios", "demo,slow,faults").split(",");
  const log = (s: string) => process.stderr.write(s + "\n");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cw-bench-jobs-"));
  const cluster = await PgCluster.start();
  const llm = await startFakeLlm({ latencyMs: latency });
  const env = { ...process.env, CAUSEWAY_TOKEN: TOKEN, CAUSEWAY_BENCH_LLM_URL: llm.url };
  const port = await freePort();
  const collector = spawn(process.execPath, [CLI, "serve", "--store", cluster.url, "--port", String(port), "--quiet"], {
    env,
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const workers = new Set<ChildProcess>();
  const loadAvg: number[] = [];
  const sampler = setInterval(() => loadAvg.push(os.loadavg()[0]), 5000);
  /** One query on a fresh connection (the database is restarted in the faults scenario). */
  const sql = async (text: string, args: unknown[] = []) => {
    const c = new Client({ connectionString: cluster.url });
    await c.connect();
    try {
      return (await c.query(text, args)).rows;
    } finally {
      await c.end();
    }
  };
  try {
    await until(async () => (await fetch(`${url}/healthz`)).ok, "the collector");
    const client = new CollectorClient(url, TOKEN);
    const record = async (program: string): Promise<{ dir: string; runId: string }> => {
      const r = await run(["record", program, "--seed", "0", "--out", path.join(work, "rec"), "--json"], env);
      if (r.code !== 0) throw new Error(r.stderr);
      const j = JSON.parse(r.stdout);
      await pushRun(j.run, client);
      return { dir: j.run, runId: j.run_id };
    };
    const startWorkers = async (n: number): Promise<ChildProcess[]> => {
      await sql("DELETE FROM causeway_workers").catch(() => undefined);
      const ws = Array.from({ length: n }, () => {
        const w = spawn(process.execPath, [CLI, "worker", "--store", cluster.url, "--allow-program", SLOW, "--pair-timeout-s", "20", "--quiet"], {
          env,
          cwd: ROOT,
          stdio: ["ignore", "ignore", "inherit"],
        });
        workers.add(w);
        w.on("exit", () => workers.delete(w));
        return w;
      });
      await until(async () => Number((await sql("SELECT count(*) AS n FROM causeway_workers"))[0].n) >= n, "workers");
      return ws;
    };
    const stopWorkers = async (ws: ChildProcess[]) => {
      await Promise.all(
        ws.map((w) =>
          w.exitCode !== null || w.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => (w.once("exit", () => r()), w.kill("SIGTERM"))),
        ),
      );
    };
    const jobOf = async (runId: string, stderr: string) => {
      const id = /submitted job ([0-9a-f-]{36})/.exec(stderr)?.[1];
      const made = Number((await sql("SELECT coalesce(sum((outcome->>'made')::int), 0) AS n FROM causeway_job_arms WHERE job_id = $1", [id]))[0].n);
      const lines = (await client.tests(runId))
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { job?: string; job_test?: number });
      const mine = lines.filter((l) => l.job === id).map((l) => l.job_test!);
      return { id, made, lines: mine.length, once: new Set(mine).size === mine.length };
    };

    const rows: Record<string, unknown>[] = [];
    for (const [name, program] of [
      ["demo", "causeway:demo"],
      ["slow", SLOW],
    ] as const) {
      if (!scenarios.includes(name)) continue;
      const { dir, runId } = await record(program);
      const local = await run(["attribute", dir, "--target", TARGET, "--allow-program", SLOW, "--json"], env);
      if (local.code !== 0) throw new Error(local.stderr);
      const l = JSON.parse(local.stdout) as Attr;
      rows.push({
        scenario: name,
        workers: "local",
        wall_s: Math.round(local.ms / 100) / 10,
        model_calls: l.model_calls,
        stored_calls: l.model_calls,
        same: true,
        tests: l.tests.length,
        lines_once: true,
      });
      log(`${name} local: ${Math.round(local.ms)} ms, ${l.model_calls} calls`);
      for (const n of counts) {
        const ws = await startWorkers(n);
        const r = await run(["attribute", runId, "--target", TARGET, "--collector", url, "--json"], env);
        if (r.code !== 0) throw new Error(r.stderr);
        const a = JSON.parse(r.stdout) as Attr;
        const j = await jobOf(runId, r.stderr);
        rows.push({
          scenario: name,
          workers: n,
          wall_s: Math.round(r.ms / 100) / 10,
          model_calls: a.model_calls,
          stored_calls: j.made,
          same: shape(a) === shape(l),
          tests: a.tests.length,
          lines: j.lines,
          lines_once: j.once && j.lines === a.tests.length,
        });
        log(`${name} ${n} workers: ${Math.round(r.ms)} ms, ${a.model_calls} calls (${j.made} stored), same ${shape(a) === shape(l)}`);
        await stopWorkers(ws);
      }
      if (name === "slow" && scenarios.includes("faults")) {
        // faults: 3 workers; one SIGKILLed once pairs are stored, then PostgreSQL restarted
        const ws = await startWorkers(3);
        const sub = run(["attribute", runId, "--target", TARGET, "--collector", url, "--json"], env);
        await until(
          async () => Number((await sql("SELECT max((progress->>'pairs')::int) AS n FROM causeway_jobs WHERE status = 'running'"))[0].n ?? 0) >= 4,
          "pairs of the fault job",
        );
        ws[0].kill("SIGKILL");
        await cluster.stopServer();
        await cluster.startServer();
        const r = await sub;
        if (r.code !== 0) throw new Error(r.stderr);
        const a = JSON.parse(r.stdout) as Attr;
        const j = await jobOf(runId, r.stderr);
        const pulled = await pullRun(client, runId, path.join(work, "pulled"));
        rows.push({
          scenario: "slow, 1 of 3 workers killed + PostgreSQL restarted",
          workers: 3,
          wall_s: Math.round(r.ms / 100) / 10,
          model_calls: a.model_calls,
          stored_calls: j.made,
          same: shape(a) === shape(l),
          tests: a.tests.length,
          lines: j.lines,
          lines_once: j.once && j.lines === a.tests.length,
          verified: pulled.ok,
        });
        log(`faults: ${Math.round(r.ms)} ms, same ${shape(a) === shape(l)}, verified ${pulled.ok}`);
        await stopWorkers(ws);
      }
    }
    const result = {
      machine: {
        cpus: os.cpus().length,
        load_avg_1m: {
          min: Math.round(Math.min(...loadAvg) * 10) / 10,
          mean: Math.round((loadAvg.reduce((x, y) => x + y, 0) / Math.max(1, loadAvg.length)) * 10) / 10,
          max: Math.round(Math.max(...loadAvg) * 10) / 10,
        },
        node: process.version,
      },
      settings: { target: TARGET, run: "demo seed 0", latency_ms: latency, postgres: "15, fsync=off (throwaway cluster)", pair_batch: 1 },
      rows,
    };
    const md = [
      `# Find the cause on workers (${tag})`,
      "",
      `\`npm run bench:jobs\` — one collector and N worker processes on one PostgreSQL 15 (throwaway cluster), the demo's exfiltrating run (seed 0), target \`${TARGET}\`; ${result.machine.cpus} CPUs shared with other jobs (1-minute load average: min ${result.machine.load_avg_1m.min}, mean ${result.machine.load_avg_1m.mean}, max ${result.machine.load_avg_1m.max}).`,
      "",
      "| scenario | workers | wall s | model calls (result) | model calls (every stored arm) | same causes, roles, verdicts, pairs as local | test lines appended once |",
      "|---|---|---|---|---|---|---|",
      ...rows.map(
        (r) =>
          `| ${r.scenario} | ${r.workers} | ${r.wall_s} | ${r.model_calls} | ${r.stored_calls} | ${r.same ? "yes" : "NO"} | ${r.workers === "local" ? "—" : r.lines_once ? `yes (${r.lines})` : "NO"} |`,
      ),
      "",
    ].join("\n");
    const file = writeResult(outDir, `${tag}-jobs`, result, md);
    log(`wrote ${file}`);
    process.stdout.write(md);
    return rows.every((r) => r.same && r.lines_once) ? 0 : 1;
  } finally {
    clearInterval(sampler);
    for (const w of workers) w.kill("SIGKILL");
    collector.kill("SIGTERM");
    await llm.close();
    await cluster.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

runAsCommand("bench:jobs", typeof module === "undefined" ? undefined : module, main);
