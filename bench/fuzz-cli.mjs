// The one-off CLI fuzz of issue 11: N random mutations of the reference's demo run (the same
// mutator as the unit fuzz test, test/fuzz/mutate.mjs), each run through
// `node dist/cli.js verify RUN --json` and `node dist/cli.js alerts RUN --json`. Each command must
// exit 0 or 1 with JSON on stdout within the time limit; the figures (exit codes, failures,
// slowest, peak memory) go to bench/results/<date>-fuzz-cli.{json,md}.
//
//   node esbuild.mjs && node bench/fuzz-cli.mjs [--n 1500] [--seed 11] [--jobs 2] [--limit-s 20] [--out bench/results] [--cli dist/cli.js]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { mutate, rng } from "../test/fuzz/mutate.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const CLI = path.resolve(process.argv.includes("--cli") ? process.argv[process.argv.indexOf("--cli") + 1] : path.join(ROOT, "dist/cli.js"));
const DEMO = path.join(ROOT, "test/fixtures/causeway-py-demo/demo-seed0");

const args = process.argv.slice(2);
const opt = (name, d) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : d;
};
const N = Number(opt("n", 1500));
const SEED = Number(opt("seed", 11));
const JOBS = Number(opt("jobs", 2));
const LIMIT_MS = Number(opt("limit-s", 20)) * 1000;
const OUT = path.resolve(opt("out", path.join(ROOT, "bench/results")));
const TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

/** Runs one CLI command; resolves with its exit code, stdout, wall time and peak RSS (KB, when /usr/bin/time exists). */
function run(cmdArgs) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const argv = TIME ? ["-f", "%U %S %M", process.execPath, CLI, ...cmdArgs] : [CLI, ...cmdArgs];
    const child = spawn(TIME ?? process.execPath, argv, { stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    let err = "";
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => (err += d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill("SIGKILL");
    }, LIMIT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      let rssKb = null;
      let cpuMs = null;
      if (TIME) {
        const m = /([\d.]+) ([\d.]+) (\d+)\s*$/.exec(err.trim());
        if (m) {
          cpuMs = Math.round((Number(m[1]) + Number(m[2])) * 1000);
          rssKb = Number(m[3]);
          err = err.trim().slice(0, -m[0].length);
        }
      }
      resolve({ code, killed, ms, cpuMs, rssKb, stdout: Buffer.concat(out).toString("utf8"), stderr: err.trim() });
    });
  });
}

