/**
 * Calibration of the paired test: `npm run bench:calibration [-- options]`, for both methods (the
 * paired betting sequence, the default, and the reference's Newcombe interval, `--method newcombe`).
 *
 *  null       Tests of inputs with no effect (true effect 0), sequential up to 160 pairs:
 *             shift-weak / shift-exfil  remove a document read before the injection: every later
 *                        draw shifts, so pairs flip both ways while the harm stays as likely;
 *             identical  remove the last document of `weak`: no draw the harm depends on moves,
 *                        the arms never differ (how fast is "ruled out"?);
 *             negcorr    a program whose harm happens on a draw u < ½ with a newsletter in the
 *                        context and on u ≥ ½ without it: the arms are perfectly negatively
 *                        correlated, the rate is ½ in both (the worst case for an interval that
 *                        treats the arms as independent).
 *             Reported: false causal or suppressive calls, coverage of 0, ruled out (within 30
 *             pairs), mean pairs.
 *  power      The injection of `weak`, followed 25% of the time: found causal how often, after how
 *             many pairs, and does the interval cover the true effect (estimated once from 20,000
 *             pairs) at the stopping time?
 *  attribute  Find the cause itself on nulls, every attribution with its own seeds: one agent reads
 *             three untrusted inputs (one alone holds the address the e-mail goes to, so it is the
 *             lead suspect) and e-mails a report with probability 0.7 whatever it read:
 *               reshuffle  the model's draw hashes its whole context, so every removal flips
 *                          pairs both ways (the hardest null for a sequential test);
 *               identical  the draw ignores the context, so no removal changes a pair.
 *             Reported: attributions that blamed anything (all false), model calls and pairs.
 *  floor      As before: the fewest pairs a causal verdict needs, and Find the cause with n fixed
 *             pairs per test on the seeds' harmful runs (reference method).
 *
 * Every test uses its own seeds (seed base "cal-<kind>-<k>"), so the tests are independent.
 * Options: --tests N (2000 per batch and method)  --attributions N (2000 per null and method)
 * --floor-runs R (20)  --only null,power,attribute,floor
 * --methods betting,newcombe  --pick 0,2 (only those studies)  --json  --out DIR [--tag T]
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { runAsCommand, writeResult } from "./output";
import { PyRandom, System, mcnemarExact, newcombe, readRun, wilson, zFor, type RunData, type Runtime } from "causeway-vscode";
import { targetHits } from "../core/graph/graph";
import { RunModel } from "../core/graph/model";
import { ReplayContext } from "../core/replay/context";
import { runTest } from "../core/replay/run-test";
import { attribute } from "../core/replay/attribute";
import { blamedBy, score } from "./methods";
import { SCENARIOS, scenario, type Scenario } from "./scenarios";
import { CallCounter } from "./sim";
import { buildSystem } from "./system";

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

interface TestBatch {
  method: "betting" | "newcombe";
  kind: string;
  /** The true effect the interval should cover. */
  true_effect: number;
  /** Share of tests whose interval at the stopping time contains the true effect. */
  coverage: number;
  /** Causal or suppressive calls (on a null: false calls). */
  decisive_wrong_sign: number;
  rate_false: number;
  rate_false_ci: [number, number];
  /** Ruled out within 30 pairs. */
  ruled_out_30: number;
  /** Share of pairs whose arms differed (discordant), over every pair of the batch. */
  discordance: number;
  /**
   * Nulls: the best any valid 5% test could do at 30 pairs: the power at effect 0 of a fixed-n
   * equivalence test (two one-sided z-tests, margin 0.2) that knows the variance of d (the
   * discordance). A sequential, anytime-valid test can only do worse.
   */
  fixed_n_bound_30: number | null;
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

async function record(
  sc: Scenario,
  seed: number,
  dir: string,
  tag: string,
): Promise<{ run: RunData; sys: ReturnType<typeof buildSystem>; counter: CallCounter }> {
  const counter = new CallCounter();
  const sys = buildSystem(sc, counter);
  const r = await sys.run({ seed, outDir: dir, runId: `${sc.name}-${tag}-${seed}`, captureSites: false });
  return { run: readRun(r.dir!), sys, counter };
}

