/**
 * `causeway`: the command line. A thin front over core: every command reads runs with the same
 * reader, analyses with the same investigation, replays with the same engine as the extension.
 * Usage errors exit 2 with a one-line message; verify exits 1 when a log fails.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs, intFlag, UsageError } from "./args";
import { JSON_FLAG, type Command } from "./command";
import { REPLAY_COMMANDS, methodOf, requireRun } from "./replay-commands";
import { out, err as errLine, json } from "./output";
import { shown } from "../log/shown";
import { readRun } from "../log/reader";
import { verifyRunData } from "../log/verify";
import { RunModel } from "../graph/model";
import { buildGraph, criticalPath, taint, targetHits } from "../graph/graph";
import { alertRecord } from "../analysis/alerts";
import { investigateLite } from "../analysis/investigate";
import { investigateLiteSafe } from "../analysis/safe";
import { guardStdio } from "./stdio";
import { influence, listRuns } from "../analysis/influence";
import { BUILTIN_PROGRAMS } from "../replay/programs";
import { ProgramError } from "../replay/loader";
import { findProgram, loadCliProgram } from "./programs";
import { replaySystem } from "./replay-rung";
import { ReplayError } from "../replay/context";
import { Refusal } from "../replay/preflight";
import { SpecError, parseIntervention, parseTarget } from "../specs/grammar";
import { allowSpecFiles } from "../specs/files";
import { Guard } from "../sdk/guard";
import { slug } from "../sdk/system";
import { writeReport } from "../report/report";
import { runDemo } from "./demo";
import { CAPTURE_COMMANDS } from "./capture-commands";
import { recordCommand, RECORD_COMMAND_USAGE } from "./record-command";
import { caseCommands } from "./case-commands";
import { STORE_COMMANDS } from "./store-commands";
import { replayCommand } from "./replay-command";
import { JOB_COMMANDS } from "./job-commands";

process.setSourceMapsEnabled?.(true);

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
      const g =
        guard && guard !== "off" ? new Guard(guard as "alert" | "block", { onAlert: (a) => errLine(`  guard: ${a.severity} ${shown(a.title)}`) }) : undefined;
      const r = await sys.run({
        seed: (p.flags.seed as number | undefined) ?? 0,
        outDir: (p.flags.out as string | undefined) ?? "runs",
        runId: p.flags["run-id"] as string | undefined,
        guard: g,
        root: prog.root,
      });
      const summary = investigateLite(readRun(r.dir!));
      // a run id is never reused: when the seed's run exists, the new one gets a suffix; say so
      const base = `${slug(sys.name ?? "run")}-seed${r.seed}`;
      const renamed =
        p.flags["run-id"] === undefined && r.runId !== base ? `a run ${base} already exists in ${path.dirname(r.dir!)}; this one is ${r.runId}` : null;
      if (p.flags.json)
        json({
          run: r.dir,
          run_id: r.runId,
          error: r.error ?? null,
          actions: r.actions.map((a) => a.tool),
          alerts: summary.alerts.map(alertRecord),
          note: renamed,
        });
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
      else
        for (const a of al)
          out(
            `${a.severity.toUpperCase().padEnd(6)} ${a.seq === null ? "run" : `#${a.seq}`.padEnd(4)} ${shown(a.title)}${a.detail ? `\n       ${shown(a.detail)}` : ""}`,
          );
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
      for (const x of r.actions)
        out(`  #${x.seq} ${shown(x.agent)}.${shown(x.tool)} ${shown(JSON.stringify(x.args))}\n      via ${x.path.map(shown).join(" > ")}`);
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
        const nodes = j.nodes.map((n) => ({
          ...n,
          trust: n.type === "decision" || n.type === "action" ? (tainted.has(n.id) ? "untrusted" : "trusted") : n.trust,
          tainted: tainted.has(n.id),
        }));
        return json({ run_id: m.runId, ...j, nodes, critical_path: criticalPath(g) });
      }
      for (const e of g.edges) {
        const s = g.nodes.get(e.src)!;
        const t = g.nodes.get(e.dst)!;
        const extra = (["reuse", "score", "effect"] as const)
          .filter((k) => e[k] !== undefined)
          .map((k) => ` ${k}=${e[k]}`)
          .join("");
        out(`${shown(s.label)}[${shown(s.agent)}] -> ${shown(t.label)}[${shown(t.agent)}]  ${e.kind} (${e.evidence})${extra}`);
      }
    },
  },
  ...REPLAY_COMMANDS,
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
        out(
          `  ${s.labels.map(shown).join(", ")} [${shown(s.trust)}]  in ${s.runs} runs, cited ${s.cited_by}×${s.max_effect !== null ? `, strongest tested effect ${s.max_effect >= 0 ? "+" : ""}${s.max_effect.toFixed(2)}` : ""}`,
        );
        for (const e of es)
          out(
            `      -> ${shown(e.tool)}: reached in ${e.reach_runs} runs${e.confirmed ? ", CONFIRMED cause" : e.ruled_out ? ", ruled out" : e.tests.length ? ", tested" : ""}`,
          );
      }
    },
  },
  report: {
    usage: "causeway report ROOT [-o FILE] [--json]",
    help: "the investigator as one static HTML file with every run under ROOT embedded",
    spec: { positionals: ["root"], flags: { "out-file": "string", ...JSON_FLAG }, aliases: { o: "out-file" } },
    run: (p) => {
      const root = path.resolve(p.pos.root!);
      const file = path.resolve(
        (p.flags["out-file"] as string | undefined) ?? path.join(fs.existsSync(path.join(root, "events.jsonl")) ? path.dirname(root) : root, "report.html"),
      );
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
    if (err instanceof UsageError || err instanceof SpecError || err instanceof Refusal)
      return failed(name, err.message.replace(new RegExp(`^${name}: `), ""), 2, jsonMode);
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
