/**
 * Load and faults on the PostgreSQL store (`npm run bench:store`): a throwaway PostgreSQL cluster,
 * two collector processes (`causeway serve --store postgresql://…`) on it, and agent processes
 * (bench/store-agent.ts) streaming runs through HttpSink to both.
 *
 *  load      AGENTS × EVENTS events: events/s, batch latency p50/p99, every run pulled back
 *            byte-identical to the agent's own copy and verified (nothing lost or duplicated);
 *  kill      kill -9 one collector under load: clients fail over to the other; nothing lost;
 *  restart   PostgreSQL stopped and started again under load: 503s, then recovery; nothing lost;
 *  listing   10,000 runs in the runs table: one filtered page, p50/max over 20 requests.
 *
 * Options: --agents 50 --events 2000 --fault-agents 20 --fault-events 2000 --list-runs 10000 --out bench/results [--tag T]
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "pg";
import { PgCluster } from "../test/pg/cluster";
import { CollectorClient, pullRun } from "../core/store/transfer";
import { writeResult, runAsCommand } from "./output";

const TOKEN = "bench-token";
const dist = path.dirname(process.argv[1] ?? __filename);
const CLI = path.join(dist, "..", "cli.js");
const AGENT = path.join(dist, "store-agent.js");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function startCollector(store: string, port: number, log: (s: string) => void): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, "serve", "--store", store, "--port", String(port), "--quiet"], {
    env: { ...process.env, CAUSEWAY_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.once("exit", (code, signal) => log(`collector on port ${port} exited (${signal ?? code})`));
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("causeway collector on")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`collector exited (${code}): ${out}`)));
  });
  return child;
}

interface AgentResult {
  run_id: string;
  events: number;
  delivered: number;
  batches: [number, number][];
}

function runAgent(runId: string, events: number, outDir: string, urls: string[]): Promise<AgentResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [AGENT, runId, String(events), outDir, urls.join(",")], {
      env: { ...process.env, CAUSEWAY_TOKEN: TOKEN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err = (err + d).slice(-2000)));
    p.on("close", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop()!)) : reject(new Error(`agent ${runId} exited ${code}: ${err}`))));
  });
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/**
 * Pulls every run (four at a time: events by range, blobs 500 per request, then verified) and
 * compares it with the agent's own copy: events.jsonl byte for byte, the same blob files.
 */
