/**
 * Calibration of the paired test: `npm run bench:calibration [-- options]`.
 *
 *  null   Tests of an input with no effect: the first document of a scenario, read before the
 *         injection, so removing it shifts which draw every later sentence gets (the arms really
 *         differ pair by pair) while the harm stays exactly as likely. How many are called causal
 *         (target: at most 5%)? Run on `weak` (harm in about 25% of replays) and on `exfil`
 *         (about 72%), sequentially (--n 10 --n-max 160).
 *  power  Tests of the injection on `weak`, followed 25% of the time: how often is it called
 *         causal, and after how many pairs on average? Sequential (--n 10 --n-max 160), and with
 *         10 fixed pairs for comparison.
 *  floor  How many replays per suspect are needed: the smallest n at which a causal verdict is
 *         possible at all (every pair flips), for one test and for Find the cause's families; the
 *         smallest n at which the exact McNemar test can reach p < 0.05; and the measured share of
 *         the seeds' harmful runs in which Find the cause names exactly the true cause with n fixed
 *         pairs per test (5, 10, 15, 20, 30).
 *
 * Every test uses its own seeds (seed base "cal-<kind>-<k>"), so the tests are independent.
 * Options: --null N (1000 per scenario)  --power N (1000)  --floor-runs R (20)  --only null,power,floor
 * --json  --out DIR
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { runAsCommand, writeResult } from "./output";
import { mcnemarExact, newcombe, readRun, wilson, zFor, type RunData } from "causeway-vscode";
import { targetHits } from "../core/graph/graph";
import { RunModel } from "../core/graph/model";
import { ReplayContext, runTest } from "../core/replay/engine";
import { attribute } from "../core/replay/attribute";
import { blamedBy, score } from "./methods";
import { SCENARIOS, scenario, type Scenario } from "./scenarios";
import { CallCounter } from "./sim";
import { buildSystem } from "./system";

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

interface TestBatch {
  scenario: string;
  intervention: string;
  target: string;
  n: number;
  n_max: number;
  tests: number;
  causal: number;
  suppressive: number;
  ruled_out: number;
  inconclusive: number;
  rate_causal: number;
  /** Wilson 95% interval of the causal rate. */
  rate_ci: [number, number];
  mean_pairs: number;
  max_pairs: number;
  /** Why the tests stopped: decisive, futility (no effect seen), n_max. */
  stopped: Record<string, number>;
  /** Tests that missed a causal verdict, by why they stopped. */
  missed_by: Record<string, number>;
  mean_p_with: number;
  model_calls: number;
  wall_s: number;
}

async function record(sc: Scenario, seed: number, dir: string, tag: string): Promise<{ run: RunData; sys: ReturnType<typeof buildSystem>; counter: CallCounter }> {
  const counter = new CallCounter();
  const sys = buildSystem(sc, counter);
  const r = await sys.run({ seed, outDir: dir, runId: `${sc.name}-${tag}-${seed}`, captureSites: false });
  return { run: readRun(r.dir!), sys, counter };
}

/** `count` independent tests of one intervention on one recorded run. */
async function batch(sc: Scenario, intervention: string, count: number, n: number, nMax: number, kind: string, dir: string): Promise<TestBatch> {
  const { run, sys, counter } = await record(sc, 0, dir, kind);
  const t0 = performance.now();
  const c0 = counter.llm;
  const verdicts = { causal: 0, suppressive: 0, "ruled-out": 0, inconclusive: 0, "not-applied": 0 };
  let pairs = 0;
  let maxPairs = 0;
  let pWith = 0;
  const stopped: Record<string, number> = {};
  const missed: Record<string, number> = {};
  for (let k = 0; k < count; k++) {
    const ctx = new ReplayContext(run, sys);
    const r = await runTest(ctx, { intervention, target: sc.target!, n, nMax, seedBase: `cal-${kind}-${k}`, save: false });
    verdicts[r.verdict]++;
    stopped[r.stopped] = (stopped[r.stopped] ?? 0) + 1;
    if (r.verdict !== "causal") missed[r.stopped] = (missed[r.stopped] ?? 0) + 1;
    pairs += r.n;
    maxPairs = Math.max(maxPairs, r.n);
    pWith += r.p_with;
  }
  const ci = wilson(verdicts.causal, count);
  return {
    scenario: sc.name,
    intervention,
    target: sc.target!,
    n,
    n_max: nMax,
    tests: count,
    causal: verdicts.causal,
    suppressive: verdicts.suppressive,
    ruled_out: verdicts["ruled-out"],
    inconclusive: verdicts.inconclusive,
    rate_causal: round(verdicts.causal / count),
    rate_ci: [round(ci[0]), round(ci[1])],
    mean_pairs: round(pairs / count, 1),
    max_pairs: maxPairs,
    stopped,
    missed_by: missed,
    mean_p_with: round(pWith / count, 3),
    model_calls: counter.llm - c0,
    wall_s: round((performance.now() - t0) / 1000, 2),
  };
}

