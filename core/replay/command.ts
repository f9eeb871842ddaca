/**
 * Replaying a program recorded by the preload (`causeway record … -- COMMAND`): each arm of a
 * paired test re-runs the recorded command under the preload, which removes what the
 * interventions match from every model request, sends the pair's seed, serves tools from the
 * tape and reports back what the program did. The engine sees it as a System (run → actions and
 * counts), so runTest, attribute, matrix and replay work on it unchanged.
 *
 * The command spawned is the one the caller passes: the argv of the program string the user
 * approved (approval.ts), never read from the run. With a pin, the program file's sha256 is
 * checked before every spawn. Nothing from the run's environment is recorded or replayed: the
 * replay runs with the caller's environment and working directory.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { RunModel } from "../graph/model";
import type { RunData } from "../log/reader";
import type { RunOptions, RunResult } from "../sdk/system";
import { PRELOAD_TAG, type PreloadConfig, type ReplaySummary } from "./preload-contract";
import { formatCommand } from "../log/argv";
import { sha256File } from "./approval";
import { isRecord } from "../util/guards";

export class CommandReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReplayError";
  }
}

/** Was this run recorded by the preload (an unmodified program)? */
export function isCommandRun(m: RunModel): boolean {
  const meta = m.start.meta;
  return (
    isRecord(meta) &&
    meta.recorded_by === PRELOAD_TAG &&
    Array.isArray(meta.command) &&
    meta.command.every((c) => typeof c === "string") &&
    meta.command.length > 0
  );
}

/** The command a preload recording carries in `meta.command`, or undefined for any other run. */
export function recordedCommand(m: RunModel): string[] | undefined {
  return isCommandRun(m) ? [...(m.start.meta as { command: string[] }).command] : undefined;
}

/** Why replaying this run would be unsafe or impossible without live tools, or null. */
export function commandRunRefusal(m: RunModel): string | null {
  const end = m.events.find((e) => e.type === "run.end") as { outcome?: unknown } | undefined;
  const o = isRecord(end?.outcome) ? end.outcome : {};
  const tools = Array.isArray(o.uncaptured_tool_calls) ? o.uncaptured_tool_calls.map(String) : [];
  const kids = Array.isArray(o.child_processes) ? o.child_processes.map(String) : [];
  if (tools.length) {
    return `the recording ran tools the preload did not intercept (${tools.join(", ")}): a replay would run them for real. Serve them through MCP or declare them when recording (--tool FILE:EXPORT: a function or a framework's tool object, e.g. LangChain tool()), or pass --live-tools to allow it`;
  }
  if (kids.length)
    return `the recording started child processes (${kids.slice(0, 3).join("; ")}) the preload does not follow; pass --live-tools to replay anyway`;
  return null;
}

/** Where the preload bundle is: next to this bundle (dist/), else under the package's dist/. */
export function registerPath(): string {
  const candidates = [
    path.join(__dirname, "register.js"),
    path.resolve(__dirname, "..", "..", "dist", "register.js"),
    path.resolve(__dirname, "..", "dist", "register.js"),
  ];
  const hit = candidates.find((c) => fs.existsSync(c));
  if (!hit) throw new CommandReplayError(`the preload bundle (dist/register.js) is missing; build it with node esbuild.mjs`);
  return hit;
}

/** NODE_OPTIONS with the preload added. */
export function withPreload(nodeOptions: string | undefined, file = registerPath()): string {
  return `${nodeOptions ? nodeOptions + " " : ""}--import ${JSON.stringify(pathToFileURL(file).href)}`;
}

/**
 * The argv and environment to run a command under the preload: `node …` and a bare script run
 * under this Node with `--import` on the command line; anything else (npx, a shell script) gets
 * it through NODE_OPTIONS.
 */
export function launch(command: readonly string[], env: NodeJS.ProcessEnv, file = registerPath()): { argv: string[]; env: NodeJS.ProcessEnv } {
  const [first, ...rest] = command;
  const imp = ["--import", pathToFileURL(file).href];
  const e: NodeJS.ProcessEnv = { ...env };
  delete e.CAUSEWAY_DISABLE;
  delete e.CAUSEWAY_OUT;
  delete e.ELECTRON_RUN_AS_NODE;
  if (process.versions.electron) e.ELECTRON_RUN_AS_NODE = "1";
  if (/\.(m?js|cjs)$/.test(first)) return { argv: [process.execPath, ...imp, first, ...rest], env: e };
  if (first === "node") return { argv: [process.execPath, ...imp, ...rest], env: e };
  if (process.versions.electron) delete e.ELECTRON_RUN_AS_NODE;
  return { argv: [...command], env: { ...e, NODE_OPTIONS: withPreload(env.NODE_OPTIONS, file) } };
}

