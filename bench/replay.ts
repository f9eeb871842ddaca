/**
 * Replay speed and cost on the demo: `npm run bench:replay [-- options]`.
 *
 *  throughput   model calls computed per second of replay: one paired test of the vendor note on
 *               demo-seed0 with --pairs fixed pairs (default 2000), the model-call cache off so
 *               every call is computed; median of --reps repetitions (wall and CPU seconds).
 *  cache        the same test with the cache on (the default for seeded models): calls made vs a
 *               naive replay's.
 *  attribution  Find the cause on demo-seed0's exfiltration, as `causeway attribute` runs it (n 10,
 *               n_max 80, roles on) and with --no-roles: wall time (median), model calls made and
 *               a naive replay's.
 *  per test     the demo's five tests at n = 40 in one replay context (as `causeway demo` runs
 *               them): model_calls made vs naive_model_calls.
 *  --demo-find-cause  only this: the README's Find the cause on the demo, as a user runs it
 *               (`causeway demo --out DIR`, then `causeway attribute DIR/demo-seed0 --target … --json`
 *               with the default method and with --method newcombe): model calls, program runs and the
 *               named cause, written to <date>-demo-find-cause.json/.md.
 *  reference    with --reference DIR (the reference's checkout): its replay throughput on its own
 *               demo (the same test, counterfactual with n = --pairs, timed in-process, median of
 *               3) and its benchmark (python3 -m bench.run: model calls / seconds), in this session.
 *
 * Every demo model call counts here (researcher, planner and executor all call the demo's mock
 * model, in ours and in the reference's demo alike).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { runAsCommand, writeResult } from "./output";
import { readRun, type RunData } from "causeway-vscode";
import { attribute } from "../core/replay/attribute";
import { ReplayContext } from "../core/replay/context";
import { runTest } from "../core/replay/run-test";
import { EXFIL_TARGET, REFUND_TARGET, SYSTEM } from "../examples/demo/system";
import { signed } from "../core/util/numbers";

const VENDOR = "input:vendor:portal/notes.md";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { value, wall, cpu: (c.user + c.system) / 1e6 };
}

async function throughput(run: RunData, pairs: number, reps: number, cache: boolean) {
  const walls: number[] = [];
  const cpus: number[] = [];
  let made = 0;
  let naive = 0;
  for (let k = 0; k < reps; k++) {
    const ctx = new ReplayContext(run, SYSTEM, { cache });
    const t = await timed(() => runTest(ctx, { intervention: VENDOR, target: EXFIL_TARGET, n: pairs, save: false }));
    walls.push(t.wall);
    cpus.push(t.cpu);
    made = ctx.counts.made;
    naive = ctx.counts.naive;
  }
  const wall = median(walls);
  const cpu = median(cpus);
  return {
    pairs,
    reps,
    cache,
    model_calls: made,
    naive_model_calls: naive,
    wall_s: r3(wall),
    cpu_s: r3(cpu),
    calls_per_s: Math.round(made / wall),
    calls_per_cpu_s: Math.round(made / cpu),
    walls: walls.map(r3),
  };
}

async function attribution(run: RunData, reps: number, roles: boolean) {
  const walls: number[] = [];
  let last: Awaited<ReturnType<typeof attribute>> | undefined;
  for (let k = 0; k < reps; k++) {
    const ctx = new ReplayContext(run, SYSTEM);
    const t = await timed(() => attribute(ctx, { target: EXFIL_TARGET, n: 10, nMax: 80, roles, save: false }));
    walls.push(t.wall);
    last = t.value;
  }
  const a = last!;
  return {
    settings: `n 10, n_max 80, roles ${roles ? "on" : "off"}`,
    wall_ms: Math.round(median(walls) * 1000),
    model_calls: a.model_calls,
    naive_model_calls: a.naive_model_calls,
    program_runs: a.program_runs,
    tests: a.tests.length,
    summary: a.summary,
  };
}

interface RefResult {
  dir: string;
  replay: { pairs: number; model_calls: number; wall_s: number; cpu_s: number; calls_per_s: number; calls_per_cpu_s: number; walls: number[] };
  benchmark: { model_calls: number; wall_s: number; cpu_s: number; calls_per_s: number; calls_per_cpu_s: number };
}

/** Measures the reference (Python) in this session: its replay on its demo, and its benchmark. */
function reference(dir: string, pairs: number): RefResult {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-refreplay-"));
  try {
    execFileSync("python3", ["-m", "causeway.cli", "demo", "--out", path.join(work, "demo")], { cwd: dir, stdio: "ignore" });
    // the same paired test as ours, timed in-process; every call of the demo's models is counted
    const script = `
import json, sys, time
from causeway import load_run
from causeway.replay import counterfactual
from causeway.demo import SYSTEM
run = load_run(sys.argv[1])
calls = [0]
for name, fn in list(SYSTEM.models.items()):
    def counted(*a, _fn=fn, **kw):
        calls[0] += 1
        return _fn(*a, **kw)
    SYSTEM.models[name] = counted
out = []
for rep in range(3):
    calls[0] = 0
    w, c = time.perf_counter(), time.process_time()
    counterfactual(run, ${JSON.stringify(VENDOR)}, ${JSON.stringify(EXFIL_TARGET)}, n=int(sys.argv[2]), system=SYSTEM, save=False)
    out.append([calls[0], time.perf_counter() - w, time.process_time() - c])
print(json.dumps(out))
`;
    const rows = JSON.parse(execFileSync("python3", ["-c", script, path.join(work, "demo", "demo-seed0"), String(pairs)], { cwd: dir, encoding: "utf8" })) as [
      number,
      number,
      number,
    ][];
    const calls = rows[0][0];
    const wall = median(rows.map((r) => r[1]));
    const cpu = median(rows.map((r) => r[2]));
    const bench = `
import json, os, sys, time, contextlib, io
from bench.run import main
w, c = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    main(["--out", sys.argv[1]])
wall, cpu = time.perf_counter() - w, time.process_time() - c
f = [x for x in os.listdir(sys.argv[1]) if x.endswith(".json")][0]
res = json.load(open(os.path.join(sys.argv[1], f)))
print(json.dumps([sum(s["model_calls"] for s in res["scenarios"]), wall, cpu]))
`;
    const [bCalls, bWall, bCpu] = JSON.parse(
      execFileSync("python3", ["-c", bench, path.join(work, "bench")], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }),
    ) as [number, number, number];
    return {
      dir,
      replay: {
        pairs,
        model_calls: calls,
        wall_s: r3(wall),
        cpu_s: r3(cpu),
        calls_per_s: Math.round(calls / wall),
        calls_per_cpu_s: Math.round(calls / cpu),
        walls: rows.map((r) => r3(r[1])),
      },
      benchmark: {
        model_calls: bCalls,
        wall_s: r3(bWall),
        cpu_s: r3(bCpu),
        calls_per_s: Math.round(bCalls / bWall),
        calls_per_cpu_s: Math.round(bCalls / bCpu),
      },
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

type ReplayReport = {
  date: string;
  command: string;
  node: string;
  machine: string;
  load_average: number[];
  throughput: Awaited<ReturnType<typeof throughput>>;
  cached: Awaited<ReturnType<typeof throughput>>;
  attribution: Awaited<ReturnType<typeof attribution>>[];
  per_test: { intervention: string; target: string; n: number; model_calls: number; naive_model_calls: number }[];
  reference?: RefResult;
  ratios?: { replay_wall: number; replay_cpu: number; vs_reference_benchmark: number };
};

export function replayMarkdown(res: ReplayReport): string {
  const t = res.throughput;
  const L = [
    `# Replay speed and cost on the demo, ${res.date}`,
    "",
    `Command: \`${res.command}\` (${res.machine}, Node ${res.node}, load average ${res.load_average.join(" / ")}).`,
    "",
  ];
  L.push(
    `- Throughput, cache off: ${t.model_calls} model calls (${t.pairs} pairs) in ${t.wall_s} s wall, ${t.cpu_s} s CPU (median of ${t.reps}): **${t.calls_per_s.toLocaleString("en-US")} calls/s** (${t.calls_per_cpu_s.toLocaleString("en-US")} per CPU second).`,
  );
  L.push(`- With the seeded-model cache: ${res.cached.model_calls} calls made of ${res.cached.naive_model_calls}.`);
  for (const a of res.attribution)
    L.push(
      `- Find the cause on demo-seed0 (${a.settings}): ${a.wall_ms} ms, ${a.model_calls} model calls made, a naive replay ${a.naive_model_calls} (${a.tests} tests, ${a.program_runs} program runs).`,
    );
  if (res.reference && res.ratios) {
    const r = res.reference;
    L.push(
      `- Reference, same session: replay on its demo ${r.replay.model_calls} calls in ${r.replay.wall_s} s wall, ${r.replay.cpu_s} s CPU (median of 3): ${r.replay.calls_per_s.toLocaleString("en-US")} calls/s (${r.replay.calls_per_cpu_s.toLocaleString("en-US")} per CPU second); its benchmark ${r.benchmark.model_calls.toLocaleString("en-US")} calls in ${r.benchmark.wall_s} s wall, ${r.benchmark.cpu_s} s CPU: ${r.benchmark.calls_per_s.toLocaleString("en-US")} calls/s.`,
    );
    L.push(
      `- Ours / reference: replay throughput **${res.ratios.replay_wall}×** (wall), **${res.ratios.replay_cpu}×** (CPU); against its benchmark's calls per second ${res.ratios.vs_reference_benchmark}×.`,
    );
  }
  L.push(
    "",
    "Per test (the demo's five tests at n = 40, one replay context):",
    "",
    "| test | target | n | model calls made | naive replay |",
    "|---|---|---|---|---|",
  );
  for (const p of res.per_test) L.push(`| \`${p.intervention}\` | \`${p.target}\` | ${p.n} | ${p.model_calls} | ${p.naive_model_calls} |`);
  return L.join("\n") + "\n";
}

const DEMO_TARGET = "tool=send_email,arg~vendor-compliance";

interface DemoFindCause {
  date: string;
  command: string;
  cli: string[];
  methods: {
    method: string;
    model_calls: number;
    naive_model_calls: number;
    program_runs: number;
    causes: { spec: string; role: string; effect: number }[];
    summary: string;
  }[];
}

/** The README's Find the cause on the demo, through the CLI exactly as the README shows it. */
function demoFindCause(argv: string[]): DemoFindCause {
  const cli = path.resolve(__dirname, "../cli.js");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-demo-find-cause-"));
  try {
    execFileSync(process.execPath, [cli, "demo", "--out", path.join(work, "runs"), "--json"], { stdio: ["ignore", "ignore", "inherit"] });
    const args = ["attribute", "runs/demo-seed0", "--target", DEMO_TARGET, "--allow-program", "causeway:demo", "--json"];
    const methods = ["betting", "newcombe"].map((method) => {
      const out = execFileSync(process.execPath, [cli, ...args, ...(method === "betting" ? [] : ["--method", method])], {
        cwd: work,
        encoding: "utf8",
        maxBuffer: 64 << 20,
      });
      const r = JSON.parse(out) as {
        method: string;
        model_calls: number;
        naive_model_calls: number;
        program_runs: number;
        causes: { spec: string; role: string; effect: number }[];
        summary: string;
      };
      return {
        method: r.method,
        model_calls: r.model_calls,
        naive_model_calls: r.naive_model_calls,
        program_runs: r.program_runs,
        causes: r.causes.map((c) => ({ spec: c.spec, role: c.role, effect: c.effect })),
        summary: r.summary,
      };
    });
    return {
      date: new Date().toISOString().slice(0, 10),
      command: `npm run bench:replay -- ${argv.join(" ")}`,
      cli: ["causeway", ...args.slice(0, -1)],
      methods,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function demoFindCauseMarkdown(r: DemoFindCause): string {
  const L = [
    `# Find the cause on the demo's exfiltration, ${r.date}`,
    "",
    `Command: \`${r.command}\`: records the demo (\`causeway demo\`), then runs \`${r.cli.join(" ")}\` with the default method and with \`--method newcombe\`.`,
    "",
  ];
  L.push("| method | model calls | naive replay | program runs | causes |", "|---|---|---|---|---|");
  for (const m of r.methods)
    L.push(
      `| ${m.method} | ${m.model_calls} | ${m.naive_model_calls} | ${m.program_runs} | ${m.causes.map((c) => `${c.spec} (${c.role}, ${signed(c.effect)})`).join(", ")} |`,
    );
  return L.join("\n") + "\n";
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes("--demo-find-cause")) {
    const i = argv.indexOf("--out");
    const r = demoFindCause(argv);
    for (const m of r.methods) process.stdout.write(`${m.method}: ${m.model_calls} model calls, ${m.program_runs} program runs: ${m.summary}\n`);
    if (i >= 0) process.stdout.write(`wrote ${writeResult(argv[i + 1], `${r.date}-demo-find-cause`, r, demoFindCauseMarkdown(r))} and .md\n`);
    return 0;
  }
  const o = { pairs: 2000, reps: 5, json: false, out: "", reference: "" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === "--pairs") o.pairs = Number(v());
    else if (a === "--reps") o.reps = Number(v());
    else if (a === "--json") o.json = true;
    else if (a === "--out") o.out = v();
    else if (a === "--reference") o.reference = v();
    else throw new Error(`unknown option ${a}`);
  }
  const log = o.json ? () => {} : (m: string) => process.stdout.write(m + "\n");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-replay-"));
  try {
    const rec = await SYSTEM.run({ seed: 0, outDir: work, runId: "demo-seed0" });
    const run = readRun(rec.dir!);
    // warm up the JIT so the first repetition is not an outlier
    await runTest(new ReplayContext(run, SYSTEM, { cache: false }), { intervention: VENDOR, target: EXFIL_TARGET, n: 50, save: false });
    const raw = await throughput(run, o.pairs, o.reps, false);
    log(
      `throughput (cache off): ${raw.model_calls} model calls in ${raw.wall_s} s wall, ${raw.cpu_s} s CPU (median of ${o.reps}) = ${raw.calls_per_s} calls/s (${raw.calls_per_cpu_s} per CPU second)`,
    );
    const cached = await throughput(run, o.pairs, o.reps, true);
    log(`with the cache:         ${cached.model_calls} calls made of ${cached.naive_model_calls} (${cached.wall_s} s)`);
    const attrRoles = await attribution(run, o.reps, true);
    const attrNoRoles = await attribution(run, o.reps, false);
    for (const a of [attrRoles, attrNoRoles])
      log(
        `attribution (${a.settings}): ${a.wall_ms} ms, ${a.model_calls} model calls made, a naive replay ${a.naive_model_calls}; ${a.tests} tests, ${a.program_runs} program runs: ${a.summary}`,
      );
    const ctx = new ReplayContext(run, SYSTEM);
    const perTest: { intervention: string; target: string; n: number; model_calls: number; naive_model_calls: number }[] = [];
    for (const [spec, target] of [
      [VENDOR, EXFIL_TARGET],
      ["input:web:shipping_faq", EXFIL_TARGET],
      ["input:inbox:ticket-881", EXFIL_TARGET],
      ["msg:researcher->planner", EXFIL_TARGET],
      ["input:kb:refund_policy.md", REFUND_TARGET],
    ]) {
      const t = await runTest(ctx, { intervention: spec, target, n: 40, save: false });
      perTest.push({ intervention: spec, target, n: t.n, model_calls: t.model_calls, naive_model_calls: t.naive_model_calls });
      log(`test ${spec.padEnd(28)} n ${t.n}: ${t.model_calls} model calls made, a naive replay ${t.naive_model_calls}`);
    }
    let ref: RefResult | undefined;
    if (o.reference) {
      log(`reference: measuring ${o.reference} (its demo replay, then its benchmark)…`);
      ref = reference(o.reference, o.pairs);
      log(
        `reference replay: ${ref.replay.model_calls} model calls in ${ref.replay.wall_s} s wall, ${ref.replay.cpu_s} s CPU (median of 3) = ${ref.replay.calls_per_s} calls/s (${ref.replay.calls_per_cpu_s} per CPU second)`,
      );
      log(
        `reference benchmark: ${ref.benchmark.model_calls} model calls in ${ref.benchmark.wall_s} s wall, ${ref.benchmark.cpu_s} s CPU = ${ref.benchmark.calls_per_s} calls/s`,
      );
      log(
        `ours / reference replay throughput: ${(raw.calls_per_s / ref.replay.calls_per_s).toFixed(2)}x wall, ${(raw.calls_per_cpu_s / ref.replay.calls_per_cpu_s).toFixed(2)}x CPU; ours / reference benchmark throughput: ${(raw.calls_per_s / ref.benchmark.calls_per_s).toFixed(2)}x`,
      );
    }
    const res: ReplayReport = {
      date: new Date().toISOString().slice(0, 10),
      command: `npm run bench:replay${argv.length ? " -- " + argv.join(" ") : ""}`,
      node: process.version,
      machine: `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}`,
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      throughput: raw,
      cached,
      attribution: [attrRoles, attrNoRoles],
      per_test: perTest,
      reference: ref,
      ratios: ref
        ? {
            replay_wall: r3(raw.calls_per_s / ref.replay.calls_per_s),
            replay_cpu: r3(raw.calls_per_cpu_s / ref.replay.calls_per_cpu_s),
            vs_reference_benchmark: r3(raw.calls_per_s / ref.benchmark.calls_per_s),
          }
        : undefined,
    };
    if (o.json) process.stdout.write(JSON.stringify(res) + "\n");
    if (o.out) {
      const file = writeResult(o.out, `${res.date}-replay`, res, replayMarkdown(res));
      if (!o.json) log(`wrote ${file} and .md`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return 0;
}

runAsCommand("bench:replay", typeof module === "undefined" ? undefined : module, main);
