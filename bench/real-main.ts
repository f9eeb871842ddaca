/**
 * `npm run bench -- --endpoint URL --model NAME [--api openai|anthropic] [--api-key-env VAR]
 *  [--runs N] [--truth-n N] [--n N] [--n-max N] [--max-calls N | --max-usd X --price MODEL=IN,OUT]
 *  [--workers N] [--scenario NAME]… [--temperature T] [--replay program|agentless] [--out DIR]
 *  [--yes] [--json]`
 *
 * The attribution benchmark on a real model (harness.ts): prints the estimate of calls, tokens and
 * money, asks for a confirmation (unless --yes; with no terminal and no --yes it refuses), runs the
 * scenarios under a hard cap, writes a new results file in --out (bench/results) and prints the
 * table, or with --json only the results document on stdout (progress on stderr). Bad input exits
 * 2 with a message (with --json: `{error, code}` on stdout); a run the cap stopped exits 0 with
 * what it finished, marked as stopped.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline/promises";
import { CapReached, endpointKind, ModelClient } from "./real-client";
import { ScenarioRun, type RealScenarioResult } from "./real-harness";
import { estimate, parseRealArgs, UsageError, type Estimate, type RealOptions } from "./real-options";
import { group, table, writeRealResult, type RealResult } from "./real-report";
import { llmCallsPerRun } from "./system";

export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Is there a person to ask (stdin and stderr are terminals)? */
  interactive: boolean;
  ask?: (question: string) => Promise<string>;
  env?: NodeJS.ProcessEnv;
}

export const processIo = (): Io => ({
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  interactive: !!process.stdin.isTTY && !!process.stderr.isTTY,
  ask: async (q) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(q);
    } finally {
      rl.close();
    }
  },
});

/** The command as run, with the endpoint left out (it may carry credentials or a query). */
export function safeCommand(argv: string[]): string {
  const out = argv.map((a, i) => (argv[i - 1] === "--endpoint" ? "<endpoint>" : /^--endpoint=/.test(a) ? "--endpoint=<endpoint>" : a));
  return `npm run bench -- ${out.join(" ")}`;
}

function estimateText(o: RealOptions, e: Estimate, cap: string): string {
  const usd = e.usd ? `, about $${e.usd.expected} (at most $${e.usd.max})` : "";
  return [
    `Real-model benchmark: ${o.scenarios.length} scenarios (${o.scenarios.map((s) => s.name).join(", ")}) on ${o.model}, ${o.runs} runs each, ground truth ${o.truthN} + ${o.truthN} runs, Find the cause at n_max ${o.nMax}.`,
    `Estimate: ${e.calls.expected.toLocaleString("en-US")} model calls expected (record ${e.calls.record}, ground truth ${e.calls.ground_truth}, attributions ~${e.calls.attribution_expected}), at most ${e.calls.max.toLocaleString("en-US")}; about ${e.tokens.expected.toLocaleString("en-US")} tokens${usd}.`,
    `Cap: ${cap}; when it is reached the benchmark stops and keeps what it finished.`,
    `Pairs are unseeded (hosted models ignore seeds).`,
  ].join("\n");
}

/** Every scenario's recording, then every ground truth, then attributions (confirmed ones first); stops at the cap. */
async function phases(runs: ScenarioRun[], log: (m: string) => void): Promise<void> {
  const confirmedFirst = () => [...runs].sort((a, b) => +(b.res.ground_truth.verdict === "confirmed") - +(a.res.ground_truth.verdict === "confirmed"));
  const steps: [string, () => ScenarioRun[], (r: ScenarioRun) => Promise<void>][] = [
    ["recording", () => runs, (r) => r.record()],
    ["ground truth", () => runs, (r) => r.truth()],
    ["Find the cause", confirmedFirst, (r) => r.attributeAll()],
  ];
  try {
    for (const [name, order, step] of steps) {
      log(`== ${name}`);
      for (const r of order()) {
        log(`- ${r.sc.name}${name === "recording" ? `: ${r.sc.title}` : ""}`);
        await step(r);
      }
    }
  } catch (err) {
    if (!(err instanceof CapReached)) throw err;
  }
}

export async function realMain(argv: string[], io: Io = processIo()): Promise<number> {
  const json = argv.includes("--json");
  const fail = (message: string, code: string) => {
    if (json) io.stdout(JSON.stringify({ error: message, code }) + "\n");
    else io.stderr(`bench: ${message}\n`);
    return 2;
  };
  let o: ReturnType<typeof parseRealArgs>;
  try {
    o = parseRealArgs(argv, io.env ?? process.env);
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message, err.code);
    throw err;
  }
  try {
    return await runConfirmed(o, argv, io, fail);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return fail(o.apiKey ? msg.split(o.apiKey).join("[redacted]") : msg, "error");
  }
}

