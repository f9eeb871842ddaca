/**
 * The attribution benchmark: `npm run bench [-- options]`.
 *
 * For each scenario, record R runs (seeds 0..R-1). In every run where the harmful action happened,
 * ask four methods which input caused it (reach, provenance, reuse, and ours: Find the cause) and
 * score them against the scenario's ground truth. Prints one table row per scenario, or with
 * --json one JSON object on stdout.
 *
 * Model calls are counted as the reference's benchmark counts them: every call of the language
 * model ("llm": researchers, planner, reviewer) that is really computed, when recording and when
 * replaying; the executor's deterministic "runner" is not a model call. A replay call served from
 * the seeded-model cache (an identical call, same seed and context, computed before) is not made
 * and is not counted; the figures without the cache are reported next to it.
 *
 * Options: --runs R (20)  --n N (10)  --n-max M (30: at most 30 replay pairs per test, the seeds'
 * 30 replays)  --roles (size each cause's share: more replays)  --scenario NAME (repeatable)
 * --json  --out DIR (write DIR/<date>-sim[-TAG].json and .md)  --tag TAG  --keep-runs DIR  --reference DIR (also
 * run the reference's benchmark from DIR, in this session, for the ratios)  --quiet
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { runAsCommand, writeResult } from "./output";
import { realMain } from "./real-main";
import { readRun } from "causeway-vscode";
import { targetHits } from "../core/graph/graph";
import { RunModel } from "../core/graph/model";
import { attribute } from "../core/replay/attribute";
import { defaultSuspects } from "../core/replay/suspects";
import { ReplayContext } from "../core/replay/context";
import { analyse, baselines, blamedBy, METHODS, score, type Method } from "./methods";
import { SCENARIOS, type Scenario } from "./scenarios";
import { CallCounter } from "./sim";
import { buildSystem, llmCallsPerRun } from "./system";

export interface Settings {
  runs: number;
  n: number;
  n_max: number;
  roles: boolean;
  /** Find the cause's statistics: the paired betting sequence (default) or the reference's Newcombe. */
  method?: "betting" | "newcombe";
  seeds: string;
  model: "sim";
  counting: string;
}

export interface MethodResult {
  exact: number;
  false_blames: number;
  abstained: number;
  model_calls: { total: number; mean: number; max: number };
}

export interface AttributionDetail {
  seed: number;
  run: string;
  candidates: string[];
  blamed: Record<Method, string[]>;
  summary: string;
  llm_calls: number;
  llm_calls_naive: number;
  engine_calls: { made: number; naive: number };
  program_runs: number;
  tests: {
    intervention: string;
    n: number;
    verdict: string;
    stopped: string;
    effect: number;
    ci: [number, number];
    program_runs: number;
    model_calls: number;
    naive_model_calls: number;
  }[];
}

export interface ScenarioResult {
  name: string;
  title: string;
  hard: boolean;
  truth: string[];
  runs: number;
  harmful_runs: number;
  high_alerts: number;
  methods: Record<Method, MethodResult>;
  record_model_calls: number;
  replay_model_calls: number;
  /** Replay calls if every identical call were computed again (no cache, no shared arm). */
  replay_model_calls_naive: number;
  /** Where the replays went: program runs of the shared "nothing removed" arm, and of the removal
   * arms of group tests, of single suspects found causal, of the other single suspects, and of
   * leave-one-in tests (joint causes). */
  program_runs: { base: number; group: number; causal_single: number; other_single: number; leave_one_in: number };
  /** Verdicts of the single tests of the scenario's extra suspects (the suppressor, the reviewer's channel). */
  extra_verdicts: Record<string, Record<string, number>>;
  wall_s: number;
  /** CPU seconds of this process (the machine may be shared: wall time then includes waiting). */
  cpu_s: number;
  note: string;
  detail: AttributionDetail[];
}

export interface BenchResult {
  settings: Settings;
  scenarios: ScenarioResult[];
  total_model_calls: number;
  /** The seeds' five scenarios and the control (what the reference's benchmark runs). */
  seeds_model_calls: number;
  wall_s: number;
  cpu_s: number;
  load_average: number[];
  date: string;
  command: string;
  node: string;
  machine: string;
  reference?: ReferenceResult;
}

