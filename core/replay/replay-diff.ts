/**
 * Replay and diff: re-runs the program once from the tape and aligns what it did with the original.
 */
import { MemorySink } from "../log/writer";
import { memoryTrace, traceOf, type TraceEntry } from "../log/trace";
import { parseIntervention } from "../specs/grammar";
import type { ActionSummary } from "../sdk/runtime-options";
import { ReplayError, type ReplayContext } from "./context";

export interface ReplayDiff {
  at: [string, string, number];
  change: "only-in-original" | "only-in-replay" | "different";
  original?: string;
  replay?: string;
}

/**
 * Re-runs the program once from the tape (the original seed unless given, optionally with
 * interventions) and aligns its decisions, tool calls and messages with the original by
 * (agent, type, ordinal).
 */
export async function replayAndDiff(
  ctx: ReplayContext,
  opts: { seed?: number; remove?: string[] } = {},
): Promise<{ diffs: ReplayDiff[]; actions: ActionSummary[]; offTape: number; modelCalls: number }> {
  const sink = new MemorySink();
  const seed = opts.seed ?? Number(ctx.model.start.seed ?? 0);
  const r = await ctx.system.run({
    seed,
    runId: `${ctx.runId}-replay`,
    sink,
    chain: false,
    captureSites: false,
    tape: ctx.tape,
    interventions: (opts.remove ?? []).map(parseIntervention),
    liveTools: ctx.liveTools,
    task: ctx.task,
    trace: true,
  });
  if (r.error !== undefined) throw new ReplayError(`the program failed in replay: ${r.error}`);
  // entries keyed by (agent, type, ordinal): the n-th decision of an agent against its n-th
  const keyed = (trace: readonly TraceEntry[]) => {
    const counts = new Map<string, number>();
    const out = new Map<string, { seq: number; sig: string }>();
    for (const e of trace) {
      const k = `${e.agent}\u0000${e.type}`;
      const i = counts.get(k) ?? 0;
      counts.set(k, i + 1);
      out.set(`${k}\u0000${i}`, { seq: e.seq, sig: e.sig });
    }
    return out;
  };
  const a = keyed(traceOf(ctx.model.events, (ref) => ctx.model.canonical(ref)));
  // a program replayed in its own process reports its trace; an in-process one leaves its events in the sink
  const b = keyed(r.trace ?? memoryTrace(sink.events, sink.blobs));
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (a.get(x) ?? b.get(x))!.seq - (a.get(y) ?? b.get(y))!.seq);
  const diffs: ReplayDiff[] = [];
  for (const k of keys) {
    const [agent, type, i] = k.split("\u0000");
    const x = a.get(k);
    const y = b.get(k);
    const at: [string, string, number] = [agent, type, Number(i)];
    if (!x) diffs.push({ at, change: "only-in-replay", replay: y!.sig.slice(0, 200) });
    else if (!y) diffs.push({ at, change: "only-in-original", original: x.sig.slice(0, 200) });
    else if (x.sig !== y.sig) diffs.push({ at, change: "different", original: x.sig.slice(0, 200), replay: y.sig.slice(0, 200) });
  }
  return { diffs, actions: r.actions, offTape: r.actions.filter((x) => x.mode !== "tape").length, modelCalls: r.stats.modelCalls };
}
