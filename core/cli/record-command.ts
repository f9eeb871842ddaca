/**
 * `causeway record --out DIR [--seed S] [--sensitive TOOL]… [--untrusted-tool TOOL]…
 * [--trusted-tool TOOL]… [--run-id ID] [--json] -- COMMAND ARGS…`: runs an unmodified Node program
 * under the preload and prints the run folder. run.start records the command relative to the
 * working directory (the program's root), never the environment, with secrets passed as flags
 * redacted (`--api-key=[redacted]`); `run.start.program` is that command line (formatCommand).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs, UsageError } from "./args";
import { err as errLine, json, out, shown } from "./output";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { investigateLite, alertRecord } from "../analysis/investigate";
import { freeRunId, slug } from "../sdk/system";
import { commandRunRefusal, launch } from "../replay/command";
import { parseToolSpecs, relativeArg, type PreloadConfig } from "../register/config";
import { formatCommand, redactArgv, singleQuote } from "../log/argv";

function toolSpecs(specs: string[]): Record<string, string[]> {
  try {
    return parseToolSpecs(specs);
  } catch (err) {
    throw new UsageError(`record: --tool ${(err as Error).message}`);
  }
}

export const RECORD_COMMAND_USAGE =
  "causeway record --out DIR [--seed S] [--sensitive TOOL]... [--untrusted-tool TOOL]... [--trusted-tool TOOL]... [--tool FILE:EXPORT[,EXPORT]]... [--run-id ID] [--json] -- COMMAND ARGS...";

export async function recordCommand(args: string[]): Promise<number> {
  const dash = args.indexOf("--");
  const command = args.slice(dash + 1);
  if (!command.length) throw new UsageError("record: give the command after --, e.g. -- node agent.mjs");
  const p = parseArgs("record", args.slice(0, dash), {
    positionals: [],
    flags: { out: "string", seed: "number", tool: "strings", sensitive: "strings", "untrusted-tool": "strings", "trusted-tool": "strings", "run-id": "string", json: "boolean" },
  });
  const root = process.cwd();
  const outRoot = path.resolve((p.flags.out as string | undefined) ?? "runs");
  if (/\.(ts|tsx|mts|cts)$/.test(command[0])) throw new UsageError(`record: run TypeScript through a loader, e.g. -- node --import tsx ${command[0]}`);
  // what the run records and the CLI prints: secrets passed as flags redacted, visibly
  const recorded = redactArgv(command.map((a) => relativeArg(a, root)));
  const script = recorded.find((c, i) => i > 0 || /\.[cm]?[jt]sx?$/.test(c)) ?? recorded[0];
  const runId = (p.flags["run-id"] as string | undefined) ?? freeRunId(outRoot, `${slug(script)}-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`);
  const dir = path.join(outRoot, runId);
  if (fs.existsSync(path.join(dir, "events.jsonl"))) throw new UsageError(`record: ${dir} already holds a run`);
  const seed = p.flags.seed as number | undefined;
  const cfg: PreloadConfig = {
    dir,
    runId,
    ...(seed !== undefined ? { seed } : {}),
    sensitive: (p.flags.sensitive as string[] | undefined) ?? [],
    untrusted: (p.flags["untrusted-tool"] as string[] | undefined) ?? [],
    trusted: (p.flags["trusted-tool"] as string[] | undefined) ?? [],
    program: formatCommand(recorded),
    command: recorded,
    root,
    tools: toolSpecs((p.flags.tool as string[] | undefined) ?? []),
  };
  const { argv, env } = launch(command, { ...process.env, CAUSEWAY_CONFIG: JSON.stringify(cfg) });
  const code = await new Promise<number>((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: root, env, stdio: ["inherit", p.flags.json ? "ignore" : "inherit", "inherit"] });
    child.on("error", (err) => {
      process.stderr.write(`causeway record: could not start ${command[0]}: ${err.message}\n`);
      resolve(127);
    });
    child.on("close", (c, sig) => resolve(c ?? (sig ? 128 : 1)));
  });
  if (!fs.existsSync(path.join(dir, "events.jsonl"))) {
    process.stderr.write(`causeway record: the program did not start recording (is it a Node program? exit code ${code})\n`);
    return code || 1;
  }
  const run = readRun(dir);
  const m = new RunModel(run);
  const end = m.events.find((e) => e.type === "run.end") as { outcome?: Record<string, unknown> } | undefined;
  const problems = Array.isArray(end?.outcome?.problems) ? (end.outcome.problems as string[]) : [];
  const refusal = commandRunRefusal(m);
  const summary = investigateLite(run);
  if (p.flags.json) {
    json({ run: dir, run_id: runId, program: cfg.program, exit_code: code, model_calls: m.decisions.length, actions: m.actions.map((a) => a.tool), problems, replay_refused: refusal, alerts: summary.alerts.map(alertRecord) });
  } else {
    out(dir);
    errLine(`recorded ${shown(runId)}: ${m.decisions.length} model calls, tool calls: ${m.actions.map((a) => shown(a.tool)).join(", ") || "none"}`);
    process.stderr.write(`  alerts: ${summary.summary.alerts.high} high, ${summary.summary.alerts.review} review\n`);
    process.stderr.write(`  replay with: --allow-program ${singleQuote(cfg.program ?? "")}\n`);
    for (const pr of problems) errLine(`  problem: ${shown(pr)}`);
    if (refusal) errLine(`  note: ${shown(refusal)}`);
    if (code !== 0) process.stderr.write(`  the program exited with code ${code}\n`);
  }
  return code !== 0 || problems.length ? 1 : 0;
}
