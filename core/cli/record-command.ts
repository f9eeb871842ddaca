/**
 * `causeway record --out DIR [--seed S] [--sensitive TOOL]… [--untrusted-tool TOOL]…
 * [--trusted-tool TOOL]… [--run-id ID] [--via preload|gateway] [--upstream URL] [--json] -- COMMAND
 * ARGS…`: runs an unmodified program and prints the run folder: a Node program under the preload,
 * any other program behind a built-in gateway (core/cli/record-gateway.ts). run.start records the command relative to the
 * working directory (the program's root), never the environment, with secrets passed as flags
 * redacted (`--api-key=[redacted]`); `run.start.program` is that command line (formatCommand).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs, UsageError } from "./args";
import { err as errLine, json, out } from "./output";
import { shown } from "../log/shown";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { investigateLite } from "../analysis/investigate";
import { alertRecord } from "../analysis/alerts";
import { freeRunId, slug } from "../sdk/system";
import { commandRunRefusal, launch } from "../replay/command";
import { parseToolSpecs, relativeArg } from "../register/config";
import type { PreloadConfig } from "../replay/preload-contract";
import { formatCommand, redactArgv, singleQuote } from "../log/argv";
import { chooseVia, recordBehindGateway } from "./record-gateway";

/** The --tool declarations, each file checked to exist (relative to the program's root). */
function toolSpecs(specs: string[], root: string): Record<string, string[]> {
  let tools: Record<string, string[]>;
  try {
    tools = parseToolSpecs(specs);
  } catch (err) {
    throw new UsageError(`record: --tool ${(err as Error).message}`);
  }
  for (const file of Object.keys(tools)) {
    if (!fs.statSync(path.resolve(root, file), { throwIfNoEntry: false })?.isFile())
      throw new UsageError(`record: --tool ${file}: no such file (paths are relative to ${root})`);
  }
  return tools;
}

export const RECORD_COMMAND_USAGE =
  "causeway record --out DIR [--seed S] [--sensitive TOOL]... [--untrusted-tool TOOL]... [--trusted-tool TOOL]... [--tool FILE:EXPORT[,EXPORT]]... [--run-id ID] [--via preload|gateway] [--upstream URL] [--json] -- COMMAND ARGS...";

