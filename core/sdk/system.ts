/**
 * A System is a re-executable multi-agent program: the program function, its models and tools, the
 * task, and what is sensitive or untrusted. `run` records one run; replays call it again with a
 * tape, interventions and paired seeds.
 */
import type { TraceEntry } from "../log/trace";
import fs from "node:fs";
import path from "node:path";
import type { Sink } from "../log/writer";
import { FileSink, MemorySink } from "../log/writer";
import type { Intervention } from "../specs/grammar";
import { Guard, type GuardMode } from "./guard";
import { Runtime } from "./runtime";
import type { ActionSummary, ModelCache, Tape } from "./runtime-options";
import type { ModelFn, ToolFn } from "./items";

export type Program = (rt: Runtime) => unknown;

export interface SystemConfig {
  program: Program;
  models: Record<string, ModelFn>;
  tools: Record<string, ToolFn>;
  task?: string;
  /**
   * How replays find this program again: `path/to/file.ts:EXPORT` (relative to the program root)
   * or a built-in name such as `causeway:demo`. Recorded as run.start's `program`.
   */
  name?: string;
  sensitiveTools?: readonly string[];
  untrustedTools?: readonly string[];
  meta?: Record<string, unknown>;
  /**
   * The models return the same output for the same seed and context (true for seeded mocks; set
   * false for hosted models). Replays then compute a call that both arms make only once.
   */
  seededModels?: boolean;
  /** Folder that recorded sites are relative to (default: the working directory). */
  root?: string;
}

export interface RunOptions {
  seed?: number;
  /** Runs root: the run is written to <outDir>/<runId>/. */
  outDir?: string;
  runId?: string;
  /** Where events go instead of a folder (a MemorySink, an HttpSink, a TeeSink…). */
  sink?: Sink;
  guard?: Guard | GuardMode;
  // ---- replay hooks ----
  tape?: Tape;
  interventions?: readonly Intervention[];
  liveTools?: boolean;
  modelCache?: ModelCache;
  chain?: boolean;
  captureSites?: boolean;
  /** Folder recorded sites are relative to (overrides the System's root). */
  root?: string;
  /** The task (replays pass the recorded one). */
  task?: string;
  /** Report the decisions, tool calls and messages made (`causeway replay` compares them). */
  trace?: boolean;
}

export interface RunResult {
  runId: string;
  /** The run folder, when written to one. */
  dir?: string;
  seed: number;
  actions: ActionSummary[];
  outcome: unknown;
  /** The program threw: the run ends with run.end {error}. */
  error?: string;
  stats: Runtime["stats"];
  /** The events, when kept in memory. */
  memory?: MemorySink;
  /** What a program replayed in its own process reported it did, when asked (RunOptions.trace). */
  trace?: TraceEntry[];
}

/** A filesystem-friendly label for default run ids: "causeway:demo" → demo, "agents/x.ts:SYSTEM" → x. */
export function slug(name: string): string {
  let s = name.replace(/^causeway:/, "");
  const colon = s.lastIndexOf(":");
  if (colon > 0 && /[\\/.]/.test(s.slice(0, colon))) s = s.slice(0, colon); // MODULE:EXPORT → MODULE
  s = s.split(/[\\/]/).filter(Boolean).pop() ?? "";
  s = s.replace(/\.(?:[cm]?[jt]sx?|py|rb|sh)$/, "");
  return (
    s
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .toLowerCase() || "run"
  );
}

export class System {
  readonly config: SystemConfig;
  /** Marks System objects across copies of the SDK (a program loaded from source). */
  readonly isCausewaySystem = true;

  constructor(config: SystemConfig) {
    if (typeof config.program !== "function") throw new TypeError("System needs a program function");
    this.config = { ...config, models: config.models ?? {}, tools: config.tools ?? {} };
  }

  get name(): string | undefined {
    return this.config.name;
  }

  get seededModels(): boolean {
    return this.config.seededModels !== false;
  }

  /** Records one run (or, with replay hooks, re-executes one). */
  async run(opts: RunOptions = {}): Promise<RunResult> {
    const seed = opts.seed ?? 0;
    let dir: string | undefined;
    let sink = opts.sink;
    let runId = opts.runId;
    if (!sink) {
      const root = opts.outDir ?? "runs";
      runId = runId ?? freeRunId(root, `${slug(this.config.name ?? "run")}-seed${seed}`);
      dir = path.join(root, runId);
      sink = new FileSink(dir);
    }
    // a sink shared by many writers (a collector) names each run uniquely (Sink.runIdFor)
    runId = runId ?? (sink.runIdFor ? sink.runIdFor(`${slug(this.config.name ?? "run")}-seed${seed}`) : `${slug(this.config.name ?? "run")}-seed${seed}`);
    const guard = typeof opts.guard === "string" ? new Guard(opts.guard) : opts.guard;
    const rt = new Runtime({
      runId,
      seed,
      sink,
      program: this.config.name ?? null,
      task: opts.task ?? this.config.task,
      models: this.config.models,
      tools: this.config.tools,
      sensitiveTools: this.config.sensitiveTools,
      untrustedTools: this.config.untrustedTools,
      meta: this.config.meta,
      guard: guard && guard.mode !== "off" ? guard : undefined,
      tape: opts.tape,
      liveTools: opts.liveTools,
      interventions: opts.interventions,
      modelCache: opts.modelCache,
      chain: opts.chain,
      captureSites: opts.captureSites,
      root: opts.root ?? this.config.root,
    });
    let error: string | undefined;
    let outcome: unknown;
    try {
      rt.start();
      outcome = await this.config.program(rt);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    try {
      if (!rt.finished) await rt.finish(error !== undefined ? { error } : (outcome ?? undefined));
    } finally {
      await sink.close?.();
    }
    return {
      runId,
      dir,
      seed,
      actions: rt.actions,
      outcome,
      error,
      stats: rt.stats,
      memory: sink instanceof MemorySink ? sink : undefined,
    };
  }
}

/** `base`, or `base-2`, `base-3`… — the first id with no run folder under root. */
export function freeRunId(root: string, base: string): string {
  if (!fs.existsSync(path.join(root, base, "events.jsonl"))) return base;
  for (let i = 2; ; i++) if (!fs.existsSync(path.join(root, `${base}-${i}`, "events.jsonl"))) return `${base}-${i}`;
}

/** A System from another copy of the SDK is accepted by shape. */
export function isSystem(x: unknown): x is System {
  return !!x && typeof x === "object" && (x as System).isCausewaySystem === true && typeof (x as System).run === "function";
}
