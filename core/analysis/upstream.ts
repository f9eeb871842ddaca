/**
 * Why, part one: the upstream of each call (the inputs and messages an intervention can remove
 * that its model call saw), computed once per model call.
 */
import type { ActionEvent } from "../log/events";
import { nodeId, type GNode, type Graph } from "../graph/graph";
import { Bits, closure } from "../graph/closure";
import type { RunModel } from "../graph/model";
import type { Candidate } from "./types";

/** A call's upstream: the ancestors of its model call, as positions in {@link Upstream.members}. */
export interface Up {
  anc: Bits;
  /** The candidate rows when no test names the call (shared by the calls of one model call). */
  untested?: { rows: Candidate[]; total: number };
}

/**
 * Upstream of each call, shared by the calls of one model call (they have the same upstream). The
 * ancestor sets of every model call are computed in one pass over the graph (core/graph/closure.ts)
 * as bits over the nodes an intervention can remove, in seq order; a graph with a cycle (a damaged
 * log) falls back to one search per model call.
 */
export class Upstream {
  /** Input, message and action nodes in seq order: the positions of an ancestor set. */
  readonly members: GNode[];
  private readonly pos = new Map<string, number>();
  /** Per member: the intervention that removes it, as an index into specs; -1 for calls and the task. */
  readonly specOf: Int32Array;
  readonly specs: string[] = [];
  /** Per member: how much of its wording the next model output reused (its observed edges' most). */
  readonly reuse: Float64Array;
  /** Per spec: the stamp of the last scan that saw it. */
  private readonly seen: Int32Array;
  private stamp = 0;
  private sets: Map<string, Bits> | null | undefined;
  private readonly cache = new Map<string, Up>();
  constructor(
    private m: RunModel,
    private g: Graph,
  ) {
    this.members = [...g.nodes.values()].filter((n) => n.type !== "decision").sort((x, y) => x.seq - y.seq);
    this.specOf = new Int32Array(this.members.length).fill(-1);
    this.reuse = new Float64Array(this.members.length);
    const specIds = new Map<string, number>();
    this.members.forEach((n, i) => {
      this.pos.set(n.id, i);
      const ev = m.byId.get(n.eventId)!;
      let spec: string | null = null;
      if (n.type === "input" && ev.kind !== "task") spec = `input:${ev.source}`;
      else if (n.type === "message") spec = `msg:${ev.agent}->${ev.to}`;
      if (spec !== null) {
        let s = specIds.get(spec);
        if (s === undefined) {
          s = this.specs.length;
          specIds.set(spec, s);
          this.specs.push(spec);
        }
        this.specOf[i] = s;
      }
      for (const e of g.outEdges(n.id, ["observed"])) this.reuse[i] = Math.max(this.reuse[i], e.reuse ?? 0);
    });
    this.seen = new Int32Array(this.specs.length);
  }
  private keyOf(a: ActionEvent): string {
    return typeof a.decision === "string" && this.g.nodes.has(nodeId(a.decision)) ? nodeId(a.decision) : nodeId(a.id);
  }
  of(a: ActionEvent): Up {
    const key = this.keyOf(a);
    let hit = this.cache.get(key);
    if (!hit) {
      if (this.sets === undefined) {
        const keys = new Set(this.m.actions.map((x) => this.keyOf(x)));
        this.sets = closure(this.g, {
          direction: "up",
          evidence: ["observed"],
          width: this.members.length,
          labelOf: (n) => this.pos.get(n.id) ?? -1,
          keep: (n) => keys.has(n.id),
        });
      }
      let anc = this.sets?.get(key);
      if (!anc) {
        anc = Bits.empty(this.members.length);
        for (const id of this.g.ancestors(key)) if (this.pos.has(id)) anc.add(this.pos.get(id)!);
      }
      hit = { anc };
      this.cache.set(key, hit);
    }
    return hit;
  }
  has(anc: Bits, id: string): boolean {
    const i = this.pos.get(id);
    return i !== undefined && anc.has(i);
  }
  /** Calls fn with the member each distinct spec upstream is first seen at, in seq order. */
  eachSpec(anc: Bits, fn: (i: number, spec: number) => void): void {
    const stamp = ++this.stamp;
    anc.forEach((i) => {
      const s = this.specOf[i];
      if (s < 0 || this.seen[s] === stamp) return;
      this.seen[s] = stamp;
      fn(i, s);
    });
  }
}