export interface CommandSystemOptions {
  /** The folder the command runs in (the program's root). */
  root: string;
  /** The argv to run: the approved command (never taken from the run). */
  command: readonly string[];
  /** The program file and the sha256 it must still have before each spawn. */
  pin?: { file: string; sha256: string };
  /** Longest a replayed program may run (default 120 s, CAUSEWAY_REPLAY_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A recorded command as the replay engine's System. */
export class CommandSystem {
  readonly isCausewaySystem = true;
  readonly seededModels = false;
  readonly config = { models: {}, tools: {}, program: () => undefined, name: undefined as string | undefined };
  readonly command: string[];
  /** The program's own tool modules the recording wrapped (wrapped again in every replay). */
  readonly tools: Record<string, string[]> = {};
  private readonly runDir: string;

  constructor(
    run: RunData,
    readonly opts: CommandSystemOptions,
  ) {
    const m = new RunModel(run);
    if (!isCommandRun(m)) throw new CommandReplayError(`${run.dir} was not recorded by causeway record (no command in run.start)`);
    this.command = [...opts.command];
    this.config.name = formatCommand(this.command);
    const tm = (m.start.meta as { tool_modules?: unknown }).tool_modules;
    if (isRecord(tm)) for (const [file, names] of Object.entries(tm)) if (Array.isArray(names)) this.tools[file] = names.map(String);
    this.runDir = run.dir;
  }

  get name(): string | undefined {
    return this.config.name;
  }

  async run(o: RunOptions = {}): Promise<RunResult> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-replay-"));
    const out = path.join(tmp, "summary.json");
    const cfg: PreloadConfig = {
      runId: o.runId ?? "replay",
      sensitive: [],
      untrusted: [],
      trusted: [],
      program: this.config.name ?? null,
      command: this.command,
      root: this.opts.root,
      tools: this.tools,
      replay: {
        run: this.runDir,
        interventions: (o.interventions ?? []).map((i) => i.spec),
        seed: o.seed ?? 0,
        liveTools: !!o.liveTools,
        out,
        ...(o.trace ? { trace: true } : {}),
      },
    };
    const base: RunResult = {
      runId: cfg.runId,
      seed: o.seed ?? 0,
      actions: [],
      outcome: null,
      stats: { modelCalls: 0, modelCallsCached: 0, offTape: 0, ablated: 0, events: 0 },
    };
    try {
      const pin = this.opts.pin;
      if (pin) {
        let now = "";
        try {
          now = sha256File(pin.file);
        } catch {
          /* gone: refused below */
        }
        if (now !== pin.sha256)
          return { ...base, error: `the program file ${pin.file} changed since it was approved (sha256 ${pin.sha256}, now ${now || "missing"}); not run` };
      }
      const { code, stderr, timedOut } = await this.spawn(cfg);
      const summary = readSummary(out);
      const label = this.config.name;
      if (timedOut) return { ...base, error: `the program (${label}) did not finish within ${Math.round(this.timeout() / 1000)} s and was stopped` };
      if (!summary) return { ...base, error: `the program (${label}) exited (${code}) without reporting back${tail(stderr)}` };
      const stats = { ...base.stats, ...summary.stats };
      if (summary.problems.length) return { ...base, stats, error: summary.problems.join("; ") };
      if (code !== 0) return { ...base, stats, error: `the program (${label}) exited with code ${code}${tail(stderr)}` };
      const actions = summary.actions.map((a) => ({ ...a }));
      return { ...base, actions, stats, outcome: { exit_code: code }, ...(summary.trace ? { trace: summary.trace } : {}) };
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  private timeout(): number {
    return this.opts.timeoutMs ?? (Number(process.env.CAUSEWAY_REPLAY_TIMEOUT_MS) || 120_000);
  }

  private spawn(cfg: PreloadConfig): Promise<{ code: number | null; stderr: string; timedOut: boolean }> {
    const { argv, env } = launch(this.command, { ...process.env, CAUSEWAY_CONFIG: JSON.stringify(cfg) });
    return new Promise((resolve) => {
      let stderr = "";
      let timedOut = false;
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(argv[0], argv.slice(1), { cwd: this.opts.root, env, stdio: ["ignore", "ignore", "pipe"], detached: process.platform !== "win32" });
      } catch (err) {
        return resolve({ code: -1, stderr: (err as Error).message, timedOut: false });
      }
      const kill = () => {
        try {
          if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
          else child.kill("SIGKILL");
        } catch {
          /* gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, this.timeout());
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (c: string) => {
        stderr = (stderr + c).slice(-4000);
      });
      child.on("error", (err) => {
        stderr += err.message;
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        kill(); // whatever the program left behind (an MCP server it did not close)
        resolve({ code, stderr, timedOut });
      });
    });
  }
}

function readSummary(file: string): ReplaySummary | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(file, "utf8"));
    return isRecord(s) && Array.isArray(s.actions) && Array.isArray(s.problems) ? (s as unknown as ReplaySummary) : undefined;
  } catch {
    return undefined;
  }
}

function tail(stderr: string): string {
  const t = stderr.trim().split("\n").slice(-3).join(" | ");
  return t ? `: ${t.slice(0, 600)}` : "";
}