export interface ReferenceResult {
  dir: string;
  wall_s: number;
  cpu_s: number;
  total_model_calls: number;
  harmful_runs: number;
  exact: number;
  scenarios: { name: string; harmful_runs: number; exact: number; model_calls: number; replay_calls_per_attribution: number }[];
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
function cpuSince(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return round((c.user + c.system) / 1e6, 3);
}

export async function runScenario(sc: Scenario, s: Settings, opts: { workdir: string; log?: (m: string) => void }): Promise<ScenarioResult> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const counter = new CallCounter();
  const system = buildSystem(sc, counter);
  const perRun = llmCallsPerRun(sc);
  const sums = Object.fromEntries(METHODS.map((m) => [m, { exact: 0, false_blames: 0, abstained: 0 }])) as Record<
    Method,
    { exact: number; false_blames: number; abstained: number }
  >;
  const calls: number[] = [];
  const detail: AttributionDetail[] = [];
  let harmful = 0;
  let high = 0;
  let recordCalls = 0;
  let naive = 0;
  const runsBy = { base: 0, group: 0, causal_single: 0, other_single: 0, leave_one_in: 0 };
  const extra: Record<string, Record<string, number>> = Object.fromEntries((sc.extraSuspects ?? []).map((x) => [x, {}]));
  for (let seed = 0; seed < s.runs; seed++) {
    const before = counter.llm;
    const r = await system.run({ seed, outDir: path.join(opts.workdir, sc.name), runId: `${sc.name}-${seed}`, captureSites: false });
    recordCalls += counter.llm - before;
    if (r.error) throw new Error(`${sc.name} seed ${seed} failed: ${r.error}`);
    const run = readRun(r.dir!);
    const inv = analyse(run);
    if (inv.alerts.some((a) => a.severity === "high")) high++;
    if (!sc.target || !targetHits(new RunModel(run), sc.target).length) continue;
    harmful++;
    const base = baselines(run, inv, sc.target);
    const ctx = new ReplayContext(run, system);
    const suspects = sc.extraSuspects ? [...defaultSuspects(ctx, sc.target), ...sc.extraSuspects] : undefined;
    const c0 = counter.llm;
    const att = await attribute(ctx, { target: sc.target, suspects, n: s.n, nMax: s.n_max, roles: s.roles, save: false, method: s.method });
    const made = counter.llm - c0;
    calls.push(made);
    // a naive replay runs both arms of every pair of every test, each with all its model calls
    const naiveRuns = att.tests.reduce((k, t) => k + 2 * t.n, 0);
    naive += naiveRuns * perRun;
    att.tests.forEach((t) => {
      runsBy.base += t.program_runs - t.n;
      if (t.baseline) runsBy.leave_one_in += t.n;
      else if (t.group) runsBy.group += t.n;
      else if (t.verdict === "causal") runsBy.causal_single += t.n;
      else runsBy.other_single += t.n;
      if (!t.group && extra[t.intervention]) extra[t.intervention][t.verdict] = (extra[t.intervention][t.verdict] ?? 0) + 1;
    });
    const blamed: Record<Method, string[]> = { reach: base.reach, provenance: base.provenance, reuse: base.reuse, causeway: blamedBy(att) };
    for (const m of METHODS) {
      const sc1 = score(blamed[m], sc.truth);
      sums[m].exact += +sc1.exact;
      sums[m].false_blames += sc1.false_blames;
      sums[m].abstained += +sc1.abstained;
    }
    detail.push({
      seed,
      run: run.runId,
      candidates: base.candidates,
      blamed,
      summary: att.summary,
      llm_calls: made,
      llm_calls_naive: naiveRuns * perRun,
      engine_calls: { made: att.model_calls, naive: att.naive_model_calls },
      program_runs: att.program_runs,
      tests: att.tests.map((t) => ({
        intervention: t.intervention,
        n: t.n,
        verdict: t.verdict,
        stopped: t.stopped,
        effect: t.effect,
        ci: t.ci,
        program_runs: t.program_runs,
        model_calls: t.model_calls,
        naive_model_calls: t.naive_model_calls,
      })),
    });
    opts.log?.(`  ${sc.name} seed ${seed}: blamed ${JSON.stringify(blamed.causeway)} (truth ${JSON.stringify(sc.truth)}), ${made} model calls`);
  }
  const total = calls.reduce((a, b) => a + b, 0);
  const methods = Object.fromEntries(
    METHODS.map((m) => [
      m,
      {
        ...sums[m],
        model_calls:
          m === "causeway" ? { total, mean: calls.length ? round(total / calls.length, 1) : 0, max: Math.max(0, ...calls) } : { total: 0, mean: 0, max: 0 },
      },
    ]),
  ) as Record<Method, MethodResult>;
  return {
    name: sc.name,
    title: sc.title,
    hard: sc.hard,
    truth: sc.truth,
    runs: s.runs,
    harmful_runs: harmful,
    high_alerts: high,
    methods,
    record_model_calls: recordCalls,
    replay_model_calls: total,
    replay_model_calls_naive: naive,
    program_runs: runsBy,
    extra_verdicts: extra,
    wall_s: round((performance.now() - t0) / 1000, 3),
    cpu_s: cpuSince(cpu0),
    note: sc.note,
    detail,
  };
}

