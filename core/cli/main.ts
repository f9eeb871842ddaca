/**
 * `causeway`: the command line. A thin front over core: every command reads runs with the same
 * reader, analyses with the same investigation, replays with the same engine as the extension.
 * Usage errors exit 2 with a one-line message; verify exits 1 when a log fails.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs, intFlag, UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { out, err as errLine, json, formatTest, formatAttribution, shown } from "./output";
import { PAIRS_HELP, pairsOf } from "./pairs";
import { readRun } from "../log/reader";
import { verifyRunData } from "../log/verify";
import { RunModel } from "../graph/model";
import { buildGraph, criticalPath, taint, targetHits } from "../graph/graph";
import { alertRecord, investigateLite } from "../analysis/investigate";
import { investigateLiteSafe } from "../analysis/safe";
import { guardStdio } from "./stdio";
import { influence, listRuns } from "../analysis/influence";
import { BUILTIN_PROGRAMS, ProgramError } from "../replay/loader";
import { isBuiltin } from "../replay/programs";
import { findProgram, loadCliProgram } from "./programs";
import { PROGRAM_FLAGS } from "./replay-program";
import { checkDecisionCall, checkRungScope, endpointOptions, programAllowed, replayedCalls, replaySystem, testableSpecs, RUNGS_HELP } from "./replay-rung";
import { endpointDecisionTest } from "../replay/endpoint-test";
import { ReplayContext, ReplayError, Budget } from "../replay/context";
import { runTest } from "../replay/run-test";
import { decisionTest } from "../replay/decision-test";
import { attribute, LEAD_N_MAX_FACTOR } from "../replay/attribute";
import { DEFAULT_N_MAX } from "../replay/sequential";
import { Refusal, callsForUsd, checkFix, checkRemoval, checkTarget, estimateCost, parsePrice, type CostEstimate, type PriceTable } from "../replay/preflight";
import { SpecError, parseIntervention, parseTarget } from "../specs/grammar";
import { allowSpecFiles } from "../specs/files";
import { benjaminiHochberg } from "../stats/stats";
import { Guard } from "../sdk/guard";
import { slug } from "../sdk/system";
import { writeReport } from "../report/report";
import { runDemo } from "./demo";
import { CAPTURE_COMMANDS } from "./capture-commands";
import { recordCommand, RECORD_COMMAND_USAGE } from "./record-command";
import { commandRunRefusal, isCommandRun } from "../replay/command";
import { absoluteSpec, caseCommands, formatNarrowed } from "./case-commands";
import { narrowAttribution } from "../replay/narrow";
import { STORE_COMMANDS } from "./store-commands";
import { replayCommand } from "./replay-command";
import { COLLECTOR_FLAG, JOB_COMMANDS, submitToCollector } from "./job-commands";

process.setSourceMapsEnabled?.(true);


function requireRun(dir: string): string {
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

const JSON_FLAG = { json: "boolean" } as const;
const COST_FLAGS = { method: "string", "budget-calls": "number", "budget-usd": "number", price: "strings" } as const;

function methodOf(p: Parsed): "betting" | "newcombe" {
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
  const money = e.max_usd === null ? "money not estimated (no --price for " + Object.entries(e.models).filter(([, r]) => r.usd_per_run === null).map(([k]) => k).join(", ") + ")" : `at most $${e.max_usd.toFixed(4)}`;
  return `estimate: up to ${e.max_pairs} pairs, at most ${e.max_model_calls} model calls and ${e.max_tokens} tokens (recorded usage: ${e.calls_per_run} calls, ${e.tokens_per_run} tokens a run), ${money}; a sequential test usually stops well before`;
}

const COMMANDS: Record<string, Command> = {
  demo: {
    usage: "causeway demo [--out DIR] [--n N] [--method betting|newcombe] [--json]",
    help: "record the 3-agent demo (8 runs), test its inputs, write report.html (--method newcombe: the reference's figures)",
    spec: { positionals: [], flags: { out: "string", n: "number", method: "string", ...JSON_FLAG } },
    run: (p) => runDemo({ out: (p.flags.out as string | undefined) ?? "runs", n: intFlag(p, "n", 40), method: methodOf(p), json: !!p.flags.json }),
  },
  record: {
    usage: `causeway record MODULE:EXPORT --out DIR [--seed S] [--guard alert|block] [--run-id ID] [--json]\n       ${RECORD_COMMAND_USAGE}`,
    help: "record one run of a System, or of an unmodified program (-- COMMAND ARGS...)",
    spec: { positionals: ["program"], flags: { out: "string", seed: "number", guard: "string", "run-id": "string", ...JSON_FLAG } },
    run: async (p) => {
      const guard = p.flags.guard as string | undefined;
      if (guard !== undefined && !["off", "alert", "block"].includes(guard)) throw new UsageError("--guard must be off, alert or block");
      const prog = findProgram(p.pos.program!, { cwd: process.cwd() });
      const sys = await loadCliProgram(prog);
      const g = guard && guard !== "off" ? new Guard(guard as "alert" | "block", { onAlert: (a) => errLine(`  guard: ${a.severity} ${shown(a.title)}`) }) : undefined;
      const r = await sys.run({ seed: (p.flags.seed as number | undefined) ?? 0, outDir: (p.flags.out as string | undefined) ?? "runs", runId: p.flags["run-id"] as string | undefined, guard: g, root: prog.root });
      const summary = investigateLite(readRun(r.dir!));
      // a run id is never reused: when the seed's run exists, the new one gets a suffix; say so
      const base = `${slug(sys.name ?? "run")}-seed${r.seed}`;
      const renamed = p.flags["run-id"] === undefined && r.runId !== base ? `a run ${base} already exists in ${path.dirname(r.dir!)}; this one is ${r.runId}` : null;
      if (p.flags.json) json({ run: r.dir, run_id: r.runId, error: r.error ?? null, actions: r.actions.map((a) => a.tool), alerts: summary.alerts.map(alertRecord), note: renamed });
      else {
        if (renamed) out(`note: ${renamed}`);
        out(`recorded ${r.runId} -> ${r.dir}`);
        out(`  tool calls: ${r.actions.map((a) => `${shown(a.tool)}${a.mode === "blocked" ? " (blocked)" : ""}`).join(", ") || "none"}`);
        out(`  alerts: ${summary.summary.alerts.high} high, ${summary.summary.alerts.review} review`);
        if (r.error) out(`  the program failed: ${shown(r.error)}`);
      }
      return r.error ? 1 : 0;
    },
  },
  verify: {
    usage: "causeway verify RUN [--json]",
    help: "check the chain, seq, event hashes, blobs and tests.jsonl; exit 1 when it fails",
    spec: { positionals: ["run"], flags: { ...JSON_FLAG } },
    run: (p) => {
      const dir = requireRun(p.pos.run!);
      const run = readRun(dir, { checkBlobs: true });
      const r = verifyRunData(run);
      if (p.flags.json) json({ ok: r.ok, events: r.events, problems: r.problems });
      else if (r.ok) {
        out(`[PASS] ${r.events} events, chain intact, every blob matches its hash${run.tests.length ? `, ${run.tests.length} tests` : ""}`);
        for (const w of r.problems) out(`       note: ${shown(w.message)}`);
        out("       (the chain is unsigned: it shows edits, not who may rewrite the whole log)");
      } else for (const pr of r.problems) out(`[${pr.severity === "error" ? "FAIL" : "NOTE"}] ${shown(pr.message)}`);
      return r.ok ? 0 : 1;
    },
  },
  alerts: {
    usage: "causeway alerts RUN [--json]",
    help: "alerts with the reference's rules (high / review / info)",
    spec: { positionals: ["run"], flags: { ...JSON_FLAG } },
    run: (p) => {
      // blobs checked, as the reference does: a forged or missing blob is the integrity alert
      const al = investigateLiteSafe(readRun(requireRun(p.pos.run!), { checkBlobs: true })).alerts;
      if (p.flags.json) json(al.map(alertRecord));
      else if (!al.length) out("no alerts");
      else for (const a of al) out(`${a.severity.toUpperCase().padEnd(6)} ${a.seq === null ? "run" : `#${a.seq}`.padEnd(4)} ${shown(a.title)}${a.detail ? `\n       ${shown(a.detail)}` : ""}`);
    },
  },
  taint: {
    usage: "causeway taint RUN [--source SPEC]... [--inferred] [--json]",
    help: "blast radius: what each untrusted input reached, with paths",
    spec: { positionals: ["run"], flags: { source: "strings", inferred: "boolean", ...JSON_FLAG } },
    run: (p) => {
      const m = new RunModel(readRun(requireRun(p.pos.run!)));
      const sources = (p.flags.source as string[] | undefined) ?? ["untrusted"];
      for (const s of sources) parseIntervention(s);
      const g = buildGraph(m, { infer: !!p.flags.inferred, reuse: false });
      const r = taint(m, g, sources, !!p.flags.inferred);
      if (p.flags.json) return json(r);
      out("sources: " + (r.sources.map((s) => shown(s.label)).join(", ") || "none"));
      out("agents reached: " + (r.agentsReached.map(shown).join(", ") || "none"));
      for (const x of r.actions) out(`  #${x.seq} ${shown(x.agent)}.${shown(x.tool)} ${shown(JSON.stringify(x.args))}\n      via ${x.path.map(shown).join(" > ")}`);
    },
  },
  graph: {
    usage: "causeway graph RUN [--no-infer] [--json]",
    help: "the data-flow graph: edges with their evidence grade",
    spec: { positionals: ["run"], flags: { "no-infer": "boolean", ...JSON_FLAG } },
    run: (p) => {
      const m = new RunModel(readRun(requireRun(p.pos.run!)));
      const g = buildGraph(m, { infer: !p.flags["no-infer"] });
      if (p.flags.json) {
        // decisions and actions record no trust of their own: they are as trusted as what reached
        // them, so a node downstream of untrusted content (observed edges) is marked untrusted
        const tainted = new Set(taint(m, g, ["untrusted"]).reachedNodes);
        const j = g.toJSON();
        const nodes = j.nodes.map((n) => ({ ...n, trust: n.type === "decision" || n.type === "action" ? (tainted.has(n.id) ? "untrusted" : "trusted") : n.trust, tainted: tainted.has(n.id) }));
        return json({ run_id: m.runId, ...j, nodes, critical_path: criticalPath(g) });
      }
      for (const e of g.edges) {
        const s = g.nodes.get(e.src)!;
        const t = g.nodes.get(e.dst)!;
        const extra = (["reuse", "score", "effect"] as const).filter((k) => e[k] !== undefined).map((k) => ` ${k}=${e[k]}`).join("");
        out(`${shown(s.label)}[${shown(s.agent)}] -> ${shown(t.label)}[${shown(t.agent)}]  ${e.kind} (${e.evidence})${extra}`);
      }
    },
  },
  test: {
    usage: "causeway test RUN (--remove SPEC --target SPEC [--n N] [--n-max N] [--roles] [--live-tools] | --decision SEQ --remove SPEC [--contains TEXT]) [--method betting|newcombe] [--budget-calls N] [--budget-usd X --price MODEL=IN,OUT...] [--allow-program P | --system P | --base-url URL --api-key-env VAR | --collector URL] [--json]",
    help: `paired replay test: does removing SPEC change how often TARGET happens? Sequential until decisive, at most --n-max pairs (default 200); ${PAIRS_HELP}`,
    details: RUNGS_HELP,
    spec: {
      positionals: ["run"],
      flags: { remove: "string", target: "string", n: "number", "n-max": "number", "live-tools": "boolean", decision: "string", contains: "string", ...PROGRAM_FLAGS, "max-calls": "number", workers: "number", roles: "boolean", ...COST_FLAGS, ...COLLECTOR_FLAG, ...JSON_FLAG },
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
        const r = await endpointDecisionTest(run, { decision: /^\d+$/.test(decision) ? Number(decision) : decision, intervention: remove, contains: p.flags.contains as string | undefined, target, n, nMax, method, ...endpointOptions(p) }).catch((err: unknown) => {
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
        ? await decisionTest(ctx, { decision: /^\d+$/.test(decision) ? Number(decision) : decision, intervention: remove, contains: p.flags.contains as string | undefined, n, nMax, method, minPairs })
        : await runTest(ctx, { intervention: remove, target: target!, n, nMax, method, minPairs, sizeRole: !!p.flags.roles, workers: intFlag(p, "workers", 1), onProgress: progress(!p.flags.json) });
      r.estimate = est;
      if (process.stderr.isTTY && !p.flags.json) process.stderr.write("\r\x1b[K");
      if (p.flags.json) json(r);
      else out(formatTest(r));
    },
  },
  attribute: {
    usage: "causeway attribute RUN --target SPEC [--suspect SPEC]... [--suspects untrusted|all] [--n N] [--n-max N] [--budget-calls N] [--budget-usd X --price MODEL=IN,OUT...] [--method betting|newcombe] [--workers N] [--no-roles] [--spans] [--shapes] [--rank-blocks K] [--allow-program P | --system P | --base-url URL --api-key-env VAR | --collector URL] [--json]",
    help: `Find the cause: suspects ranked by the recorded evidence; untrusted inputs first, then trusted inputs and channels; a cause that carried an earlier agent's words is followed back hop by hop (the chain); --spans narrows a confirmed input to its causing span, --shapes tells how causes combine; --rank-blocks K: before a phase of more than four suspects with no lead, K replays with random halves removed and a sparse linear fit predict which to test first (predicted, never a verdict). Each test: ${PAIRS_HELP} (default: first look at 10, at most 80)`,
    details: RUNGS_HELP,
    spec: {
      positionals: ["run"],
      flags: { target: "string", suspect: "strings", suspects: "string", n: "number", "n-max": "number", "max-calls": "number", workers: "number", "no-roles": "boolean", spans: "boolean", shapes: "boolean", "rank-blocks": "number", ...PROGRAM_FLAGS, "live-tools": "boolean", ...COST_FLAGS, ...COLLECTOR_FLAG, ...JSON_FLAG },
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
      if (!targetHits(model, target).length) throw new UsageError(`attribute: the target ${JSON.stringify(target)} did not happen in this run: there is no action to explain`);
      for (const s of suspects) checkRemoval(model, s);
      const { n, nMax, minPairs, exact } = pairsOf(p, { n: 10, nMax: (k) => Math.max(80, k) });
      // the program is found and allowed before any estimate is printed: a refusal comes first
      const sys = await replaySystem(p, dir, target);
      const rankBlocks = p.flags["rank-blocks"] === undefined ? undefined : intFlag(p, "rank-blocks", 2, 2);
      const est = estimateCost(model, nMax, pricesOf(p), replayedCalls(sys, model));
      const budget = budgetOf(p, est);
      if (!p.flags.json) process.stderr.write(`per test: ${describeEstimate(est)}${method === "newcombe" || exact ? "" : `; a lead suspect's test (one an argument value points to) up to ${LEAD_N_MAX_FACTOR * nMax} pairs`}${budget ? `; budget ${budget.max} model calls for the whole attribution` : ""}\n`);
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
      const narrowed = p.flags.spans || p.flags.shapes ? await narrowAttribution(ctx, a, { spans: !!p.flags.spans, shapes: !!p.flags.shapes, n, nMax, workers: intFlag(p, "workers", 1), onProgress: progress(!p.flags.json) }) : undefined;
      if (process.stderr.isTTY && !p.flags.json) process.stderr.write("\r\x1b[K");
      if (p.flags.json) json({ ...a, causes: a.causes.map((c) => ({ spec: c.spec, role: c.role, effect: c.effect, ci: c.ci, p_with: c.p_with, p_without: c.p_without, n: c.n })), ...(narrowed ? { spans: narrowed.spans.map(({ tests, ...s }) => ({ ...s, tests: tests.length })), shapes: narrowed.shapes.map(({ tests: _tests, ...s }) => s), not_narrowed: narrowed.skipped } : {}) });
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
      for (const s of specs) for (const t of targets) tests.push(await runTest(ctx, { intervention: s, target: t, n: pairs.n, nMax: pairs.nMax, minPairs: pairs.minPairs, method, family: method === "betting" ? specs.length * targets.length : 1 }));
      // a batch of tests: Benjamini-Hochberg at q = 0.05 over their exact p-values
      const bh = benjaminiHochberg(tests.map((t) => t.p_value));
      const rows = tests.map((t, i) => ({ ...t, bh_adjusted_p: Math.round(bh.adjusted[i] * 1e6) / 1e6, bh_discovery: bh.rejected[i] && t.effect > 0 }));
      if (p.flags.json) return json(rows);
      rows.forEach((r) => out(formatTest(r) + (r.bh_discovery ? "  [kept at FDR 5%]" : "")));
      out(`  model calls: ${ctx.counts.made} (a replay without sharing would make ${ctx.counts.naive})`);
    },
  },
  replay: replayCommand(requireRun),
  index: {
    usage: "causeway index ROOT [--target SPEC] [--json]",
    help: "cross-run influence: which content reached which tools, which links tests confirmed",
    spec: { positionals: ["root"], flags: { target: "string", ...JSON_FLAG } },
    run: (p) => {
      const root = path.resolve(p.pos.root!);
      const dirs = listRuns(root);
      if (!dirs.length) throw new UsageError(`no runs under ${p.pos.root}`);
      const runs = dirs.map((d) => readRun(d));
      const target = p.flags.target as string | undefined;
      if (target) parseTarget(target);
      const inf = influence(runs);
      const fired = target ? runs.filter((r) => targetHits(new RunModel(r), target).length).map((r) => r.runId) : undefined;
      if (p.flags.json) return json({ runs: runs.length, ...inf, ...(fired ? { target, target_runs: fired } : {}) });
      out(`${runs.length} runs under ${p.pos.root}${fired ? `; ${target} happened in ${fired.length}` : ""}`);
      for (const s of inf.sources) {
        const es = inf.edges.filter((e) => e.source === s.id);
        out(`  ${s.labels.map(shown).join(", ")} [${shown(s.trust)}]  in ${s.runs} runs, cited ${s.cited_by}×${s.max_effect !== null ? `, strongest tested effect ${s.max_effect >= 0 ? "+" : ""}${s.max_effect.toFixed(2)}` : ""}`);
        for (const e of es) out(`      -> ${shown(e.tool)}: reached in ${e.reach_runs} runs${e.confirmed ? ", CONFIRMED cause" : e.ruled_out ? ", ruled out" : e.tests.length ? ", tested" : ""}`);
      }
    },
  },
  report: {
    usage: "causeway report ROOT [-o FILE] [--json]",
    help: "the investigator as one static HTML file with every run under ROOT embedded",
    spec: { positionals: ["root"], flags: { "out-file": "string", ...JSON_FLAG }, aliases: { o: "out-file" } },
    run: (p) => {
      const root = path.resolve(p.pos.root!);
      const file = path.resolve((p.flags["out-file"] as string | undefined) ?? path.join(fs.existsSync(path.join(root, "events.jsonl")) ? path.dirname(root) : root, "report.html"));
      const r = writeReport(root, file);
      if (p.flags.json) return json({ file, runs: r.runs, bytes: r.bytes });
      out(`report: ${file} (${r.runs} run${r.runs === 1 ? "" : "s"}, ${(r.bytes / 1024).toFixed(0)} KB; opens from disk, no server, no network)`);
    },
  },
  ...CAPTURE_COMMANDS,
  ...caseCommands(replaySystem, requireRun),
  ...STORE_COMMANDS,
  ...JOB_COMMANDS,
};

function usage(): string {
  const lines = ["causeway: causal logs, replay and Find the cause for multi-agent AI systems", "", "commands:"];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${c.help}`);
  lines.push("", "run `causeway <command> --help` for a command's options");
  lines.push(`built-in programs: ${Object.keys(BUILTIN_PROGRAMS).join(", ")}`);
  return lines.join("\n");
}

export async function main(argv: string[]): Promise<number> {
  allowSpecFiles(); // a user's replace:…=@FILE names a file on this machine
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    out(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`causeway: unknown command "${name}" (try causeway --help)\n`);
    return 2;
  }
  if (name === "record" && rest.includes("--") && !rest.slice(0, rest.indexOf("--")).some((a) => a === "--help" || a === "-h")) {
    const jsonMode = rest.slice(0, rest.indexOf("--")).includes("--json");
    try {
      return await recordCommand(rest);
    } catch (err) {
      if (err instanceof UsageError) return failed("record", err.message.replace(/^record: /, ""), 2, jsonMode);
      return failed("record", (err as Error)?.message ?? String(err), 1, jsonMode);
    }
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    out(`usage: ${cmd.usage}\n${cmd.help}${cmd.details ? `\n${cmd.details}` : ""}`);
    return 0;
  }
  const jsonMode = rest.includes("--json");
  try {
    const parsed = parseArgs(name, rest, cmd.spec);
    const code = await cmd.run(parsed);
    return typeof code === "number" ? code : 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof SpecError || err instanceof Refusal) return failed(name, err.message.replace(new RegExp(`^${name}: `), ""), 2, jsonMode);
    if (err instanceof ProgramError || err instanceof ReplayError) return failed(name, err.message, 1, jsonMode);
    return failed(name, (err as Error)?.message ?? String(err), 1, jsonMode, (err as Error)?.stack);
  }
}

/**
 * A command that failed: one line on stderr (the stack too for an unexpected error) and, with
 * --json, one object `{error, code}` on stdout, so a caller parsing stdout always gets JSON.
 */
function failed(name: string, message: string, code: 1 | 2, jsonMode: boolean, stack?: string): number {
  errLine(`causeway ${name}: ${stack ?? message}`);
  if (jsonMode) out(JSON.stringify({ error: message, code }));
  return code;
}

if (require.main === module) {
  guardStdio();
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(String(err?.stack ?? err) + "\n");
      process.exitCode = 1;
    },
  );
}
