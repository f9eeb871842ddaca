/**
 * `causeway demo`: record the three-agent support demo (8 seeds), investigate the first run that
 * exfiltrated, test its inputs by paired replay, test the researcher's call alone, and write the
 * static report.
 */
import fs from "node:fs";
import path from "node:path";
import { readRun } from "../log/reader";
import { verifyRunData } from "../log/verify";
import { RunModel } from "../graph/model";
import { buildGraph, criticalPath, targetHits, taint } from "../graph/graph";
import { loadProgram, resolveProgram } from "../replay/loader";
import { ReplayContext, decisionTest, runTest } from "../replay/engine";
import { writeReport } from "../report/report";
import { formatTest, out } from "./format";

export const EXFIL_TARGET = "tool=send_email,arg~vendor-compliance";
export const REFUND_TARGET = "tool=issue_refund";

export async function runDemo(opts: { out: string; n: number; seeds?: number; quiet?: boolean; method?: "betting" | "newcombe" }): Promise<number> {
  const say = opts.quiet ? () => {} : out;
  const root = path.resolve(opts.out);
  const prog = resolveProgram("causeway:demo", process.cwd());
  const sys = await loadProgram(prog);
  const seeds = opts.seeds ?? 8;
  say(`== record: ${seeds} runs of a 3-agent support system (seeded mock models, fake tools) -> ${opts.out}`);
  const exfil: string[] = [];
  for (let s = 0; s < seeds; s++) {
    const runId = `demo-seed${s}`;
    fs.rmSync(path.join(root, runId), { recursive: true, force: true });
    const r = await sys.run({ seed: s, outDir: root, runId, root: prog.root });
    const hit = targetHits(new RunModel(readRun(r.dir!)), EXFIL_TARGET).length > 0;
    if (hit) exfil.push(r.dir!);
    say(`  ${runId}: ${r.actions.map((a) => a.tool).join(", ")}${hit ? "   <- exfiltration" : ""}`);
  }
  if (!exfil.length) {
    say("no seed exfiltrated; nothing to investigate");
    return 1;
  }
  const run = readRun(exfil[0], { checkBlobs: true });
  const m = new RunModel(run);
  say(`\n== investigating ${run.runId}`);
  for (const a of m.actions) say(`  ${a.agent.padEnd(10)} ${a.tool.padEnd(16)} ${m.canonical(a.args_ref)}`);
  const v = verifyRunData(run);
  say(`\n== verify: ${v.ok ? `hash chain intact, ${v.events} events` : v.first?.message}`);

  say("\n== blast radius (observed edges): what did each untrusted input reach?");
  const g = buildGraph(m, { infer: false });
  for (const n of g.nodes.values()) {
    if (n.type !== "input" || n.trust !== "untrusted") continue;
    const t = taint(m, g, [`input:${n.label}`]);
    say(`  ${n.label.padEnd(24)} reached ${t.actions.length} actions: ${t.actions.map((x) => x.tool).join(", ")}`);
  }
  say("  Every untrusted input reached the exfiltration email. Reach alone cannot say which one caused it.");

  const newcombe = opts.method === "newcombe";
  // the reference's figures: n fixed pairs, Newcombe; by default: the paired betting sequence, stopping when decisive and the role is clear
  const how = newcombe ? { n: opts.n, method: "newcombe" as const } : { nMax: opts.n * 4, sizeRole: true };
  say(newcombe ? `\n== counterfactual tests (n=${opts.n} paired replays each, Newcombe; tools served from tape)` : `\n== counterfactual tests (paired replays, sequential up to ${opts.n * 4} pairs each until decisive; tools served from tape)`);
  const ctx = new ReplayContext(run, sys);
  const tests: [string, string][] = [
    ["input:vendor:portal/notes.md", EXFIL_TARGET],
    ["input:web:shipping_faq", EXFIL_TARGET],
    ["input:inbox:ticket-881", EXFIL_TARGET],
    ["msg:researcher->planner", EXFIL_TARGET],
    ["input:kb:refund_policy.md", REFUND_TARGET],
  ];
  // a cause's share is sized (sizeRole): primary or contributing, not just "causal"
  for (const [spec, target] of tests) say(formatTest(await runTest(ctx, { intervention: spec, target, ...how })));
  say(`  model calls: ${ctx.counts.made} (a replay without sharing would make ${ctx.counts.naive})`);
  if (exfil.length > 1) {
    // a second run, so the cross-run influence view has more than one data point
    const ctx2 = new ReplayContext(readRun(exfil[1]), sys);
    for (const spec of ["input:vendor:portal/notes.md", "input:web:shipping_faq"]) await runTest(ctx2, { intervention: spec, target: EXFIL_TARGET, ...how });
  }
  const dec = m.decisions[0];
  say("\n== decision-level test (re-call only the researcher's model call; no program re-run needed)");
  say(formatTest(await decisionTest(ctx, { decision: dec.seq, intervention: "input:vendor:*", contains: "vendor-compliance", ...(newcombe ? { n: opts.n, method: "newcombe" as const } : { nMax: opts.n * 4 }) })));

  say("\n== structure");
  const g2 = buildGraph(new RunModel(readRun(exfil[0])), { infer: false });
  say("  critical path: " + criticalPath(g2).map((id) => `${g2.nodes.get(id)!.label} [${g2.nodes.get(id)!.agent}]`).join(" -> "));
  const html = path.join(root, "report.html");
  try {
    const r = writeReport(root, html);
    say(`\nruns:   ${opts.out}\nreport: ${html}   (static, ${(r.bytes / 1024).toFixed(0)} KB; open it in a browser, or open the folder in VS Code)`);
  } catch (err) {
    say(`\nruns:   ${opts.out}\nreport: not written (${(err as Error).message})`);
  }
  say(`replay: causeway attribute ${path.join(opts.out, path.basename(exfil[0]))} --target "${EXFIL_TARGET}" --allow-program causeway:demo`);
  return 0;
}
