/**
 * Which untrusted inputs reached each event, computed in one forward pass over the run instead of
 * one graph search per tool call. It follows exactly the graph's observed edges (context items,
 * decision → call / message, identical content reappearing), so it agrees with
 * `graph.ancestors(…)` restricted to untrusted inputs; events that reach the same inputs share one
 * array, so a run of 100,000 events costs little memory.
 */
import type { RunModel } from "../graph/model";
import { isUntrusted } from "../graph/lineage";

const NONE: readonly string[] = Object.freeze([]);
const PRODUCED = ["ref", "output", "result_ref"] as const;

export class UntrustedReach {
  /** event id → ids of the untrusted input events upstream (itself included), in seq order */
  private readonly up = new Map<string, readonly string[]>();
  /** untrusted inputs: the only events whose list holds themselves */
  private readonly selfIn = new Set<string>();

  constructor(m: RunModel) {
    const producer = new Map<string, string>(); // first event that brought each ref into the run
    const seqOf = (id: string) => m.byId.get(id)?.seq ?? 0;
    const union = (lists: (readonly string[] | undefined)[]): readonly string[] => {
      let best: readonly string[] = NONE;
      let merged: Set<string> | undefined;
      for (const l of lists) {
        if (!l || !l.length || l === best) continue;
        if (!best.length) {
          best = l;
          continue;
        }
        merged ??= new Set(best);
        for (const x of l) merged.add(x);
      }
      if (!merged || merged.size === best.length) return best;
      return [...merged].sort((a, b) => seqOf(a) - seqOf(b));
    };
    for (const e of m.events) {
      if (typeof e.id !== "string") continue;
      let list: readonly string[];
      switch (e.type) {
        case "input": {
          const p = typeof e.ref === "string" ? producer.get(e.ref) : undefined;
          const from = p && p !== e.id ? this.up.get(p) : undefined;
          const untrusted = isUntrusted({ trust: e.trust });
          list = untrusted ? union([from, [e.id]]) : (from ?? NONE);
          if (untrusted && !this.up.has(e.id)) this.selfIn.add(e.id);
          break;
        }
        case "decision": {
          const ctx = Array.isArray(e.context) ? (e.context as { from_event?: string | null; ref?: string }[]) : [];
          list = union(
            ctx.map((c) => {
              const src = c?.from_event ?? (typeof c?.ref === "string" ? producer.get(c.ref) : undefined);
              return src ? this.up.get(src) : undefined;
            }),
          );
          break;
        }
        case "action":
        case "message":
          list = typeof e.decision === "string" ? (this.up.get(e.decision) ?? NONE) : NONE;
          break;
        default:
          continue;
      }
      if (!this.up.has(e.id)) this.up.set(e.id, list);
      for (const k of PRODUCED) {
        const r = e[k];
        if (typeof r === "string" && !producer.has(r)) producer.set(r, e.id);
      }
    }
  }

  /** Ids of the untrusted input events upstream of an event, in seq order (the event itself excluded). */
  of(eventId: string): readonly string[] {
    const l = this.up.get(eventId) ?? NONE;
    return this.selfIn.has(eventId) ? l.filter((x) => x !== eventId) : l;
  }
}
