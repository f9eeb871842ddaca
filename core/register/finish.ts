/**
 * The end of a program under the preload: the child processes it started (noted as they start;
 * a replay can't follow them), and at exit run.end with the outcome (recording) or the summary the
 * replay engine reads (replay).
 */
import { ChildProcess } from "node:child_process";
import fs from "node:fs";
import { MemorySink } from "../log/writer";
import { memoryTrace } from "../log/trace";
import type { Runtime } from "../sdk/runtime";
import type { PreloadConfig, ReplaySummary } from "../replay/preload-contract";

/** What the end uses of the preload. */
export interface FinishHost {
  readonly cfg: PreloadConfig;
  readonly rt: Runtime;
  readonly problems: string[];
  readonly uncaptured: ReadonlySet<string>;
  /** A declared tool that stopped the program, if any. */
  toolFailure(): string | undefined;
  /** Declared tool modules the program never loaded, as problems. */
  unloadedTools(): string[];
}

/** Notes the commands of child processes the program starts (not an MCP stdio server's). */
export function watchChildren(children: string[]): void {
  const proto = ChildProcess.prototype as unknown as { spawn: (o: { file?: string; args?: string[] }) => unknown };
  const spawn = proto.spawn;
  proto.spawn = function (o) {
    const stack = new Error().stack ?? "";
    // an MCP stdio server: its tool calls are intercepted in this process
    if (!/[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(stack)) children.push([o?.file, ...(o?.args ?? []).slice(1)].filter(Boolean).join(" ").slice(0, 200));
    return spawn.call(this, o);
  };
}

/** At exit: run.end (recording) or the replay's summary for the engine. */
export function finish(host: FinishHost, children: readonly string[], code: number): void {
  const failure = host.toolFailure();
  host.problems.push(...host.unloadedTools());
  const outcome = {
    exit_code: code,
    ...(failure ? { tool_error: failure } : {}),
    ...(host.uncaptured.size ? { uncaptured_tool_calls: [...host.uncaptured].sort() } : {}),
    ...(children.length ? { child_processes: children } : {}),
    ...(host.problems.length ? { problems: host.problems } : {}),
  };
  const replay = host.cfg.replay;
  if (replay) {
    const summary: ReplaySummary = {
      exit_code: code,
      actions: host.rt.actions.map((a) => ({ seq: a.seq, agent: a.agent, tool: a.tool, args: a.args, result: a.result, mode: a.mode, status: a.status })),
      stats: { ...host.rt.stats },
      problems: [...host.problems, ...children.map((c) => `the program started a child process (${c}), which a replay can't follow`)],
      uncaptured: [...host.uncaptured],
      ...(host.rt.opts.sink instanceof MemorySink ? { trace: memoryTrace(host.rt.opts.sink.events, host.rt.opts.sink.blobs) } : {}),
    };
    try {
      fs.writeFileSync(replay.out, JSON.stringify(summary));
    } catch {
      /* the engine reports the missing summary */
    }
    return;
  }
  try {
    void host.rt.finish(outcome);
  } catch {
    /* the run folder went away */
  }
}
