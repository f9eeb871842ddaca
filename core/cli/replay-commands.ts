/**
 * The replaying commands that test a run's inputs: `test` (one paired test, or a decision test),
 * `attribute` (Find the cause) and `matrix` (every input against every target), with what they
 * share: the run-folder check, the refusal of a run that can't be replayed, the cost estimate and
 * the model-call budget. `replay` (the diff) is in replay-command.ts, the case commands in
 * case-commands.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { intFlag, UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { out, json, formatTest, formatAttribution } from "./output";
import { shown } from "../log/shown";
import { PAIRS_HELP, pairsOf } from "./pairs";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { isBuiltin } from "../replay/programs";
import { PROGRAM_FLAGS } from "./replay-program";
import { checkDecisionCall, checkRungScope, endpointOptions, programAllowed, replayedCalls, replaySystem, testableSpecs, RUNGS_HELP } from "./replay-rung";
import { endpointDecisionTest } from "../replay/endpoint-test";
import { ReplayContext, ReplayError, Budget } from "../replay/context";
import { runTest } from "../replay/run-test";
import { decisionTest } from "../replay/decision-test";
import { attribute } from "../replay/attribute";
import { LEAD_N_MAX_FACTOR } from "../replay/attribute-plan";
import { DEFAULT_N_MAX } from "../replay/sequential";
import { callsForUsd, checkFix, checkRemoval, checkTarget, estimateCost, parsePrice, type CostEstimate, type PriceTable } from "../replay/preflight";
import { parseIntervention, parseTarget } from "../specs/grammar";
import { benjaminiHochberg } from "../stats/corrections";
import { commandRunRefusal, isCommandRun } from "../replay/command";
import { absoluteSpec } from "./case-commands";
import { formatNarrowed } from "./case-output";
import { narrowAttribution } from "../replay/narrow";
import { COLLECTOR_FLAG, submitToCollector } from "./job-commands";
import { JSON_FLAG } from "./command";

export function requireRun(dir: string): string {
  const d = path.resolve(dir);
  if (!fs.existsSync(path.join(d, "events.jsonl"))) throw new UsageError(`${dir} is not a run folder (no events.jsonl)`);
  return d;
}

/** A recorded command whose tool runs were not intercepted is refused first: that is why it can't be tested. */
function refuseUnreplayable(p: Parsed, model: RunModel, runDir: string): void {
  // a built-in name never runs the command a run carries: nothing to refuse
  if (p.flags.system || p.flags["live-tools"] || !isCommandRun(model) || isBuiltin(model.start.program)) return;
  if (!programAllowed(p, model)) return; // replayed without the program (rung 2): nothing of it runs
  const why = commandRunRefusal(model);
  if (why) throw new ReplayError(`can't replay ${path.basename(runDir)}: ${why}`);
}

function progress(enabled: boolean) {
  if (!enabled || !process.stderr.isTTY) return undefined;
  return (p: { done: number; total: number; message?: string }) => process.stderr.write(`\r  ${shown(p.message ?? "")} ${p.done}/${p.total}   `);
}

const COST_FLAGS = { method: "string", "budget-calls": "number", "budget-usd": "number", price: "strings" } as const;

export function methodOf(p: Parsed): "betting" | "newcombe" {
  const m = (p.flags.method as string | undefined) ?? "betting";
  if (m !== "betting" && m !== "newcombe") throw new UsageError(`--method must be betting or newcombe, got ${JSON.stringify(m)}`);
  return m;
}

/** The price table from --price MODEL=IN,OUT flags. */
function pricesOf(p: Parsed): PriceTable {
  const t: PriceTable = {};
  for (const s of (p.flags.price as string[] | undefined) ?? []) {
    const [k, v] = parsePrice(s);
    t[k] = v;
  }
  return t;
}

/** The model-call budget from --budget-calls / --max-calls and --budget-usd (the smaller). */
function budgetOf(p: Parsed, est: CostEstimate): Budget | undefined {
  let max = Infinity;
  for (const f of ["budget-calls", "max-calls"]) if (p.flags[f] !== undefined) max = Math.min(max, intFlag(p, f, 1));
  if (p.flags["budget-usd"] !== undefined) {
    const usd = Number(p.flags["budget-usd"]);
    if (!(usd > 0)) throw new UsageError("--budget-usd must be a positive number");
    max = Math.min(max, callsForUsd(est, usd));
  }
  return Number.isFinite(max) ? new Budget(max) : undefined;
}