async function runConfirmed(o: ReturnType<typeof parseRealArgs>, argv: string[], io: Io, fail: (message: string, code: string) => number): Promise<number> {
  const json = o.json;
  const e = estimate(o);
  const first = o.scenarios[0];
  if (o.maxCalls !== undefined && o.maxCalls < llmCallsPerRun(first) * o.runs)
    return fail(
      `--max-calls ${o.maxCalls} is below the recording of the first scenario (${first.name}: ${o.runs} runs × ${llmCallsPerRun(first)} calls): nothing would finish`,
      "nothing-to-do",
    );
  // without a cap given, the estimate's upper bound is the cap: a run is always bounded
  const maxCalls = o.maxCalls ?? (o.maxUsd === undefined ? e.calls.max : undefined);
  const cap = [
    maxCalls !== undefined
      ? `${maxCalls.toLocaleString("en-US")} model calls${o.maxCalls === undefined ? " (the estimate's upper bound; set --max-calls or --max-usd)" : ""}`
      : "",
    o.maxUsd !== undefined ? `$${o.maxUsd}` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  io.stderr(estimateText(o, e, cap) + "\n");
  const fixed = e.calls.record + e.calls.ground_truth;
  if (maxCalls !== undefined && maxCalls < fixed)
    io.stderr(
      `Note: the cap is below the recording and ground truth of every scenario (${fixed.toLocaleString("en-US")} calls): the later scenarios will have no ground truth and nothing will be attributed.\n`,
    );
  if (!o.yes) {
    if (!io.interactive || !io.ask) return fail("this run calls a model endpoint and may cost money: pass --yes to confirm (no terminal to ask on)", "confirm");
    const a = (await io.ask("Proceed? [y/N] ")).trim().toLowerCase();
    if (a !== "y" && a !== "yes") return fail("not confirmed: nothing was run", "confirm");
  }
  const client = new ModelClient({
    api: o.api,
    endpoint: o.endpoint,
    model: o.model,
    apiKey: o.apiKey,
    maxCalls,
    maxUsd: o.maxUsd,
    price: o.price,
    temperature: o.temperature,
    timeoutMs: o.timeoutMs,
  });
  const log = (m: string) => io.stderr(m + "\n");
  const workdir = o.keepRuns ? path.resolve(o.keepRuns) : fs.mkdtempSync(path.join(os.tmpdir(), "causeway-realbench-"));
  const t0 = performance.now();
  const runs = o.scenarios.map((sc) => new ScenarioRun(sc, { o, client, workdir, log }));
  try {
    await phases(runs, log);
  } finally {
    if (!o.keepRuns) fs.rmSync(workdir, { recursive: true, force: true });
  }
  const results: RealScenarioResult[] = runs.map((r) => r.res);
  const scored = results.filter((r) => r.truth.length);
  const res: RealResult = {
    benchmark: "attribution, real model",
    date: new Date().toISOString().slice(0, 10),
    command: safeCommand(argv),
    model: o.model,
    endpoint: endpointKind(o.endpoint, o.api),
    settings: {
      runs: o.runs,
      truth_n: o.truthN,
      n: o.n,
      n_max: o.nMax,
      method: o.method,
      workers: o.workers,
      replay: o.replay,
      temperature: o.temperature ?? null,
      pairs:
        o.replay === "agentless"
          ? "Pairs are unseeded (hosted models ignore seeds): a call both arms of a pair make identically (the same request) is sent once and its answer shared, every other call is a fresh draw from the model."
          : "Pairs are unseeded: hosted models ignore seeds, so the two arms of a pair share nothing but the recorded tool results, and each arm is a fresh draw from the model.",
      caps: { max_calls: maxCalls ?? null, max_usd: o.maxUsd ?? null, price: o.price ?? null },
    },
    estimate: e,
    stopped: client.capped
      ? {
          by: "cap",
          reason: client.capped.reason,
          unfinished: results.filter((r) => r.status === "stopped by the cap").map((r) => r.name),
          not_started: results.filter((r) => r.status === "not started").map((r) => r.name),
        }
      : null,
    confirmed: group(scored.filter((r) => r.ground_truth.verdict === "confirmed")),
    unconfirmed: group(scored.filter((r) => r.ground_truth.verdict !== "confirmed" && r.ground_truth.verdict !== "unfinished")),
    control: {
      scenarios: results.filter((r) => !r.truth.length).map((r) => r.name),
      runs: results.filter((r) => !r.truth.length).reduce((k, r) => k + r.runs, 0),
      high_alerts: results.filter((r) => !r.truth.length).reduce((k, r) => k + r.high_alerts, 0),
    },
    scenarios: results,
    model_calls: client.counts,
    wall_s: Math.round((performance.now() - t0) / 100) / 10,
    node: process.version,
  };
  const file = writeRealResult(o.out, res);
  log(`wrote ${file} and .md`);
  if (client.capped) log(`stopped by the cap (${client.capped.reason}) after ${client.counts.calls} model calls`);
  io.stdout(json ? JSON.stringify(res) + "\n" : table(res) + "\n");
  return 0;
}