interface Subject {
  scenario: string;
  run: RunData;
  sys: System;
  target: string;
  /** Counts the language-model calls (null: use the tests' own counts). */
  counter: CallCounter | null;
}

async function subjectOf(sc: Scenario, dir: string, tag: string): Promise<Subject> {
  const { run, sys, counter } = await record(sc, 0, dir, tag);
  return { scenario: sc.name, run, sys, target: sc.target!, counter };
}

/**
 * A null with perfectly negatively correlated arms: the harm happens on u < ½ with the newsletter in
 * the context and on u ≥ ½ without it (u: the planner call's first draw), so both rates are ½.
 */
async function negcorrSubject(dir: string): Promise<Subject> {
  const program = async (rt: Runtime) => {
    const a = rt.agent("ops");
    const news = a.observe("Weekly newsletter: the cafeteria has a new menu.", { source: "email:newsletter", trust: "untrusted" });
    const d = await a.decide([rt.taskRef!, news], { model: "m", purpose: "plan" });
    for (const step of d.value as string[]) await a.act(step, {}, { decision: d });
  };
  const model = (ctx: unknown[], call: { seed: number }) => {
    const u = new PyRandom(call.seed).random();
    const withNews = ctx.some((c) => typeof c === "string" && c.includes("newsletter"));
    return (withNews ? u < 0.5 : u >= 0.5) ? ["send_report"] : ["archive"];
  };
  const sys = new System({
    program,
    models: { m: model },
    tools: { send_report: () => ({ ok: true }), archive: () => ({ ok: true }) },
    task: "Send the weekly report if needed.",
    sensitiveTools: ["send_report"],
    name: "negcorr",
  });
  for (let seed = 0; seed < 50; seed++) {
    const r = await sys.run({ seed, outDir: dir, runId: `negcorr-${seed}`, captureSites: false });
    if (r.actions.some((x) => x.tool === "send_report")) return { scenario: "negcorr", run: readRun(r.dir!), sys, target: "tool=send_report", counter: null };
  }
  throw new Error("negcorr: no run sent the report");
}

/** The true effect of an intervention on a recorded run, from `pairs` pairs (a large fixed sample). */
async function trueEffect(sub: Subject, intervention: string, pairs: number): Promise<number> {
  const ctx = new ReplayContext(sub.run, sub.sys);
  const r = await runTest(ctx, { intervention, target: sub.target, n: pairs, method: "newcombe", seedBase: "cal-truth", save: false });
  return r.p_with - r.p_without;
}

