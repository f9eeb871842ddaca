/**
 * `causeway demo`: record the three-agent support demo (8 seeds), investigate the first run that
 * exfiltrated, test its inputs by paired replay, test the researcher's call alone, and write the
 * static report.
 */
import fs from "node:fs";
import path from "node:path";
import { readRun, type RunData } from "../log/reader";
import { verifyRunData } from "../log/verify";
import { RunModel } from "../graph/model";
import { buildGraph, criticalPath, targetHits, taint } from "../graph/graph";
import { loadProgram, resolveProgram } from "../replay/loader";
import { ReplayContext } from "../replay/context";
import { decisionTest } from "../replay/decision-test";
import { runTest } from "../replay/run-test";
import type { TestResult } from "../replay/test-record";
import { writeReport } from "../report/report";
import { formatTest, json, out } from "./output";
import { shellWord, singleQuote } from "../log/argv";
import type { System } from "../sdk/system";

export const EXFIL_TARGET = "tool=send_email,arg~vendor-compliance";
export const REFUND_TARGET = "tool=issue_refund";

/** What the demo found: `causeway demo --json` prints it; the text output is made from it. */
export interface DemoResult {
  out: string;
  runs: { run_id: string; dir: string; actions: string[]; exfiltration: boolean }[];
  investigated: string | null;
  agents: string[];
  actions: { agent: string; tool: string; args: string }[];
  verify: { ok: boolean; events: number; problem: string | null } | null;
  blast_radius: { source: string; actions: string[]; reached_exfiltration: boolean }[];
  n: number;
  tests: TestResult[];
  model_calls: { made: number; naive: number } | null;
  decision_test: (Record<string, unknown> & { agent: string }) | null;
  critical_path: string[];
  report: { file: string; bytes: number } | { file: null; error: string };
  next: string | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The sentence under the blast radius, from what it found. */
export function reachSentence(rows: DemoResult["blast_radius"]): string {
  const hit = rows.filter((r) => r.reached_exfiltration);
  if (!rows.length) return "No untrusted input was recorded.";
  if (!hit.length) return "No untrusted input reached the exfiltration email on observed edges.";
  if (hit.length === 1) return `Only ${hit[0].source} reached the exfiltration email${rows.length > 1 ? ` (of ${rows.length} untrusted inputs)` : ""}.`;
  const all = hit.length === rows.length ? (hit.length === 2 ? "Both" : `All ${hit.length}`) : `${hit.length} of the ${rows.length}`;
  return `${all} untrusted inputs reached the exfiltration email, so reach alone cannot say which one caused it.`;
}

export async function runDemo(opts: {
  out: string;
  n: number;
  seeds?: number;
  quiet?: boolean;
  json?: boolean;
  method?: "betting" | "newcombe";
}): Promise<number> {
  const say = opts.quiet || opts.json ? () => {} : out;
  const root = path.resolve(opts.out);
  const prog = resolveProgram("causeway:demo", process.cwd());
  const sys = await loadProgram(prog);
  const seeds = opts.seeds ?? 8;
  const res: DemoResult = {
    out: opts.out,
    runs: [],
    investigated: null,
    agents: [],
    actions: [],
    verify: null,
    blast_radius: [],
    n: opts.n,
    tests: [],
    model_calls: null,
    decision_test: null,
    critical_path: [],
    report: { file: null, error: "not written" },
    next: null,
  };
  const finish = (code: number) => {
    if (opts.json) json(res);
    return code;
  };
  const exfil = await recordSeeds(sys, prog.root, root, seeds, res, say);
  if (!exfil.length) {
    say("no seed exfiltrated; nothing to investigate");
    return finish(1);
  }
  const run = readRun(exfil[0], { checkBlobs: true });
  describeRun(run, res, say);
  await testInputs(sys, run, exfil, opts, res, say);
  say("\n== structure");
  const g2 = buildGraph(new RunModel(readRun(exfil[0])), { infer: false });
  res.critical_path = criticalPath(g2).map((id) => `${g2.nodes.get(id)!.label} [${g2.nodes.get(id)!.agent}]`);
  say("  critical path: " + res.critical_path.join(" -> "));
  const html = path.join(root, "report.html");
  try {
    const r = writeReport(root, html);
    res.report = { file: html, bytes: r.bytes };
    say(`\nruns:   ${opts.out}\nreport: ${html}   (static, ${(r.bytes / 1024).toFixed(0)} KB; open it in a browser, or open the folder in VS Code)`);
  } catch (err) {
    res.report = { file: null, error: (err as Error).message };
    say(`\nruns:   ${opts.out}\nreport: not written (${(err as Error).message})`);
  }
  res.next = `causeway attribute ${shellWord(path.join(opts.out, path.basename(exfil[0])))} --target ${singleQuote(EXFIL_TARGET)} --allow-program causeway:demo`;
  say(`replay: ${res.next}`);
  return finish(0);
}

type Say = (line: string) => void;

/** Records one run a seed; returns the folders of the runs that exfiltrated. */
async function recordSeeds(sys: System, programRoot: string | undefined, root: string, seeds: number, res: DemoResult, say: Say): Promise<string[]> {
  for (let s = 0; s < seeds; s++) {
    const runId = `demo-seed${s}`;
    fs.rmSync(path.join(root, runId), { recursive: true, force: true });
    const r = await sys.run({ seed: s, outDir: root, runId, root: programRoot });
    const hit = targetHits(new RunModel(readRun(r.dir!)), EXFIL_TARGET).length > 0;
    res.runs.push({ run_id: runId, dir: r.dir!, actions: r.actions.map((a) => a.tool), exfiltration: hit });
  }
  const exfil = res.runs.filter((r) => r.exfiltration).map((r) => r.dir);
  const first = exfil.length ? new RunModel(readRun(exfil[0])) : new RunModel(readRun(res.runs[0].dir));
  res.agents = [...new Set(first.events.map((e) => e.agent).filter((a): a is string => typeof a === "string" && a !== "run"))];
  say(`== record: ${plural(seeds, "run")} of a ${res.agents.length}-agent support system (seeded mock models, fake tools) -> ${res.out}`);
  for (const r of res.runs) say(`  ${r.run_id}: ${r.actions.join(", ")}${r.exfiltration ? "   <- exfiltration" : ""}`);
  return exfil;
}

/** What happened in the investigated run: its actions, its chain, and what each untrusted input reached. */
function describeRun(run: RunData, res: DemoResult, say: Say): void {
  const m = new RunModel(run);
  res.investigated = run.runId;
  say(`\n== investigating ${run.runId}`);
  for (const a of m.actions) {
    res.actions.push({ agent: a.agent, tool: a.tool, args: m.canonical(a.args_ref) });
    say(`  ${a.agent.padEnd(10)} ${a.tool.padEnd(16)} ${m.canonical(a.args_ref)}`);
  }
  const v = verifyRunData(run);
  res.verify = { ok: v.ok, events: v.events, problem: v.ok ? null : (v.first?.message ?? null) };
  say(`\n== verify: ${v.ok ? `hash chain intact, ${v.events} events` : v.first?.message}`);

  say("\n== blast radius (observed edges): what did each untrusted input reach?");
  const g = buildGraph(m, { infer: false });
  const exfilSeqs = new Set(targetHits(m, EXFIL_TARGET).map((a) => a.seq));
  for (const n of g.nodes.values()) {
    if (n.type !== "input" || n.trust !== "untrusted") continue;
    const t = taint(m, g, [`input:${n.label}`]);
    res.blast_radius.push({ source: n.label, actions: t.actions.map((x) => x.tool), reached_exfiltration: t.actions.some((x) => exfilSeqs.has(x.seq)) });
    say(`  ${n.label.padEnd(24)} reached ${plural(t.actions.length, "action")}${t.actions.length ? `: ${t.actions.map((x) => x.tool).join(", ")}` : ""}`);
  }
  say(`  ${reachSentence(res.blast_radius)}`);
}

/** Why: the paired tests of each input, a second run's (for the influence view), and one decision test. */
async function testInputs(
  sys: System,
  run: RunData,
  exfil: string[],
  opts: { n: number; method?: "betting" | "newcombe" },
  res: DemoResult,
  say: Say,
): Promise<void> {
  const newcombe = opts.method === "newcombe";
  // the reference's figures: n fixed pairs, Newcombe; by default: the paired betting sequence, stopping when decisive and the role is clear
  const how = newcombe ? { n: opts.n, method: "newcombe" as const } : { nMax: opts.n * 4, sizeRole: true };
  say(
    newcombe
      ? `\n== counterfactual tests (n=${opts.n} paired replays each, Newcombe; tools served from tape)`
      : `\n== counterfactual tests (paired replays, sequential up to ${opts.n * 4} pairs each until decisive; tools served from tape)`,
  );
  const ctx = new ReplayContext(run, sys);
  const tests: [string, string][] = [
    ["input:vendor:portal/notes.md", EXFIL_TARGET],
    ["input:web:shipping_faq", EXFIL_TARGET],
    ["input:inbox:ticket-881", EXFIL_TARGET],
    ["msg:researcher->planner", EXFIL_TARGET],
    ["input:kb:refund_policy.md", REFUND_TARGET],
  ];
  for (const [spec, target] of tests) {
    const t = await runTest(ctx, { intervention: spec, target, ...how });
    res.tests.push(t);
    say(formatTest(t));
  }
  res.model_calls = { made: ctx.counts.made, naive: ctx.counts.naive };
  say(`  model calls: ${ctx.counts.made} (a replay without sharing would make ${ctx.counts.naive})`);
  if (exfil.length > 1) {
    // a second run, so the cross-run influence view has more than one data point
    const ctx2 = new ReplayContext(readRun(exfil[1]), sys);
    for (const spec of ["input:vendor:portal/notes.md", "input:web:shipping_faq"]) await runTest(ctx2, { intervention: spec, target: EXFIL_TARGET, ...how });
  }
  const dec = ctx.model.decisions[0];
  say(`\n== decision-level test (re-call only the ${dec.agent}'s model call; no program re-run needed)`);
  const dt = await decisionTest(ctx, {
    decision: dec.seq,
    intervention: "input:vendor:*",
    contains: "vendor-compliance",
    ...(newcombe ? { n: opts.n, method: "newcombe" as const } : { nMax: opts.n * 4 }),
  });
  res.decision_test = { ...dt, agent: dec.agent };
  say(formatTest(dt));
}