function describeEstimate(e: CostEstimate): string {
  const money =
    e.max_usd === null
      ? "money not estimated (no --price for " +
        Object.entries(e.models)
          .filter(([, r]) => r.usd_per_run === null)
          .map(([k]) => k)
          .join(", ") +
        ")"
      : `at most $${e.max_usd.toFixed(4)}`;
  return `estimate: up to ${e.max_pairs} pairs, at most ${e.max_model_calls} model calls and ${e.max_tokens} tokens (recorded usage: ${e.calls_per_run} calls, ${e.tokens_per_run} tokens a run), ${money}; a sequential test usually stops well before`;
}

/** test, attribute and matrix. */
export const REPLAY_COMMANDS: Record<string, Command> = {
  test: {
    usage:
      "causeway test RUN (--remove SPEC --target SPEC [--n N] [--n-max N] [--roles] [--live-tools] | --decision SEQ --remove SPEC [--contains TEXT]) [--method betting|newcombe] [--budget-calls N] [--budget-usd X --price MODEL=IN,OUT...] [--allow-program P | --system P | --base-url URL --api-key-env VAR | --collector URL] [--json]",
    help: `paired replay test: does removing SPEC change how often TARGET happens? Sequential until decisive, at most --n-max pairs (default 200); ${PAIRS_HELP}`,
    details: RUNGS_HELP,
    spec: {
      positionals: ["run"],
      flags: {
        remove: "string",
        target: "string",
        n: "number",
        "n-max": "number",
        "live-tools": "boolean",
        decision: "string",
        contains: "string",
        ...PROGRAM_FLAGS,
        "max-calls": "number",
        workers: "number",
        roles: "boolean",
        ...COST_FLAGS,
        ...COLLECTOR_FLAG,
        ...JSON_FLAG,
      },
    },
    run: async (p) => {
      if (p.flags.collector) return submitToCollector(p, "test");
      const dir = requireRun(p.pos.run!);
      const remove = p.flags.remove === undefined ? undefined : absoluteSpec(p.flags.remove as string);
      if (!remove) throw new UsageError("test: --remove SPEC is required");
      parseIntervention(remove);
      const target = p.flags.target as string | undefined;
      const decision = p.flags.decision as string | undefined;
      if (!decision && !target) throw new UsageError("test: --target SPEC is required (or --decision SEQ)");
      if (target) parseTarget(target);
      const method = methodOf(p);
      const run = readRun(dir);
      const model = new RunModel(run);
      // refuse what cannot be replayed or be meant before anything runs or is saved
      refuseUnreplayable(p, model, dir);
      if (target && !decision) checkTarget(model, target);
      checkFix(model, remove, "edit"); // a removal, or an edit (redact:, replace:, span:) that changes something
      // --n N alone: exactly N pairs; with --n-max: no verdict before N pairs, at most n-max
      const n = method === "newcombe" ? intFlag(p, "n", 30) : p.flags.n === undefined ? undefined : intFlag(p, "n", 1);
      const nMax = p.flags["n-max"] === undefined ? undefined : intFlag(p, "n-max", n ?? 1);
      const maxPairs = nMax ?? n ?? DEFAULT_N_MAX;
      const minPairs = n;
      // rung 1: the one recorded call named re-sent, when the program may not re-run
      if (decision && !programAllowed(p, model)) {
        checkDecisionCall(p, model, decision);
        const r = await endpointDecisionTest(run, {
          decision: /^\d+$/.test(decision) ? Number(decision) : decision,
          intervention: remove,
          contains: p.flags.contains as string | undefined,
          target,
          n,
          nMax,
          method,
          ...endpointOptions(p),
        }).catch((err: unknown) => {
          throw err instanceof Error && err.name === "EndpointError" ? new ReplayError(err.message) : err;
        });
        r.rung = 1;
        return p.flags.json ? json(r) : out(formatTest(r));
      }
      // the program is found and allowed before any estimate is printed: a refusal comes first
      const sys = await replaySystem(p, dir, target);
      checkRungScope(sys, [remove]);
      const est = estimateCost(model, maxPairs, pricesOf(p), replayedCalls(sys, model));
      const budget = budgetOf(p, est);
      if (!p.flags.json) process.stderr.write(describeEstimate(est) + (budget ? `; budget ${budget.max} model calls` : "") + "\n");
      const ctx = new ReplayContext(run, sys, { liveTools: !!p.flags["live-tools"], budget });
      const r = decision
        ? await decisionTest(ctx, {
            decision: /^\d+$/.test(decision) ? Number(decision) : decision,
            intervention: remove,
            contains: p.flags.contains as string | undefined,
            n,
            nMax,
            method,
            minPairs,
          })
        : await runTest(ctx, {
            intervention: remove,
            target: target!,
            n,
            nMax,
            method,
            minPairs,
            sizeRole: !!p.flags.roles,
            workers: intFlag(p, "workers", 1),
            onProgress: progress(!p.flags.json),
          });
      r.estimate = est;
      if (process.stderr.isTTY && !p.flags.json) process.stderr.write("\r\x1b[K");
      if (p.flags.json) json(r);
      else out(formatTest(r));
    },
  },
  attribute: {
    usage:
      "causeway attribute RUN --target SPEC [--suspect SPEC]... [--suspects untrusted|all] [--n N] [--n-max N] [--budget-calls N] [--budget-usd X --price MODEL=IN,OUT...] [--method betting|newcombe] [--workers N] [--no-roles] [--spans] [--shapes] [--rank-blocks K] [--allow-program P | --system P | --base-url URL --api-key-env VAR | --collector URL] [--json]",
    help: `Find the cause: suspects ranked by the recorded evidence; untrusted inputs first, then trusted inputs and channels; a cause that carried an earlier agent's words is followed back hop by hop (the chain); --spans narrows a confirmed input to its causing span, --shapes tells how causes combine; --rank-blocks K: before a phase of more than four suspects with no lead, K replays with random halves removed and a sparse linear fit predict which to test first (predicted, never a verdict). Each test: ${PAIRS_HELP} (default: first look at 10, at most 80)`,
    details: RUNGS_HELP,
    spec: {
      positionals: ["run"],
      flags: {
        target: "string",
        suspect: "strings",
        suspects: "string",
        n: "number",
        "n-max": "number",
        "max-calls": "number",
        workers: "number",
        "no-roles": "boolean",
        spans: "boolean",
        shapes: "boolean",
        "rank-blocks": "number",
        ...PROGRAM_FLAGS,
        "live-tools": "boolean",
        ...COST_FLAGS,
        ...COLLECTOR_FLAG,
        ...JSON_FLAG,
      },
    },
    run: async (p) => {
      if (p.flags.collector) return submitToCollector(p, "attribute");
      const dir = requireRun(p.pos.run!);
      const target = p.flags.target as string | undefined;
      if (!target) throw new UsageError("attribute: --target SPEC is required");
      parseTarget(target);
      const suspects = (p.flags.suspect as string[] | undefined) ?? [];
      for (const s of suspects) parseIntervention(s);
      const mode = (p.flags.suspects as string | undefined) ?? "untrusted";
      if (mode !== "untrusted" && mode !== "all") throw new UsageError(`--suspects must be untrusted or all, got ${JSON.stringify(mode)}`);
      const method = methodOf(p);
      const run = readRun(dir);
      const model = new RunModel(run);
      refuseUnreplayable(p, model, dir);
      checkTarget(model, target);
      if (!targetHits(model, target).length)
        throw new UsageError(`attribute: the target ${JSON.stringify(target)} did not happen in this run: there is no action to explain`);
      for (const s of suspects) checkRemoval(model, s);
      const { n, nMax, minPairs, exact } = pairsOf(p, { n: 10, nMax: (k) => Math.max(80, k) });
      // the program is found and allowed before any estimate is printed: a refusal comes first
      const sys = await replaySystem(p, dir, target);
      const rankBlocks = p.flags["rank-blocks"] === undefined ? undefined : intFlag(p, "rank-blocks", 2, 2);
      const est = estimateCost(model, nMax, pricesOf(p), replayedCalls(sys, model));
      const budget = budgetOf(p, est);
      if (!p.flags.json)
        process.stderr.write(
          `per test: ${describeEstimate(est)}${method === "newcombe" || exact ? "" : `; a lead suspect's test (one an argument value points to) up to ${LEAD_N_MAX_FACTOR * nMax} pairs`}${budget ? `; budget ${budget.max} model calls for the whole attribution` : ""}\n`,
        );
      const ctx = new ReplayContext(run, sys, { liveTools: !!p.flags["live-tools"] });
      const a = await attribute(ctx, {
        target,
        suspects,
        suspectsMode: mode,
        method,
        n,
        nMax,
        minPairs,
        maxCalls: budget ? budget.max : undefined,
        workers: intFlag(p, "workers", 1),
        roles: !p.flags["no-roles"],
        rankBlocks,
        onProgress: progress(!p.flags.json),
      });
      // --spans: each confirmed input narrowed to its causing span; --shapes: how two or more causes combine
      const narrowed =
        p.flags.spans || p.flags.shapes
          ? await narrowAttribution(ctx, a, {
              spans: !!p.flags.spans,
              shapes: !!p.flags.shapes,
              n,
              nMax,
              workers: intFlag(p, "workers", 1),
              onProgress: progress(!p.flags.json),
            })
          : undefined;
      if (process.stderr.isTTY && !p.flags.json) process.stderr.write("\r\x1b[K");
      if (p.flags.json)
        json({
          ...a,
          causes: a.causes.map((c) => ({ spec: c.spec, role: c.role, effect: c.effect, ci: c.ci, p_with: c.p_with, p_without: c.p_without, n: c.n })),
          ...(narrowed
            ? {
                spans: narrowed.spans.map(({ tests, ...s }) => ({ ...s, tests: tests.length })),
                shapes: narrowed.shapes.map(({ tests: _tests, ...s }) => s),
                not_narrowed: narrowed.skipped,
              }
            : {}),
        });
      else {
        formatAttribution(a).forEach((l) => out(l));
        if (narrowed) formatNarrowed(narrowed).forEach((l) => out(l));
      }
    },
  },
  matrix: {
    usage: "causeway matrix RUN --target SPEC... [--n N] [--n-max N] [--allow-program P | --system P | --base-url URL --api-key-env VAR] [--json]",
    help: `test every input and channel against each target (Benjamini-Hochberg over the batch). Each test: ${PAIRS_HELP} (default: at most 20 pairs)`,
    details: RUNGS_HELP,
    spec: { positionals: ["run"], flags: { target: "strings", n: "number", "n-max": "number", method: "string", ...PROGRAM_FLAGS, ...JSON_FLAG } },
    run: async (p) => {
      const dir = requireRun(p.pos.run!);
      const targets = (p.flags.target as string[] | undefined) ?? [];
      if (!targets.length) throw new UsageError("matrix: at least one --target SPEC is required");
      targets.forEach(parseTarget);
      const pairs = pairsOf(p, { n: 20, nMax: (k) => k });
      const run = readRun(dir);
      // refuse what cannot be replayed or be meant before anything runs
      const recorded = new RunModel(run);
      refuseUnreplayable(p, recorded, dir);
      for (const t of targets) checkTarget(recorded, t);
      const sys = await replaySystem(p, dir, targets);
      const ctx = new ReplayContext(run, sys);
      const specs = testableSpecs(sys, ctx.model);
      const tests = [];
      // betting: each test at alpha / (number of tests), so a decisive verdict survives the batch
      const method = methodOf(p);
      for (const s of specs)
        for (const t of targets)
          tests.push(
            await runTest(ctx, {
              intervention: s,
              target: t,
              n: pairs.n,
              nMax: pairs.nMax,
              minPairs: pairs.minPairs,
              method,
              family: method === "betting" ? specs.length * targets.length : 1,
            }),
          );
      // a batch of tests: Benjamini-Hochberg at q = 0.05 over their exact p-values
      const bh = benjaminiHochberg(tests.map((t) => t.p_value));
      const rows = tests.map((t, i) => ({ ...t, bh_adjusted_p: Math.round(bh.adjusted[i] * 1e6) / 1e6, bh_discovery: bh.rejected[i] && t.effect > 0 }));
      if (p.flags.json) return json(rows);
      rows.forEach((r) => out(formatTest(r) + (r.bh_discovery ? "  [kept at FDR 5%]" : "")));
      out(`  model calls: ${ctx.counts.made} (a replay without sharing would make ${ctx.counts.naive})`);
    },
  },
};
