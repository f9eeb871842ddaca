/**
 * Crafted run folders and helpers for the replay-approval attacks: a two-event run (run.start,
 * run.end) that passes `verify`, naming any program and carrying any `meta.command`, and the real
 * CLI run as a child process.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PRELOAD_TAG } from "../../../core/replay/preload-contract";
import { reseal } from "../hardening/hostile";

export const ROOT = path.resolve(__dirname, "../../..");
export const CLI = path.join(ROOT, "dist/cli.js");

export const made: string[] = [];
export function tmp(prefix = "cw-sec-"): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(d);
  return d;
}

/** A two-event run in `dir` naming `program`, with `command` as the preload's meta.command when given. */
export function craftRun(dir: string, program: string, command?: string[]): string {
  fs.mkdirSync(dir, { recursive: true });
  const start = {
    agent: "run",
    guard: null,
    id: "c2257fc6f6ecedb7f0094424d08926d0",
    interventions: [],
    meta: command ? { recorded_by: PRELOAD_TAG, command } : {},
    models: [],
    program,
    run_id: path.basename(dir),
    schema: "causeway.event.v1",
    seed: 0,
    sensitive_tools: [],
    tools: [],
    ts: "2026-12-01T00:00:00.000000Z",
    type: "run.start",
    untrusted_tools: [],
  };
  const end = {
    agent: "run",
    id: "84a1636c3d292d35c3366482d7dd76fd",
    outcome: { exit_code: 0 },
    run_id: path.basename(dir),
    schema: "causeway.event.v1",
    ts: "2026-12-01T00:00:01.000000Z",
    type: "run.end",
  };
  reseal(dir, [start, end]);
  return dir;
}

export interface Cli {
  code: number;
  out: string;
  err: string;
}

/** `node dist/cli.js ARGS` from `cwd`. */
export function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Cli {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
  return { code: r.status ?? 1, out: r.stdout, err: r.stderr };
}

/** A JavaScript System that writes `marker` when it is loaded (when given), else does nothing odd. */
export function systemSource(marker?: string): string {
  return `${marker ? `require("fs").writeFileSync(${JSON.stringify(marker)}, "loaded");\n` : ""}const { System, ModelOutput } = require("causeway-vscode");
exports.SYSTEM = new System({
  name: "agents/x.cjs:SYSTEM",
  task: "say hi",
  models: { m: () => new ModelOutput({ text: "hi" }) },
  tools: {},
  program: async (rt) => {
    const a = rt.agent("a");
    await a.decide([rt.taskRef], { model: "m", purpose: "hi" });
  },
});
`;
}