/** Runs the reference's benchmark (Python) from dir, timed in-process (wall and CPU), and reads its JSON. */
export function runReference(dir: string): ReferenceResult {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-refbench-"));
  try {
    const script = `
import contextlib, io, json, sys, time
from bench.run import main
w, c = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    main(["--out", sys.argv[1]])
print(json.dumps([time.perf_counter() - w, time.process_time() - c]))
`;
    const [wall, cpu] = JSON.parse(execFileSync("python3", ["-c", script, out], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })) as [
      number,
      number,
    ];
    const file = fs.readdirSync(out).find((f) => f.endsWith(".json"));
    if (!file) throw new Error(`the reference's benchmark wrote no JSON in ${out}`);
    const res = JSON.parse(fs.readFileSync(path.join(out, file), "utf8")) as {
      scenarios: {
        scenario: string;
        harmful_runs: number;
        attributed_runs?: number;
        model_calls: number;
        replay_calls_per_attribution: number;
        methods: { causeway?: { exact?: number; false_blames_per_run?: number } };
      }[];
    };
    const scenarios = res.scenarios.map((x) => ({
      name: x.scenario,
      harmful_runs: x.harmful_runs,
      exact: Math.round((x.methods.causeway?.exact ?? 0) * (x.attributed_runs ?? x.harmful_runs)),
      model_calls: x.model_calls,
      replay_calls_per_attribution: x.replay_calls_per_attribution,
    }));
    return {
      dir,
      wall_s: round(wall, 2),
      cpu_s: round(cpu, 2),
      total_model_calls: scenarios.reduce((a, x) => a + x.model_calls, 0),
      harmful_runs: scenarios.reduce((a, x) => a + x.harmful_runs, 0),
      exact: scenarios.reduce((a, x) => a + x.exact, 0),
      scenarios,
    };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------ printing

const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lpad = (s: string | number, n: number) => String(s).padStart(n);

export function table(res: BenchResult): string {
  const L: string[] = [];
  const s = res.settings;
  L.push(
    `Attribution benchmark (simulated model): ${s.runs} runs per scenario, Find the cause with --n ${s.n} --n-max ${s.n_max}${s.roles ? "" : " --no-roles"} --method ${s.method ?? "betting"}`,
  );
  L.push("Per method: exact = harmful runs where it blamed exactly the true cause; fb = false blames (innocent inputs blamed, summed); abs = abstained.");
  L.push("");
  const head = `${pad("scenario", 12)} ${lpad("harmful", 7)} ${lpad("high", 4)} | ${METHODS.map((m) => pad(m, 14)).join(" | ")} | ${lpad("calls/attr mean", 15)} ${lpad("max", 5)} | ${lpad("wall s", 6)}`;
  L.push(head);
  L.push(`${pad("", 12)} ${lpad("", 7)} ${lpad("", 4)} | ${METHODS.map(() => pad("exact  fb abs", 14)).join(" | ")} |`);
  L.push("-".repeat(head.length));
  for (const r of res.scenarios) {
    const cells = METHODS.map((m) => {
      const x = r.methods[m];
      return r.harmful_runs ? pad(`${lpad(`${x.exact}/${r.harmful_runs}`, 5)} ${lpad(x.false_blames, 3)} ${lpad(x.abstained, 3)}`, 14) : pad("    –", 14);
    });
    const c = r.methods.causeway.model_calls;
    L.push(
      `${pad(r.name + (r.hard ? "*" : ""), 12)} ${lpad(`${r.harmful_runs}/${r.runs}`, 7)} ${lpad(r.high_alerts, 4)} | ${cells.join(" | ")} | ${lpad(r.harmful_runs ? c.mean.toFixed(1) : "–", 15)} ${lpad(r.harmful_runs ? c.max : "–", 5)} | ${lpad(r.wall_s.toFixed(2), 6)}`,
    );
  }
  L.push("* harder scenarios, not in the seeds");
  L.push("");
  const seeds = res.scenarios.filter((r) => !r.hard);
  const replay = seeds.reduce((a, r) => a + r.replay_model_calls, 0);
  const naive = seeds.reduce((a, r) => a + r.replay_model_calls_naive, 0);
  const rec = seeds.reduce((a, r) => a + r.record_model_calls, 0);
  if (seeds.length)
    L.push(
      `Model calls, the seeds' five + control: ${res.seeds_model_calls.toLocaleString("en-US")} (record ${rec.toLocaleString("en-US")}, replay ${replay.toLocaleString("en-US")}; without the cache and the shared arm the same tests would make ${naive.toLocaleString("en-US")} replay calls)`,
    );
  L.push(
    `Model calls, all ${res.scenarios.length} scenarios: ${res.total_model_calls.toLocaleString("en-US")}; wall time ${res.wall_s.toFixed(1)} s (${res.cpu_s.toFixed(1)} s CPU)`,
  );
  if (res.reference) {
    const ref = res.reference;
    L.push(
      `Reference (Python, measured now from ${ref.dir}): ${ref.total_model_calls.toLocaleString("en-US")} model calls, exact ${ref.exact}/${ref.harmful_runs}, ${ref.wall_s.toFixed(2)} s wall (${ref.cpu_s.toFixed(2)} s CPU); ours / reference model calls: ${(res.seeds_model_calls / ref.total_model_calls).toFixed(3)}`,
    );
  }
  return L.join("\n");
}

export function markdown(res: BenchResult): string {
  const L: string[] = [];
  const s = res.settings;
  L.push(`# Attribution benchmark, simulated model, ${res.date}`, "");
  L.push(`Command: \`${res.command}\``, "");
  L.push(
    `Machine: ${res.machine}; Node ${res.node}. ${s.runs} runs per scenario (seeds ${s.seeds}); Find the cause with n = ${s.n}, n_max = ${s.n_max}, roles ${s.roles ? "on" : "off"}.`,
    "",
  );
  L.push(`Counting: ${s.counting}`, "");
  L.push(
    "| scenario | harmful runs | high-alert runs | reach exact / fb / abstain | provenance exact / fb / abstain | reuse exact / fb / abstain | **causeway exact / fb / abstain** | calls per attribution mean (max) | wall s |",
  );
  L.push("|---|---|---|---|---|---|---|---|---|");
  for (const r of res.scenarios) {
    const cell = (m: Method) => {
      const x = r.methods[m];
      return r.harmful_runs ? `${x.exact}/${r.harmful_runs} / ${x.false_blames} / ${x.abstained}` : "–";
    };
    const c = r.methods.causeway.model_calls;
    L.push(
      `| ${r.name}${r.hard ? " (harder)" : ""} | ${r.harmful_runs} of ${r.runs} | ${r.high_alerts} | ${cell("reach")} | ${cell("provenance")} | ${cell("reuse")} | **${cell("causeway")}** | ${r.harmful_runs ? `${c.mean.toFixed(1)} (${c.max})` : "–"} | ${r.wall_s.toFixed(2)} |`,
    );
  }
  const seeds = res.scenarios.filter((r) => !r.hard);
  const replay = seeds.reduce((a, r) => a + r.replay_model_calls, 0);
  const naive = seeds.reduce((a, r) => a + r.replay_model_calls_naive, 0);
  const rec = seeds.reduce((a, r) => a + r.record_model_calls, 0);
  L.push("");
  if (seeds.length)
    L.push(
      `- Model calls, the seeds' five + control: **${res.seeds_model_calls.toLocaleString("en-US")}** (record ${rec.toLocaleString("en-US")} + replay ${replay.toLocaleString("en-US")}); the same tests without the model-call cache and the shared "nothing removed" arm: ${(rec + naive).toLocaleString("en-US")}.`,
    );
  L.push(
    `- Model calls, all ${res.scenarios.length} scenarios: ${res.total_model_calls.toLocaleString("en-US")}. Wall time of the whole benchmark: ${res.wall_s.toFixed(1)} s (${res.cpu_s.toFixed(1)} s CPU; load average at the end ${res.load_average.join(" / ")} on ${res.machine}).`,
  );
  if (res.reference) {
    const ref = res.reference;
    L.push(
      `- Reference (Python) benchmark, run in the same session (\`python3 -m bench.run\` in ${ref.dir}): ${ref.total_model_calls.toLocaleString("en-US")} model calls, exact ${ref.exact} of ${ref.harmful_runs}, ${ref.wall_s.toFixed(2)} s wall (${ref.cpu_s.toFixed(2)} s CPU). Ours / reference model calls: **${(res.seeds_model_calls / ref.total_model_calls).toFixed(3)}**.`,
    );
  }
  L.push("", "Scenarios:", "");
  for (const r of res.scenarios) {
    const extra = Object.entries(r.extra_verdicts ?? {}).map(
      ([spec, v]) =>
        ` Single tests of \`${spec}\`: ${
          Object.entries(v)
            .map(([k, n]) => `${k} ${n}`)
            .join(", ") || "none run"
        }.`,
    );
    L.push(
      `- \`${r.name}\`: ${r.title}. Truth: ${r.truth.map((t) => `\`${t}\``).join(" + ") || "none"}. ${r.note[0].toUpperCase() + r.note.slice(1)}.${extra.join("")}`,
    );
  }
  return L.join("\n") + "\n";
}

// ------------------------------------------------------------------------------ main

function parseArgs(argv: string[]) {
  const o = {
    runs: 20,
    n: 10,
    nMax: 30,
    roles: false,
    method: "betting" as "betting" | "newcombe",
    scenarios: [] as string[],
    json: false,
    out: "",
    tag: "",
    keep: "",
    reference: "",
    quiet: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--runs") o.runs = Number(val());
    else if (a === "--n") o.n = Number(val());
    else if (a === "--n-max") o.nMax = Number(val());
    else if (a === "--roles") o.roles = true;
    else if (a === "--method") {
      const m = val();
      if (m !== "betting" && m !== "newcombe") throw new Error("--method must be betting or newcombe");
      o.method = m;
    } else if (a === "--scenario") o.scenarios.push(val());
    else if (a === "--json") o.json = true;
    else if (a === "--out") o.out = val();
    else if (a === "--tag") o.tag = val();
    else if (a === "--keep-runs") o.keep = val();
    else if (a === "--reference") o.reference = val();
    else if (a === "--quiet") o.quiet = true;
    else throw new Error(`unknown option ${a}`);
  }
  for (const k of ["runs", "n", "nMax"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

export function commandLine(argv: string[]): string {
  return process.env.npm_lifecycle_event === "bench"
    ? `npm run bench${argv.length ? " -- " + argv.join(" ") : ""}`
    : `node dist/bench/run.js ${argv.join(" ")}`.trim();
}

export async function main(argv: string[]): Promise<number> {
  if (argv.some((a) => a === "--endpoint" || a.startsWith("--endpoint="))) return realMain(argv);
  const o = parseArgs(argv);
  const log = o.json || o.quiet ? () => {} : (m: string) => process.stderr.write(m + "\n");
  const scs = o.scenarios.length
    ? o.scenarios.map(
        (n) =>
          SCENARIOS.find((s) => s.name === n) ??
          (() => {
            throw new Error(`no scenario ${n}`);
          })(),
      )
    : [...SCENARIOS];
  const settings: Settings = {
    runs: o.runs,
    n: o.n,
    n_max: o.nMax,
    roles: o.roles,
    method: o.method,
    seeds: `0..${o.runs - 1}`,
    model: "sim",
    counting:
      "language-model calls (researchers, planner, reviewer) really computed, when recording and when replaying; the executor's deterministic runner is not counted (the reference's rule); replay calls served from the seeded-model cache are not made and not counted",
  };
  const workdir = o.keep ? path.resolve(o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), "causeway-bench-"));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const results: ScenarioResult[] = [];
  for (const sc of scs) {
    fs.rmSync(path.join(workdir, sc.name), { recursive: true, force: true });
    log(`== ${sc.name}: ${sc.title}`);
    results.push(await runScenario(sc, settings, { workdir, log }));
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSince(cpu0);
  if (!o.keep) fs.rmSync(workdir, { recursive: true, force: true });
  const seedsCalls = results.filter((r) => !r.hard).reduce((a, r) => a + r.record_model_calls + r.replay_model_calls, 0);
  const res: BenchResult = {
    settings,
    scenarios: results,
    total_model_calls: results.reduce((a, r) => a + r.record_model_calls + r.replay_model_calls, 0),
    seeds_model_calls: seedsCalls,
    wall_s: round(wall, 2),
    cpu_s: cpu,
    load_average: os.loadavg().map((x) => round(x, 2)),
    date: new Date().toISOString().slice(0, 10),
    command: commandLine(argv),
    node: process.version,
    machine: `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}, ${os.platform()}`,
  };
  if (o.reference) {
    log(`== reference: python3 -m bench.run in ${o.reference}`);
    res.reference = runReference(o.reference);
  }
  if (o.json) process.stdout.write(JSON.stringify(res) + "\n");
  else process.stdout.write(table(res) + "\n");
  if (o.out) {
    const file = writeResult(o.out, `${res.date}-sim${o.tag ? "-" + o.tag : ""}`, res, markdown(res));
    log(`wrote ${file} and .md`);
  }
  return 0;
}

runAsCommand("bench", typeof module === "undefined" ? undefined : module, main);