async function check(
  url: string,
  runs: AgentResult[],
  localDir: string,
  work: string,
): Promise<{
  runs: number;
  identical: number;
  verified: number;
  events_expected: number;
  events_stored: number;
  blobs_expected: number;
  blobs_stored: number;
  pull_s: number;
  errors: string[];
}> {
  const client = new CollectorClient(url, TOKEN);
  const out = fs.mkdtempSync(path.join(work, "pulled-"));
  let identical = 0;
  let verified = 0;
  let stored = 0;
  let blobsExpected = 0;
  let blobsStored = 0;
  const errors: string[] = [];
  const t0 = performance.now();
  const todo = runs.slice();
  const blobNames = (d: string) => (fs.existsSync(path.join(d, "blobs")) ? fs.readdirSync(path.join(d, "blobs")).sort() : []);
  const worker = async () => {
    for (let r = todo.shift(); r; r = todo.shift()) {
      try {
        const p = await pullRun(client, r.run_id, out);
        stored += p.events;
        if (p.ok) verified++;
        else errors.push(`${r.run_id}: ${p.problems[0]}`);
        const mine = path.join(localDir, r.run_id);
        const [have, want] = [blobNames(p.dir), blobNames(mine)];
        blobsStored += have.length;
        blobsExpected += want.length;
        if (fs.readFileSync(path.join(p.dir, "events.jsonl")).equals(fs.readFileSync(path.join(mine, "events.jsonl"))) && have.join() === want.join())
          identical++;
        else errors.push(`${r.run_id}: differs from the agent's copy`);
        fs.rmSync(p.dir, { recursive: true, force: true });
      } catch (err) {
        errors.push(`${r.run_id}: ${(err as Error).message}`);
        process.stderr.write(`  check ${r.run_id}: ${(err as Error).message}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  const pull_s = Math.round((performance.now() - t0) / 100) / 10;
  return {
    runs: runs.length,
    identical,
    verified,
    events_expected: runs.reduce((s, r) => s + r.events, 0),
    events_stored: stored,
    blobs_expected: blobsExpected,
    blobs_stored: blobsStored,
    pull_s,
    errors,
  };
}

async function phase(name: string, n: number, events: number, urls: string[], work: string, fault?: () => Promise<Record<string, unknown>>) {
  const local = fs.mkdtempSync(path.join(work, `${name}-`));
  const t0 = performance.now();
  const agents = Array.from({ length: n }, (_, i) => runAgent(`${name}-${i}`, events, local, i % 2 ? urls : [urls[1], urls[0]]));
  const faultInfo = fault ? await fault() : undefined;
  const settled = await Promise.allSettled(agents);
  for (const r of settled) if (r.status === "rejected") process.stderr.write(`  ${name}: ${(r.reason as Error).message}\n`);
  const results = settled.filter((r): r is PromiseFulfilledResult<AgentResult> => r.status === "fulfilled").map((r) => r.value);
  const failedAgents = settled.length - results.length;
  const wall = (performance.now() - t0) / 1000;
  const lat = results.flatMap((r) => r.batches.filter((b) => b[0] === 200).map((b) => b[1]));
  const statuses: Record<string, number> = {};
  for (const r of results) for (const b of r.batches) statuses[b[0]] = (statuses[b[0]] ?? 0) + 1;
  const total = results.reduce((s, r) => s + r.events, 0);
  return {
    name,
    agents: n,
    events_per_agent: events,
    events_total: total,
    wall_s: Math.round(wall * 100) / 100,
    events_per_s: Math.round(total / wall),
    batches: lat.length,
    batch_ms_p50: pct(lat, 50),
    batch_ms_p99: pct(lat, 99),
    final_statuses: statuses,
    failed_agents: failedAgents,
    fault: faultInfo,
    results,
    local,
  };
}

async function main(argv: string[]): Promise<number> {
  const arg = (k: string, d: number) => {
    const i = argv.indexOf(`--${k}`);
    return i >= 0 ? Number(argv[i + 1]) : d;
  };
  const outDir = argv.includes("--out") ? argv[argv.indexOf("--out") + 1] : "bench/results";
  const tag = argv.includes("--tag") ? argv[argv.indexOf("--tag") + 1] : new Date().toISOString().slice(0, 10);
  const AGENTS = arg("agents", 50);
  const EVENTS = arg("events", 2000);
  const FAULT = arg("fault-agents", 20);
  const FAULT_EVENTS = arg("fault-events", EVENTS);
  const LIST = arg("list-runs", 10_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-store-bench-"));
  const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
  const cluster = await PgCluster.start();
  const collectors: ChildProcess[] = [];
  // say why the bench ends, whatever ends it (a signal: the collectors and the cluster are stopped
  // by their exit handlers, and the cause is in the log)
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(sig, () => {
      log(`bench:store: got ${sig}; stopping the collectors and the cluster`);
      for (const c of collectors) if (c.exitCode === null) c.kill("SIGTERM");
      process.exit(3);
    });
  }
  const loadAvg: number[][] = [os.loadavg()];
  const sampler = setInterval(() => loadAvg.push(os.loadavg()), 10_000);
  try {
    const store = await cluster.createDatabase("bench");
    const ports = [await freePort(), await freePort()];
    for (const p of ports) collectors.push(await startCollector(store, p, log));
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);

    log(`load: ${AGENTS} agents × ${EVENTS} events`);
    const load = await phase("load", AGENTS, EVENTS, urls, work);
    const loadCheck = await check(urls[0], load.results, load.local, work);
    log(`  ${load.events_per_s} events/s, p50 ${load.batch_ms_p50} ms, p99 ${load.batch_ms_p99} ms; ${JSON.stringify(loadCheck)}`);

    log(`kill: ${FAULT} agents × ${FAULT_EVENTS} events, collector 0 killed with SIGKILL under load`);
    const kill = await phase("kill", FAULT, FAULT_EVENTS, urls, work, async () => {
      await new Promise((r) => setTimeout(r, 1500));
      collectors[0].kill("SIGKILL");
      return { killed: "collector 0 (SIGKILL) 1.5 s into the phase" };
    });
    const killCheck = await check(urls[1], kill.results, kill.local, work);
    log(`  ${JSON.stringify(killCheck)} statuses ${JSON.stringify(kill.final_statuses)}`);
    collectors[0] = await startCollector(store, ports[0], log);

    log(`restart: ${FAULT} agents × ${FAULT_EVENTS} events, PostgreSQL stopped and started under load`);
    const restart = await phase("restart", FAULT, FAULT_EVENTS, urls, work, async () => {
      await new Promise((r) => setTimeout(r, 1500));
      const t = performance.now();
      await cluster.stopServer();
      await new Promise((r) => setTimeout(r, 2000));
      await cluster.startServer();
      return { restarted: "PostgreSQL fast shutdown 1.5 s into the phase, down 2 s", down_ms: Math.round(performance.now() - t) };
    });
    const restartCheck = await check(urls[1], restart.results, restart.local, work);
    log(`  ${JSON.stringify(restartCheck)} statuses ${JSON.stringify(restart.final_statuses)}`);

    log(`listing: ${LIST} runs`);
    const db = new Client({ connectionString: store });
    await db.connect();
    // synthetic rows: only the runs table is read by listing
    await db.query(
      `INSERT INTO causeway_runs (run_id, program, started, sort_at, ended, status, head_seq, head_hash, events, alerts_high, tools, sources)
       SELECT 'synthetic-' || g, 'agents/team' || (g % 20) || '.ts:SYSTEM', '', now() - (g || ' seconds')::interval, '', CASE WHEN g % 10 = 0 THEN 'running' ELSE 'ended' END,
              99, repeat('0', 64), 100, CASE WHEN g % 7 = 0 THEN 1 ELSE 0 END,
              CASE WHEN g % 3 = 0 THEN ARRAY['send_email','lookup_order'] ELSE ARRAY['lookup_order'] END, ARRAY['web:doc' || (g % 50)]
       FROM generate_series(1, $1) g`,
      [LIST],
    );
    await db.query("ANALYZE causeway_runs");
    const count = Number((await db.query("SELECT count(*) FROM causeway_runs")).rows[0].count);
    await db.end();
    const client = new CollectorClient(urls[1], TOKEN);
    const timings: Record<string, { p50_ms: number; max_ms: number; rows: number }> = {};
    const filters: Record<string, Parameters<CollectorClient["listRuns"]>[0]> = {
      "tool=send_email&high=1": { tool: "send_email", highAlert: true, limit: 50 },
      "program~team7&status=ended": { program: "team7", status: "ended", limit: 50 },
      "source=web:doc3": { source: "web:doc3", limit: 50 },
      "page 5 of tool=send_email (cursor)": { tool: "send_email", limit: 50 },
    };
    for (const [name, f] of Object.entries(filters)) {
      const ms: number[] = [];
      let rows = 0;
      for (let i = 0; i < 20; i++) {
        let page = await client.listRuns(f);
        const t = performance.now();
        if (name.startsWith("page 5")) {
          for (let k = 0; k < 4 && page.next; k++) page = await client.listRuns({ ...f, cursor: page.next });
          ms.push((performance.now() - t) / 5);
        } else {
          const t1 = performance.now();
          page = await client.listRuns(f);
          ms.push(performance.now() - t1);
        }
        rows = page.runs.length;
      }
      timings[name] = { p50_ms: Math.round(pct(ms, 50) * 10) / 10, max_ms: Math.round(Math.max(...ms) * 10) / 10, rows };
    }
    log(`  ${JSON.stringify(timings)}`);

    const strip = (p: Awaited<ReturnType<typeof phase>>) => {
      const { results: _r, local: _l, ...rest } = p;
      return rest;
    };
    const result = {
      machine: {
        cpus: os.cpus().length,
        load_avg_at_end: os.loadavg().map((x) => Math.round(x * 10) / 10),
        // the 1-minute load average, sampled every 10 s through the whole bench
        load_avg_1m: {
          min: Math.round(Math.min(...loadAvg.map((l) => l[0])) * 10) / 10,
          mean: Math.round((loadAvg.reduce((a, l) => a + l[0], 0) / loadAvg.length) * 10) / 10,
          max: Math.round(Math.max(...loadAvg.map((l) => l[0])) * 10) / 10,
        },
        node: process.version,
      },
      settings: {
        agents: AGENTS,
        events: EVENTS,
        fault_agents: FAULT,
        fault_events: FAULT_EVENTS,
        list_runs: count,
        collectors: 2,
        postgres: "15, fsync=off (throwaway cluster)",
      },
      load: { ...strip(load), check: loadCheck },
      kill: { ...strip(kill), check: killCheck },
      restart: { ...strip(restart), check: restartCheck },
      listing: { runs_in_table: count, page_size: 50, timings },
    };
    const ok =
      [load, kill, restart].every((p) => p.failed_agents === 0) &&
      [loadCheck, killCheck, restartCheck].every(
        (c) => c.runs > 0 && c.identical === c.runs && c.verified === c.runs && c.events_stored === c.events_expected && c.blobs_stored === c.blobs_expected,
      );
    const md = [
      `# Store benchmark (${tag})`,
      "",
      `\`npm run bench:store\` — ${AGENTS} agent processes × ${EVENTS} events through HttpSink into 2 collector processes on one PostgreSQL 15 (throwaway cluster, fsync off), ${result.machine.cpus} CPUs shared with other jobs (1-minute load average through the bench: min ${result.machine.load_avg_1m.min}, mean ${result.machine.load_avg_1m.mean}, max ${result.machine.load_avg_1m.max}).`,
      "",
      "| phase | agents | events | wall s | events/s | batch p50 ms | batch p99 ms | final statuses | runs identical / verified | events stored / sent | blobs stored / sent | pull-back s |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...[
        ["load", load, loadCheck],
        ["kill -9 one collector", kill, killCheck],
        ["restart PostgreSQL", restart, restartCheck],
      ].map(([n, p, c]) => {
        const ph = p as Awaited<ReturnType<typeof phase>>;
        const ck = c as typeof loadCheck;
        return `| ${n} | ${ph.agents} | ${ph.events_total} | ${ph.wall_s} | ${ph.events_per_s} | ${ph.batch_ms_p50} | ${ph.batch_ms_p99} | ${Object.entries(
          ph.final_statuses,
        )
          .map(([k, v]) => `${k}×${v}`)
          .join(
            " ",
          )} | ${ck.identical}/${ck.runs} · ${ck.verified}/${ck.runs} | ${ck.events_stored}/${ck.events_expected} | ${ck.blobs_stored}/${ck.blobs_expected} | ${ck.pull_s} |`;
      }),
      "",
      `Listing ${count} runs, pages of 50 (20 requests each):`,
      "",
      "| filter | p50 ms | max ms | rows |",
      "|---|---|---|---|",
      ...Object.entries(timings).map(([k, v]) => `| ${k} | ${v.p50_ms} | ${v.max_ms} | ${v.rows} |`),
      "",
      `Nothing lost or duplicated in every phase: **${ok ? "yes" : "NO"}**.`,
      "",
    ].join("\n");
    const file = writeResult(outDir, `${tag}-store`, result, md);
    log(`wrote ${file}`);
    process.stdout.write(md);
    return ok ? 0 : 1;
  } finally {
    clearInterval(sampler);
    for (const c of collectors) if (c.exitCode === null) c.kill("SIGTERM");
    await cluster.stop();
    // the agents' copies are many small files: removed in the background
    spawn("rm", ["-rf", work], { detached: true, stdio: "ignore" }).unref();
  }
}

runAsCommand("bench:store", typeof module === "undefined" ? undefined : module, main);
