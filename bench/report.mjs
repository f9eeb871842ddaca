// How long `causeway report` takes on a big run (issue #15: 48 s for the team run of 20,000 events
// on a quiet machine, quadratic in the run).
//
// Records the `team` workload (bench/workloads.mjs: 10 agents passing work along, so every call is
// downstream of everything before it) at each size, then times `node dist/cli.js report ROOT -o
// FILE` as a child process (wall clock, Node's start included), several times, and reports the
// median, the report's size, its peak memory (/usr/bin/time when present) and the load average
// around each size. `--cli FILE` times another build of the CLI on the same runs (an older
// dist/cli.js copied aside, for a before/after at the same load).
//
// `--out BASE` adds the measurements to BASE.json (kept across calls, so a before and an after
// land in one file) and writes BASE.md from it.
//
//   node bench/report.mjs [--events 1473,20000] [--runs 3] [--cli dist/cli.js] [--label NAME] [--out bench/results/DATE-report]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT, build, tempDir } from "../test/browser/lib.mjs";
import { workloads } from "./workloads.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SIZES = String(arg("--events", "1473,20000")).split(",").filter(Boolean).map(Number); // --events "": rewrite BASE.md only
const RUNS = Number(arg("--runs", 3));
const CLI = path.resolve(arg("--cli", path.join(ROOT, "dist/cli.js")));
const LABEL = arg("--label", path.relative(ROOT, CLI));
const OUT = arg("--out", null);

build();
const sdk = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
const { team } = workloads(sdk);
const TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One `causeway report`: wall milliseconds, and (null without /usr/bin/time) peak resident kilobytes and CPU milliseconds (user + system). */
function report(root, file) {
  const args = [CLI, "report", root, "-o", file];
  const t0 = performance.now();
  const r = TIME
    ? spawnSync(TIME, ["-f", "peak-kb %M cpu-s %U %S", process.execPath, ...args], { encoding: "utf8" })
    : spawnSync(process.execPath, args, { encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`causeway report failed (${r.status}): ${r.stderr}`);
  const t = /peak-kb (\d+) cpu-s ([\d.]+) ([\d.]+)/.exec(r.stderr ?? "");
  return { ms, kb: t ? Number(t[1]) : null, cpu: t ? Math.round((Number(t[2]) + Number(t[3])) * 1000) : null };
}

console.log(`${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${load()}; timing ${CLI}`);
const results = [];
for (const events of SIZES) {
  const root = tempDir("causeway-bench-report-");
  const run = await team(events).run({ seed: 0, outDir: root, runId: `team-${events}` });
  const lines = fs.readFileSync(path.join(run.dir, "events.jsonl"), "utf8").trim().split("\n").length;
  const file = path.join(root, "report.html");
  const before = load();
  const times = [];
  const cpu = [];
  let kb = null;
  for (let i = 0; i < RUNS; i++) {
    const r = report(root, file);
    times.push(Math.round(r.ms));
    if (r.cpu !== null) cpu.push(r.cpu);
    if (r.kb !== null) kb = Math.max(kb ?? 0, r.kb);
  }
  const res = {
    cli: LABEL,
    workload: "team",
    events: lines,
    report_bytes: fs.statSync(file).size,
    ms: times,
    median_ms: median(times),
    cpu_ms: cpu,
    median_cpu_ms: cpu.length ? median(cpu) : null,
    peak_kb: kb,
    load_before: before,
    load_after: load(),
    at: new Date().toISOString(),
  };
  console.log(`${row(res)}`);
  results.push(res);
  fs.rmSync(root, { recursive: true, force: true });
}

/** A row of the results table. */
function row(r) {
  const s = (x) => `${(x / 1000).toFixed(1)} s`;
  return `| ${r.cli} | ${r.workload} | ${r.events.toLocaleString("en")} | ${(r.report_bytes / 1024 / 1024).toFixed(1)} MB | ${r.ms.length === 1 ? `**${s(r.ms[0])}** (1 run)` : `${s(Math.min(...r.ms))} / **${s(r.median_ms)}** / ${s(Math.max(...r.ms))} (${r.ms.length} runs)`} | ${r.median_cpu_ms !== null ? s(r.median_cpu_ms) : "?"} | ${r.peak_kb ? `${Math.round(r.peak_kb / 1024)} MB` : "?"} | ${r.load_before} → ${r.load_after} |`;
}

if (OUT) {
  const json = `${OUT}.json`;
  const old = fs.existsSync(json) ? JSON.parse(fs.readFileSync(json, "utf8")) : {};
  const all = [...(old.results ?? []), ...results];
  fs.mkdirSync(path.dirname(json), { recursive: true });
  // `notes` (written by hand in BASE.json) is kept and printed under the table
  fs.writeFileSync(
    json,
    JSON.stringify({ cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`, results: all, ...(old.notes ? { notes: old.notes } : {}) }, null, 2) + "\n",
  );
  const md =
    `# \`causeway report\` on big runs\n\n` +
    `\`node bench/report.mjs --events … --runs N [--cli FILE --label NAME] --out ${OUT}\`, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), shared with other jobs: ` +
    `the load average is given for each row. Wall time of \`node CLI report ROOT -o FILE\` as a child process, Node's start included (CPU time is the steadier figure on a shared machine); ` +
    `the team workload of bench/workloads.mjs (10 agents passing work along: every call is downstream of everything before it).\n\n` +
    `| CLI | workload | events | report | wall time (min / median / max) | CPU time (median; user + system, GC and worker threads included) | peak memory | load average before → after |\n|---|---|---|---|---|---|---|---|\n` +
    all.map(row).join("\n") +
    "\n" +
    (old.notes ? `\n${[].concat(old.notes).join("\n")}\n` : "");
  fs.writeFileSync(`${OUT}.md`, md);
  console.log(`wrote ${OUT}.md and ${json}`);
}