async function main() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "cw-fuzz-cli-"));
  const r = rng(SEED);
  // each case is mutated synchronously when a worker takes it, so the draws happen in case order
  // (deterministic for the seed) while JOBS cases run at a time
  const take = () => {
    const i = next++;
    if (i >= N) return undefined;
    const dir = path.join(base, `m${i}`);
    fs.cpSync(DEMO, dir, { recursive: true });
    const did = [];
    for (let k = 0, n = 1 + r.int(3); k < n; k++) did.push(mutate(dir, r));
    return { i, dir, did };
  };
  const results = [];
  let next = 0;
  const t0 = Date.now();
  const worker = async () => {
    for (;;) {
      const c = take();
      if (!c) return;
      for (const cmd of ["verify", "alerts"]) {
        const res = await run([cmd, c.dir, "--json"]);
        let json = false;
        try {
          JSON.parse(res.stdout);
          json = true;
        } catch {
          json = false;
        }
        const ok = !res.killed && (res.code === 0 || res.code === 1) && json && !/\n\s+at /.test(res.stderr);
        results.push({
          case: c.i,
          cmd,
          did: c.did,
          code: res.code,
          killed: res.killed,
          json,
          ok,
          ms: Math.round(res.ms),
          cpu_ms: res.cpuMs,
          rss_mb: res.rssKb === null ? null : Math.round(res.rssKb / 1024),
          stderr: ok ? undefined : res.stderr.slice(0, 400),
        });
      }
      fs.rmSync(c.dir, { recursive: true, force: true });
      if (c.i % 50 === 0) process.stderr.write(`  ${results.length / 2}/${N} cases, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    }
  };
  // SIGTERM (a time limit) stops taking cases and writes what was measured, marked as partial
  let stopped = false;
  process.on("SIGTERM", () => {
    stopped = true;
    next = N;
  });
  await Promise.all(Array.from({ length: JOBS }, worker));
  fs.rmSync(base, { recursive: true, force: true });
  const done = new Set(results.map((x) => x.case)).size;
  const wall = (Date.now() - t0) / 1000;
  const by = (cmd) => results.filter((x) => x.cmd === cmd);
  const summary = (cmd) => {
    const xs = by(cmd);
    const ms = xs.map((x) => x.ms).sort((a, b) => a - b);
    const rss = xs.map((x) => x.rss_mb).filter((x) => x !== null);
    const cpu = xs
      .map((x) => x.cpu_ms)
      .filter((x) => x !== null)
      .sort((a, b) => a - b);
    return {
      runs: xs.length,
      ok: xs.filter((x) => x.ok).length,
      exit0: xs.filter((x) => x.code === 0).length,
      exit1: xs.filter((x) => x.code === 1).length,
      other_exit: xs.filter((x) => x.code !== 0 && x.code !== 1).length,
      killed_at_limit: xs.filter((x) => x.killed).length,
      no_json: xs.filter((x) => !x.json).length,
      median_ms: ms[Math.floor(ms.length / 2)],
      p99_ms: ms[Math.floor(ms.length * 0.99)],
      max_ms: ms.at(-1),
      max_rss_mb: rss.length ? Math.max(...rss) : null,
      median_cpu_ms: cpu.length ? cpu[Math.floor(cpu.length / 2)] : null,
      max_cpu_ms: cpu.length ? cpu.at(-1) : null,
    };
  };
  const failures = results.filter((x) => !x.ok);
  const result = {
    command: `node bench/fuzz-cli.mjs --n ${N} --seed ${SEED} --jobs ${JOBS} --limit-s ${LIMIT_MS / 1000}`,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10), node: process.version },
    mutations: done,
    planned: N,
    stopped_early: stopped,
    wall_s: Math.round(wall),
    verify: summary("verify"),
    alerts: summary("alerts"),
    failures: failures.slice(0, 50),
    slowest: [...results]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map(({ case: c, cmd, did, ms, rss_mb }) => ({ case: c, cmd, did, ms, rss_mb })),
  };
  const stem = `${new Date().toISOString().slice(0, 10)}-fuzz-cli`;
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, `${stem}.json`), JSON.stringify(result, null, 1) + "\n");
  const row = (cmd, s) =>
    `| ${cmd} | ${s.runs} | ${s.ok} | ${s.exit0} | ${s.exit1} | ${s.other_exit} | ${s.killed_at_limit} | ${s.no_json} | ${s.median_ms} | ${s.max_ms} | ${s.median_cpu_ms ?? "–"} | ${s.max_cpu_ms ?? "–"} | ${s.max_rss_mb ?? "–"} |`;
  const md = [
    `# CLI fuzz (issue 11)`,
    "",
    `\`${result.command}\` — ${result.date}, ${result.machine.cpus} CPUs shared with other jobs (load ${result.machine.loadavg.join(", ")}), Node ${result.machine.node}.`,
    `${done}${stopped ? ` of ${N} planned (stopped by SIGTERM)` : ""} mutations of test/fixtures/causeway-py-demo/demo-seed0 (test/fuzz/mutate.mjs), each through \`verify RUN --json\` and \`alerts RUN --json\`; pass = exit 0 or 1, JSON on stdout, no stack trace, within ${LIMIT_MS / 1000} s. Wall time ${result.wall_s} s.`,
    "",
    "| command | runs | pass | exit 0 | exit 1 | other exit | killed at limit | no JSON | median wall ms | max wall ms | median CPU ms | max CPU ms | max RSS MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    row("verify", result.verify),
    row("alerts", result.alerts),
    "",
    failures.length
      ? `Failures (first ${Math.min(50, failures.length)}):\n\n` +
        failures
          .slice(0, 50)
          .map((f) => `- case ${f.case} ${f.cmd} (${f.did.join("; ")}): exit ${f.code}${f.killed ? ", killed" : ""} ${f.stderr ?? ""}`)
          .join("\n")
      : "No failures.",
    "",
    "Slowest (wall): " + result.slowest.map((s) => `case ${s.case} ${s.cmd} ${s.ms} ms (${s.did.join("; ")})`).join("; "),
    "",
    "Wall time depends on the machine's load (shared with other jobs); CPU time (user + sys, from /usr/bin/time) is the steadier figure.",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(OUT, `${stem}.md`), md);
  process.stdout.write(md);
  return failures.length ? 1 : 0;
}

main().then(
  (c) => process.exit(c),
  (e) => {
    process.stderr.write(String(e?.stack ?? e) + "\n");
    process.exit(2);
  },
);
