/**
 * Reach computed for every node in one pass over the graph, instead of one breadth-first search
 * per node: in a run whose calls all sit downstream of one long chain (agents passing work along),
 * a search per call is quadratic — 20,000 events took minutes. Each node's set is the union of its
 * neighbours' sets, visited in topological order (ancestors) or its reverse (descendants), as bits
 * over a small label space the caller chooses (the nodes it wants to name, or tool names). A set is
 * dropped once every node that reads it has, unless the caller keeps it.
 *
 * Observed edges run forward in the log, so the graph is a DAG; a damaged or hostile log can make
 * a cycle, and then there is no order: {@link closure} returns null and callers search per node.
 */
import type { Evidence, GNode, Graph } from "./graph";

/** A set of labels 0…width-1. */
export class Bits {
  constructor(readonly words: Uint32Array) {}
  static empty(width: number): Bits {
    return new Bits(new Uint32Array((width + 31) >>> 5));
  }
  has(i: number): boolean {
    return i >= 0 && (this.words[i >>> 5] & (1 << (i & 31))) !== 0;
  }
  add(i: number): void {
    this.words[i >>> 5] |= 1 << (i & 31);
  }
  /** Calls fn with every label in the set, in increasing order. */
  forEach(fn: (i: number) => void): void {
    const w = this.words;
    for (let k = 0; k < w.length; k++) {
      let x = w[k];
      while (x !== 0) {
        const low = x & -x;
        fn((k << 5) + 31 - Math.clz32(low));
        x ^= low;
      }
    }
  }
}

/** Nodes in an order where every edge of the given evidence runs forward, or null when they make a cycle. */
export function topoOrder(g: Graph, evidence: readonly Evidence[]): GNode[] | null {
  const indeg = new Map<string, number>();
  for (const id of g.nodes.keys()) indeg.set(id, g.inEdges(id, evidence).length);
  const out: GNode[] = [];
  for (const n of g.nodes.values()) if (indeg.get(n.id) === 0) out.push(n);
  for (let i = 0; i < out.length; i++) {
    for (const e of g.outEdges(out[i].id, evidence)) {
      const d = indeg.get(e.dst)! - 1;
      indeg.set(e.dst, d);
      if (d === 0) out.push(g.nodes.get(e.dst)!);
    }
  }
  return out.length === g.nodes.size ? out : null;
}

export interface ClosureOptions {
  /** "up": ancestors (over in-edges); "down": descendants (over out-edges). */
  direction: "up" | "down";
  evidence: readonly Evidence[];
  /** Number of labels. */
  width: number;
  /** The label a node contributes to the sets it reaches, or -1 for none. */
  labelOf: (n: GNode) => number;
  /** Nodes whose sets are returned. */
  keep: (n: GNode) => boolean;
}

/**
 * For every kept node, the labels of the nodes it reaches (itself excluded, as Graph.ancestors and
 * Graph.descendants minus the start). Null when the edges make a cycle.
 */
export function closure(g: Graph, o: ClosureOptions): Map<string, Bits> | null {
  const order = topoOrder(g, o.evidence);
  if (!order) return null;
  if (o.direction === "down") order.reverse();
  const up = o.direction === "up";
  const from = (id: string) => (up ? g.inEdges(id, o.evidence).map((e) => e.src) : g.outEdges(id, o.evidence).map((e) => e.dst));
  // how many nodes still have to read each node's set
  const readers = new Map<string, number>();
  for (const n of order) readers.set(n.id, up ? g.outEdges(n.id, o.evidence).length : g.inEdges(n.id, o.evidence).length);
  const sets = new Map<string, Bits>();
  const kept = new Map<string, Bits>();
  const release = (p: string) => {
    const left = readers.get(p)! - 1;
    readers.set(p, left);
    if (left === 0) sets.delete(p);
  };
  for (const n of order) {
    const parents = from(n.id);
    const keep = o.keep(n);
    if (!keep && readers.get(n.id) === 0) {
      parents.forEach(release); // no one reads this node's set: it is not built
      continue;
    }
    // the set of a parent only this node still reads, and no caller keeps, becomes this node's
    const last = parents.find((p) => !kept.has(p) && readers.get(p) === parents.filter((q) => q === p).length);
    const s = last === undefined ? Bits.empty(o.width) : sets.get(last)!;
    for (const p of parents) {
      const a = s.words;
      const b = sets.get(p)!.words;
      for (let k = 0; k < a.length; k++) a[k] |= b[k];
      const l = o.labelOf(g.nodes.get(p)!);
      if (l >= 0) s.add(l);
      release(p);
    }
    if (keep) kept.set(n.id, s);
    if (readers.get(n.id)! > 0) sets.set(n.id, s);
  }
  return kept;
}