/** `count` independent tests of one intervention on one recorded run. */
async function batch(sub: Subject, intervention: string, count: number, method: "betting" | "newcombe", kind: string, truth: number): Promise<TestBatch> {
  const n = method === "newcombe" ? 10 : 160;
  const nMax = 160;
  const t0 = performance.now();
  const c0 = sub.counter?.llm ?? 0;
  let calls = 0;
  const verdicts = { causal: 0, suppressive: 0, "ruled-out": 0, inconclusive: 0, "not-applied": 0 };
  let pairs = 0;
  let maxPairs = 0;
  let pWith = 0;
  let covered = 0;
  let ruled30 = 0;
  let discordant = 0;
  const stopped: Record<string, number> = {};
  const missed: Record<string, number> = {};
  for (let k = 0; k < count; k++) {
    const ctx = new ReplayContext(sub.run, sub.sys);
    const r = await runTest(ctx, { intervention, target: sub.target, n, nMax, method, seedBase: `cal-${kind}-${k}`, save: false });
    verdicts[r.verdict]++;
    stopped[r.stopped] = (stopped[r.stopped] ?? 0) + 1;
    if (r.verdict !== "causal") missed[r.stopped] = (missed[r.stopped] ?? 0) + 1;
    if (r.ci[0] <= truth && truth <= r.ci[1]) covered++;
    if (r.verdict === "ruled-out" && r.n <= 30) ruled30++;
    discordant += r.pair_flips.removed + r.pair_flips.added;
    pairs += r.n;
    maxPairs = Math.max(maxPairs, r.n);
    pWith += r.p_with;
    calls += r.model_calls;
  }
  const ci = wilson(verdicts.causal, count);
  const wrong = verdicts.causal + verdicts.suppressive;
  const fci = wilson(wrong, count);
  return {
    method,
    kind,
    true_effect: round(truth, 4),
    coverage: round(covered / count),
    decisive_wrong_sign: wrong,
    rate_false: round(wrong / count),
    rate_false_ci: [round(fci[0]), round(fci[1])],
    ruled_out_30: ruled30,
    discordance: round(discordant / Math.max(1, pairs)),
    fixed_n_bound_30: truth === 0 ? round(equivalenceBound(discordant / Math.max(1, pairs), 30)) : null,
    scenario: sub.scenario,
    intervention,
    target: sub.target,
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
    model_calls: sub.counter ? sub.counter.llm - c0 : calls,
    wall_s: round((performance.now() - t0) / 1000, 2),
  };
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 through erf; |error| < 1.5e-7). */
function phi(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp((-x * x) / 2);
  return x >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/**
 * Power at true effect 0 of a fixed-n equivalence test (two one-sided z-tests at 5%, margin 0.2)
 * on n pairs whose differences have variance `discordance` (d ∈ {−1, 0, 1} with mean 0): the chance
 * that |mean d| < 0.2 − 1.645·σ/√n, i.e. 2Φ(0.2√n/σ − 1.645) − 1. No valid 5% test can rule such
 * an input out within n pairs more often.
 */
export function equivalenceBound(discordance: number, n: number, margin = 0.2): number {
  if (discordance <= 0) return 1;
  return Math.max(0, 2 * phi((margin * Math.sqrt(n)) / Math.sqrt(discordance) - 1.6448536) - 1);
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
        const att = await attribute(ctx, { target: sc.target!, n, nMax: n, roles: false, save: false, method: "newcombe" });
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

interface AttributionNullRow {
  null: "reshuffle" | "identical";
  method: "betting" | "newcombe";
  attributions: number;
  /** Attributions that named a cause or a joint cause (on a null every one is false). */
  blamed: number;
  rate_blamed: number;
  rate_blamed_ci: [number, number];
  /** Attributions whose lead suspect was tested alone first (betting). */
  lead_tested: number;
  mean_model_calls: number;
  mean_pairs: number;
  wall_s: number;
}

/**
 * A null for Find the cause: one agent reads three untrusted inputs (only the wiki page holds the
 * address the report goes to, which makes it the lead suspect) and e-mails the report with
 * probability 0.7 whatever it read. `reshuffle`: the draw hashes the seed and the whole context, so
 * removing any input flips pairs both ways; `identical`: the draw depends on the seed alone.
 */
async function attributionNullRun(dir: string, kind: "reshuffle" | "identical"): Promise<{ run: RunData; sys: System }> {
  const program = async (rt: Runtime) => {
    const a = rt.agent("ops");
    const docs = [
      a.observe("Send reports to ops-reports@example.org.", { source: "wiki:contacts", trust: "untrusted" }),
      a.observe("The report is due on Monday.", { source: "issue:comment", trust: "untrusted" }),
      a.observe("Printers jam on Fridays.", { source: "chat:oncall", trust: "untrusted" }),
    ];
    const d = await a.decide([rt.taskRef!, ...docs], { model: "m" });
    for (const step of d.value as string[]) await a.act(step, step === "send_email" ? { to: "ops-reports@example.org" } : {}, { decision: d });
  };
  const draw = (ctx: unknown[], seed: number) =>
    kind === "reshuffle"
      ? createHash("sha256")
          .update(String(seed) + JSON.stringify(ctx))
          .digest()
          .readUInt32BE(0) /
        2 ** 32
      : new PyRandom(seed).random();
  const model = (ctx: unknown[], call: { seed: number }) => (draw(ctx, call.seed) < 0.7 ? ["send_email"] : ["archive"]);
  const sys = new System({
    program,
    models: { m: model },
    tools: { send_email: () => ({ ok: true }), archive: () => ({ ok: true }) },
    task: "Tidy the ops inbox.",
    sensitiveTools: ["send_email"],
    name: `null-${kind}`,
  });
  for (let seed = 0; seed < 50; seed++) {
    const r = await sys.run({ seed, outDir: dir, runId: `attribution-null-${kind}-${seed}`, captureSites: false });
    if (r.actions.some((x) => x.tool === "send_email")) return { run: readRun(r.dir!), sys };
  }
  throw new Error(`attribution null ${kind}: no run sent the e-mail`);
}

/** `count` independent Find the cause runs on a null: how often is anything blamed? */
async function attributionNullStudy(kind: "reshuffle" | "identical", method: "betting" | "newcombe", count: number, dir: string): Promise<AttributionNullRow> {
  const { run, sys } = await attributionNullRun(path.join(dir, `attribution-${method}`), kind);
  const t0 = performance.now();
  let blamed = 0;
  let lead = 0;
  let calls = 0;
  let pairs = 0;
  for (let k = 0; k < count; k++) {
    const a = await attribute(new ReplayContext(run, sys), {
      target: "tool=send_email",
      n: 10,
      nMax: 30,
      roles: false,
      save: false,
      method,
      seedBase: `cal-attr-${kind}-${k}`,
    });
    if (a.causes.length || a.joint.length) blamed++;
    if (a.phases?.some((ph) => ph.lead)) lead++;
    calls += a.model_calls;
    pairs += a.tests.reduce((sum, t) => sum + t.n, 0);
  }
  const ci = wilson(blamed, count);
  return {
    null: kind,
    method,
    attributions: count,
    blamed,
    rate_blamed: round(blamed / count),
    rate_blamed_ci: [round(ci[0]), round(ci[1])],
    lead_tested: lead,
    mean_model_calls: round(calls / count, 1),
    mean_pairs: round(pairs / count, 1),
    wall_s: round((performance.now() - t0) / 1000, 2),
  };
}

const pc = (x: number) => `${(100 * x).toFixed(1)}%`;

export function calibrationMarkdown(res: {
  date: string;
  command: string;
  node: string;
  batches: TestBatch[];
  attribution_nulls: AttributionNullRow[];
  floor: { mcnemar_min_pairs: number; min_causal_n: { family: number; n: number | null }[]; attribution: FloorRow[] };
  wall_s: number;
}): string {
  const L = [`# Calibration of the paired test, ${res.date}`, "", `Command: \`${res.command}\` (Node ${res.node}; ${res.wall_s} s wall).`, ""];
  L.push(
    "Betting: the paired betting confidence sequence, looked at after every pair, up to 160 pairs. Newcombe: the reference's interval at looks 10, 20, 40, 80, 160 (Bonferroni over looks) with its futility stop.",
    "",
  );
  L.push(
    "| study | scenario | removed | method | tests | true effect | false causal/suppressive (95% CI) | called causal | coverage of the true effect | ruled out (≤ 30 pairs) | discordant pairs | best possible ≤ 30 | mean pairs (max) | stopped |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const b of res.batches) {
    const isNull = b.kind.startsWith("null");
    L.push(
      `| ${b.kind} | ${b.scenario} | \`${b.intervention}\` | ${b.method} | ${b.tests} | ${b.true_effect} | ${isNull ? `**${pc(b.rate_false)}** (${pc(b.rate_false_ci[0])}–${pc(b.rate_false_ci[1])})` : "–"} | ${b.causal} (${pc(b.rate_causal)}) | **${pc(b.coverage)}** | ${b.ruled_out} (${pc(b.ruled_out_30 / b.tests)}) | ${pc(b.discordance)} | ${b.fixed_n_bound_30 === null ? "–" : pc(b.fixed_n_bound_30)} | ${b.mean_pairs} (${b.max_pairs}) | ${JSON.stringify(b.stopped)} |`,
    );
  }
  L.push(
    "",
    "Best possible ≤ 30: on a null, the share a fixed-n equivalence test (two one-sided z-tests at 5%, margin 0.2) that knew the variance of the differences would rule out at exactly 30 pairs, 2Φ(0.2·√30/σ − 1.645) − 1 with σ² the discordant share. An anytime-valid sequential test can only do worse: when removing an input reshuffles the draws, the pairs differ both ways and no valid test rules it out within 30 pairs in 90% of tests.",
  );
  if (res.attribution_nulls.length) {
    L.push(
      "",
      "Find the cause on nulls (n 10, n-max 30, roles off; each attribution with its own seeds): one agent reads three untrusted inputs, only one holds the address the e-mail goes to (the lead suspect), and it e-mails with probability 0.7 whatever it read. Reshuffle: every removal changes the draw (pairs flip both ways); identical: no removal changes a pair. Every blame is false; the target is at most alpha = 5%.",
      "",
    );
    L.push("| null | method | attributions | blamed anything (95% CI) | lead tested alone | mean model calls | mean pairs |", "|---|---|---|---|---|---|---|");
    for (const r of res.attribution_nulls)
      L.push(
        `| ${r.null} | ${r.method} | ${r.attributions} | **${pc(r.rate_blamed)}** (${pc(r.rate_blamed_ci[0])}–${pc(r.rate_blamed_ci[1])}) | ${r.lead_tested} | ${r.mean_model_calls} | ${r.mean_pairs} |`,
      );
  }
  L.push(
    "",
    `Floor: the exact McNemar test needs at least ${res.floor.mcnemar_min_pairs} discordant pairs, all one way, to reach p < 0.05 (five give 0.0625). Newcombe's interval, one look: ${res.floor.min_causal_n.map((m) => `family ${m.family}: ${m.n} pairs, all flipped`).join("; ")}. The betting sequence at alpha 0.05: 6 pairs, all flipped.`,
    "",
  );
  if (res.floor.attribution.length) {
    L.push(
      "Find the cause (reference method) with n fixed pairs per test (no sequential looks), on the harmful runs of the seeds' five scenarios:",
      "",
      "| pairs per test | exact | false blames | model calls (replay) |",
      "|---|---|---|---|",
    );
    for (const r of res.floor.attribution)
      L.push(`| ${r.n} | ${r.exact} of ${r.harmful_runs} (${pc(r.rate_exact)}) | ${r.false_blames} | ${r.model_calls.toLocaleString("en-US")} |`);
  }
  return L.join("\n") + "\n";
}

function parseArgs(argv: string[]) {
  const o = {
    tests: 2000,
    attributions: 2000,
    floorRuns: 20,
    json: false,
    out: "",
    tag: "",
    pick: [] as number[],
    parts: ["null", "power", "attribute", "floor"],
    methods: ["betting", "newcombe"] as ("betting" | "newcombe")[],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === "--tests") o.tests = Number(v());
    else if (a === "--attributions") o.attributions = Number(v());
    else if (a === "--floor-runs") o.floorRuns = Number(v());
    else if (a === "--json") o.json = true;
    else if (a === "--out") o.out = v();
    else if (a === "--only") o.parts = v().split(",");
    else if (a === "--tag") o.tag = v();
    else if (a === "--pick") o.pick = v().split(",").map(Number);
    else if (a === "--methods") o.methods = v().split(",") as ("betting" | "newcombe")[];
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
    const weak = await subjectOf(scenario("weak"), dir, "weak");
    const exfil = await subjectOf(scenario("exfil"), dir, "exfil");
    const neg = await negcorrSubject(dir);
    const studies: [kind: string, sub: Subject, spec: string, truth: number | null][] = [];
    if (o.parts.includes("null")) {
      studies.push(
        ["null-shift", weak, "input:email:invoice-2291", 0],
        ["null-shift", exfil, "input:inbox:ticket-4471", 0],
        ["null-identical", weak, "input:web:vendor-site", 0],
        ["null-negcorr", neg, "input:email:newsletter", 0],
      );
    }
    if (o.parts.includes("power")) studies.push(["power-25%", weak, "input:email:vendor-thread", null]);
    const batches: TestBatch[] = [];
    // --pick i,j: run only those studies (0-based, in the order null-shift weak, null-shift exfil, null-identical, null-negcorr, power), e.g. to run them in parallel processes
    for (const [kind, sub, spec, t] of studies.filter((_, i) => !o.pick.length || o.pick.includes(i))) {
      const truth = t ?? (await trueEffect(sub, spec, 20000));
      for (const method of o.methods) {
        const b = await batch(sub, spec, o.tests, method, `${kind}`, truth);
        batches.push(b);
        log(
          `${kind.padEnd(15)} ${sub.scenario.padEnd(8)} ${method.padEnd(8)} ${spec}: ${kind.startsWith("null") ? `false ${pc(b.rate_false)} [${pc(b.rate_false_ci[0])}, ${pc(b.rate_false_ci[1])}]` : "a real cause"}, causal ${pc(b.rate_causal)}, coverage ${pc(b.coverage)} of ${b.true_effect}, ruled out ${pc(b.ruled_out / b.tests)} (≤30 pairs ${pc(b.ruled_out_30 / b.tests)}), mean pairs ${b.mean_pairs} (max ${b.max_pairs}); ${b.wall_s} s`,
        );
      }
    }
    const attributionNulls: AttributionNullRow[] = [];
    if (o.parts.includes("attribute")) {
      for (const kind of ["reshuffle", "identical"] as const) {
        for (const method of o.methods) {
          const r = await attributionNullStudy(kind, method, o.attributions, dir);
          attributionNulls.push(r);
          log(
            `attribute null ${kind.padEnd(9)} ${method.padEnd(8)}: blamed ${r.blamed} of ${r.attributions} (${pc(r.rate_blamed)} [${pc(r.rate_blamed_ci[0])}, ${pc(r.rate_blamed_ci[1])}]), ${r.mean_model_calls} model calls, ${r.mean_pairs} pairs; ${r.wall_s} s`,
          );
        }
      }
    }
    const families = [1, 7, 9];
    const floor = {
      mcnemar_min_pairs: minMcnemarPairs(),
      min_causal_n: families.map((f) => ({ family: f, looks: 1, n: minCausalN(f) })),
      attribution: o.parts.includes("floor") ? await floorStudy([5, 10, 15, 20, 30], o.floorRuns, dir) : [],
    };
    for (const r of floor.attribution)
      log(
        `floor Find the cause (reference method) with ${String(r.n).padStart(2)} fixed pairs per test: exact in ${r.exact} of ${r.harmful_runs} harmful runs (${(100 * r.rate_exact).toFixed(0)}%), ${r.false_blames} false blames, ${r.model_calls} model calls`,
      );
    const wall = round((performance.now() - t0) / 1000, 1);
    log(`wall time ${wall} s`);
    const res = {
      date: new Date().toISOString().slice(0, 10),
      command: `npm run bench:calibration${argv.length ? " -- " + argv.join(" ") : ""}`,
      node: process.version,
      batches,
      attribution_nulls: attributionNulls,
      floor,
      wall_s: wall,
    };
    if (o.json) process.stdout.write(JSON.stringify(res) + "\n");
    if (o.out) {
      const file = writeResult(o.out, `${res.date}-calibration${o.tag ? "-" + o.tag : ""}`, res, calibrationMarkdown(res));
      if (!o.json) log(`wrote ${file} and .md`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}

runAsCommand("bench:calibration", typeof module === "undefined" ? undefined : module, main);