/** Smallest n at which n flipped pairs out of n (all with, none without) give a causal interval. */
export function minCausalN(k: number, maxN = 200): number | null {
  const z = zFor(k);
  for (let n = 1; n <= maxN; n++) if (newcombe(n, n, 0, n, z)[0] > 0) return n;
  return null;
}

/** Smallest number of discordant pairs, all one way, for which the exact McNemar p is below alpha. */
export function minMcnemarPairs(alpha = 0.05): number {
  for (let b = 1; ; b++) if (mcnemarExact(b, 0) < alpha) return b;
}

interface FloorRow {
  n: number;
  harmful_runs: number;
  exact: number;
  false_blames: number;
  rate_exact: number;
  model_calls: number;
}

/** Find the cause with n fixed pairs per test, on the harmful runs of the seeds' five scenarios. */
async function floorStudy(ns: number[], runs: number, dir: string): Promise<FloorRow[]> {
  const seeds = SCENARIOS.filter((s) => !s.hard && s.target);
  // record once per scenario, then attribute every harmful run at each n
  const recorded: { sc: Scenario; sys: ReturnType<typeof buildSystem>; counter: CallCounter; runs: RunData[] }[] = [];
  for (const sc of seeds) {
    const counter = new CallCounter();
    const sys = buildSystem(sc, counter);
    const harmful: RunData[] = [];
    for (let seed = 0; seed < runs; seed++) {
      const r = await sys.run({ seed, outDir: path.join(dir, "floor"), runId: `${sc.name}-${seed}`, captureSites: false });
      const run = readRun(r.dir!);
      if (targetHits(new RunModel(run), sc.target!).length) harmful.push(run);
    }
    recorded.push({ sc, sys, counter, runs: harmful });
  }
  const rows: FloorRow[] = [];
  for (const n of ns) {
    let exact = 0;
    let fb = 0;
    let total = 0;
    let calls = 0;
    for (const { sc, sys, counter, runs: harmful } of recorded) {
      for (const run of harmful) {
        const ctx = new ReplayContext(run, sys);
        const c0 = counter.llm;
        const att = await attribute(ctx, { target: sc.target!, n, nMax: n, roles: false, save: false });
        calls += counter.llm - c0;
        const s = score(blamedBy(att), sc.truth);
        exact += +s.exact;
        fb += s.false_blames;
        total++;
      }
    }
    rows.push({ n, harmful_runs: total, exact, false_blames: fb, rate_exact: round(exact / total, 3), model_calls: calls });
  }
  return rows;
}

const pc = (x: number) => `${(100 * x).toFixed(1)}%`;

export function calibrationMarkdown(res: { date: string; command: string; node: string; nulls: TestBatch[]; power: TestBatch[]; floor: { mcnemar_min_pairs: number; min_causal_n: { family: number; n: number | null }[]; attribution: FloorRow[] }; wall_s: number }): string {
  const L = [`# Calibration of the paired test, ${res.date}`, "", `Command: \`${res.command}\` (Node ${res.node}; ${res.wall_s} s wall).`, ""];
  L.push("| study | scenario | removed | settings | tests | called causal | 95% interval | suppressive | mean pairs (max) | mean p_with | stopped (not causal) |", "|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [kind, rows] of [["null (no effect)", res.nulls], ["power (25% follow)", res.power]] as const) {
    for (const b of rows) {
      L.push(
        `| ${kind} | ${b.scenario} | \`${b.intervention}\` | --n ${b.n} --n-max ${b.n_max} | ${b.tests} | ${b.causal} (${pc(b.rate_causal)}) | ${pc(b.rate_ci[0])}–${pc(b.rate_ci[1])} | ${b.suppressive} | ${b.mean_pairs} (${b.max_pairs}) | ${b.mean_p_with} | ${JSON.stringify(b.missed_by)} |`,
      );
    }
  }
  L.push("", `Floor: the exact McNemar test needs at least ${res.floor.mcnemar_min_pairs} discordant pairs, all one way, to reach p < 0.05 (five give 0.0625). Newcombe's interval (what our verdicts use), one look: ${res.floor.min_causal_n.map((m) => `family ${m.family}: ${m.n} pairs, all flipped`).join("; ")}.`, "");
  if (res.floor.attribution.length) {
    L.push("Find the cause with n fixed pairs per test (no sequential looks), on the harmful runs of the seeds' five scenarios:", "", "| pairs per test | exact | false blames | model calls (replay) |", "|---|---|---|---|");
    for (const r of res.floor.attribution) L.push(`| ${r.n} | ${r.exact} of ${r.harmful_runs} (${pc(r.rate_exact)}) | ${r.false_blames} | ${r.model_calls.toLocaleString("en-US")} |`);
  }
  return L.join("\n") + "\n";
}