export async function recordCommand(args: string[]): Promise<number> {
  const dash = args.indexOf("--");
  const command = args.slice(dash + 1);
  if (!command.length) throw new UsageError("record: give the command after --, e.g. -- node agent.mjs or -- python3 agent.py");
  const p = parseArgs("record", args.slice(0, dash), {
    positionals: [],
    flags: {
      out: "string",
      seed: "number",
      tool: "strings",
      sensitive: "strings",
      "untrusted-tool": "strings",
      "trusted-tool": "strings",
      "run-id": "string",
      via: "string",
      upstream: "string",
      json: "boolean",
    },
  });
  const root = process.cwd();
  const via = chooseVia(command, root, p.flags.via as string | undefined);
  if (via === "preload" && p.flags.upstream !== undefined)
    throw new UsageError(
      "record: --upstream is for a program behind the gateway (--via gateway); a Node program under the preload calls the endpoint its environment names",
    );
  if (via === "gateway" && p.flags.tool !== undefined)
    throw new UsageError(
      "record: --tool wraps a Node module's functions; behind the gateway tool calls are seen in the model requests, name their trust with --trusted-tool / --untrusted-tool",
    );
  const both = ((p.flags["trusted-tool"] as string[] | undefined) ?? []).filter((t) => ((p.flags["untrusted-tool"] as string[] | undefined) ?? []).includes(t));
  if (both.length) throw new UsageError(`record: a tool can't be both --trusted-tool and --untrusted-tool: ${both.join(", ")}`);
  const outRoot = path.resolve((p.flags.out as string | undefined) ?? "runs");
  if (/\.(ts|tsx|mts|cts)$/.test(command[0])) throw new UsageError(`record: run TypeScript through a loader, e.g. -- node --import tsx ${command[0]}`);
  // what the run records and the CLI prints: secrets passed as flags redacted, visibly
  const recorded = redactArgv(command.map((a) => relativeArg(a, root)));
  const script = recorded.find((c, i) => i > 0 || /\.[cm]?[jt]sx?$/.test(c)) ?? recorded[0];
  const runId =
    (p.flags["run-id"] as string | undefined) ??
    freeRunId(outRoot, `${slug(script)}-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`);
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
    tools: toolSpecs((p.flags.tool as string[] | undefined) ?? [], root),
    quiet: true,
  };
  const fresh = !fs.existsSync(dir);
  const code =
    via === "gateway"
      ? await runBehindGateway(command, cfg, outRoot, p.flags.upstream as string | undefined, !!p.flags.json)
      : await runUnderPreload(command, cfg, !!p.flags.json);
  if (!fs.existsSync(path.join(dir, "events.jsonl"))) {
    const why =
      via === "gateway"
        ? `the program made no model call through the gateway (does its client read OPENAI_BASE_URL or ANTHROPIC_BASE_URL? exit code ${code})`
        : `the program did not start recording (is it a Node program? for any other program pass --via gateway; exit code ${code})`;
    process.stderr.write(`causeway record: ${why}\n`);
    return code || 1;
  }
  const run = readRun(dir);
  const m = new RunModel(run);
  const end = m.events.find((e) => e.type === "run.end") as { outcome?: Record<string, unknown> } | undefined;
  const toolError = end?.outcome?.tool_error;
  if (typeof toolError === "string") {
    // the program was stopped where it loaded its tools: nothing worth keeping was recorded
    if (fresh) fs.rmSync(dir, { recursive: true, force: true });
    throw new UsageError(`record: ${toolError}`);
  }
  const problems = Array.isArray(end?.outcome?.problems) ? (end.outcome.problems as string[]) : [];
  const refusal = commandRunRefusal(m);
  const summary = investigateLite(run);
  if (p.flags.json) {
    json({
      run: dir,
      run_id: runId,
      program: cfg.program,
      via,
      exit_code: code,
      model_calls: m.decisions.length,
      actions: m.actions.map((a) => a.tool),
      problems,
      replay_refused: refusal,
      alerts: summary.alerts.map(alertRecord),
    });
  } else {
    out(dir);
    errLine(`recorded ${shown(runId)}: ${m.decisions.length} model calls, tool calls: ${m.actions.map((a) => shown(a.tool)).join(", ") || "none"}`);
    process.stderr.write(`  alerts: ${summary.summary.alerts.high} high, ${summary.summary.alerts.review} review\n`);
    if (via === "preload") process.stderr.write(`  replay with: --allow-program ${singleQuote(cfg.program ?? "")}\n`);
    else process.stderr.write("  recorded behind the gateway: its model requests, not the program, are what a replay can re-send\n");
    for (const pr of problems) errLine(`  problem: ${shown(pr)}`);
    if (refusal) errLine(`  note: ${shown(refusal)}`);
    if (code !== 0) process.stderr.write(`  the program exited with code ${code}\n`);
  }
  return code !== 0 || problems.length ? 1 : 0;
}

/** Runs a Node program under the preload; its exit code. */
function runUnderPreload(command: string[], cfg: PreloadConfig, quiet: boolean): Promise<number> {
  const { argv, env } = launch(command, { ...process.env, CAUSEWAY_CONFIG: JSON.stringify(cfg) });
  return new Promise<number>((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: cfg.root, env, stdio: ["inherit", quiet ? "ignore" : "inherit", "inherit"] });
    child.on("error", (err) => {
      process.stderr.write(`causeway record: could not start ${command[0]}: ${err.message}\n`);
      resolve(127);
    });
    child.on("close", (c, sig) => resolve(c ?? (sig ? 128 : 1)));
  });
}

/** Runs any program behind the built-in gateway; its exit code. */
async function runBehindGateway(command: string[], cfg: PreloadConfig, outRoot: string, upstream: string | undefined, quiet: boolean): Promise<number> {
  const r = await recordBehindGateway({
    command,
    root: cfg.root,
    outRoot,
    runId: cfg.runId,
    program: cfg.program ?? formatCommand(command),
    recorded: cfg.command ?? [],
    seed: cfg.seed,
    sensitive: cfg.sensitive,
    untrusted: cfg.untrusted,
    trusted: cfg.trusted,
    upstream,
    quiet,
  });
  return r.code;
}
