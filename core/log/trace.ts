/**
 * What a replay is compared on: each agent's decisions (their outputs), tool calls (tool and
 * arguments) and messages (recipient and content), in order. A program replayed in another
 * process (a recorded command under the preload) reports this trace back, so `causeway replay`
 * compares it with the recording exactly as it compares an in-process replay.
 */
import { canonical } from "./hash";

export interface TraceEntry {
  seq: number;
  agent: string;
  type: "decision" | "action" | "message";
  /** The compared content: the output, `tool(args)`, or `→to: content` (canonical JSON). */
  sig: string;
}

/** Ids a provider makes up for each answer (a tool call's `call_…`, `toolu_…`, `chatcmpl-…`): not what a replay is compared on. */
const MINTED = /^(?:call|toolu|chatcmpl|msg|resp|fc|run|rs|item)[-_][A-Za-z0-9_-]{6,}$/;

/** A decision's output with the provider's minted ids blanked, as canonical JSON. */
function comparable(json: string): string {
  if (!json.includes("_") && !json.includes("-")) return json;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return json;
  }
  const blank = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(blank);
    if (x && typeof x === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, y] of Object.entries(x)) o[k] = typeof y === "string" && /(?:^|_)id$/.test(k) && MINTED.test(y) ? "…" : blank(y);
      return o;
    }
    return x;
  };
  return canonical(blank(v));
}

/** The trace of a run's events; `value` gives the canonical JSON a ref stands for. */
export function traceOf(events: readonly Record<string, unknown>[], value: (ref: unknown) => string): TraceEntry[] {
  const out: TraceEntry[] = [];
  for (const e of events) {
    if (e.type !== "decision" && e.type !== "action" && e.type !== "message") continue;
    const sig =
      e.type === "decision"
        ? comparable(value(e.output))
        : e.type === "action"
          ? `${String(e.tool)}(${value(e.args_ref)})`
          : `→${String(e.to)}: ${value(e.ref)}`;
    out.push({ seq: Number(e.seq), agent: String(e.agent), type: e.type, sig });
  }
  return out;
}

/** The trace of events held in memory with their blobs. */
export function memoryTrace(events: readonly Record<string, unknown>[], blobs: ReadonlyMap<string, unknown>): TraceEntry[] {
  return traceOf(events, (ref) => (typeof ref === "string" && blobs.has(ref) ? canonical(blobs.get(ref)) : ""));
}