function parseArgs(argv: string[]) {
  const o = { nulls: 1000, power: 1000, floorRuns: 20, json: false, out: "", parts: ["null", "power", "floor"] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === "--null") o.nulls = Number(v());
    else if (a === "--power") o.power = Number(v());
    else if (a === "--floor-runs") o.floorRuns = Number(v());
    else if (a === "--json") o.json = true;
    else if (a === "--out") o.out = v();
    else if (a === "--only") o.parts = v().split(",");
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

export async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const log = o.json ? () => {} : (m: string) => process.stdout.write(m + "\n");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-cal-"));
  const t0 = performance.now();
  try {
    const weak = scenario("weak");
    const exfil = scenario("exfil");
    const nulls: TestBatch[] = [];
    for (const [sc, spec] of [
      [weak, "input:email:invoice-2291"],
      [exfil, "input:inbox:ticket-4471"],
    ] as const) {
      if (!o.parts.includes("null")) break;
      nulls.push(await batch(sc, spec, o.nulls, 10, 160, `null-${sc.name}`, dir));
      const b = nulls[nulls.length - 1];
      log(`null  ${sc.name.padEnd(6)} ${spec}: ${b.causal} of ${b.tests} called causal (${(100 * b.rate_causal).toFixed(1)}% [${(100 * b.rate_ci[0]).toFixed(1)}, ${(100 * b.rate_ci[1]).toFixed(1)}]), ${b.suppressive} suppressive; mean pairs ${b.mean_pairs}, p_with ${b.mean_p_with}; ${b.wall_s} s`);
    }
    const power: TestBatch[] = [];
    for (const [n, nMax] of [
      [10, 160],
      [10, 10],
      [30, 30],
    ] as const) {
      if (!o.parts.includes("power")) break;
      power.push(await batch(weak, "input:email:vendor-thread", o.power, n, nMax, `power-${n}-${nMax}`, dir));
      const b = power[power.length - 1];
      log(`power weak   --n ${n} --n-max ${nMax}: ${b.causal} of ${b.tests} called causal (${(100 * b.rate_causal).toFixed(1)}%), mean pairs ${b.mean_pairs} (max ${b.max_pairs}), p_with ${b.mean_p_with}; not causal by stop: ${JSON.stringify(b.missed_by)}; ${b.wall_s} s`);
    }
    const families = [1, 7, 9];
    const floor = {
      mcnemar_min_pairs: minMcnemarPairs(),
      min_causal_n: families.map((f) => ({ family: f, looks: 1, n: minCausalN(f) })),
      attribution: o.parts.includes("floor") ? await floorStudy([5, 10, 15, 20, 30], o.floorRuns, dir) : [],
    };
    log(`floor exact McNemar: ${floor.mcnemar_min_pairs} discordant pairs, all one way, are the fewest that reach p < 0.05`);
    for (const m of floor.min_causal_n) log(`floor Newcombe, family ${m.family}, one look: a causal verdict needs at least ${m.n} pairs, every one flipped`);
    for (const r of floor.attribution) log(`floor Find the cause with ${String(r.n).padStart(2)} fixed pairs per test: exact in ${r.exact} of ${r.harmful_runs} harmful runs (${(100 * r.rate_exact).toFixed(0)}%), ${r.false_blames} false blames, ${r.model_calls} model calls`);
    const wall = round((performance.now() - t0) / 1000, 1);
    log(`wall time ${wall} s`);
    const res = { date: new Date().toISOString().slice(0, 10), command: `npm run bench:calibration${argv.length ? " -- " + argv.join(" ") : ""}`, node: process.version, nulls, power, floor, wall_s: wall };
    if (o.json) process.stdout.write(JSON.stringify(res) + "\n");
    if (o.out) {
      const file = writeResult(o.out, `${res.date}-calibration`, res, calibrationMarkdown(res));
      if (!o.json) log(`wrote ${file} and .md`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}

runAsCommand("bench:calibration", typeof module === "undefined" ? undefined : module, main);
