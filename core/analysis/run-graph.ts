/**
 * The Graph screen's part of an investigation (types.ts RunGraph), and the check that two parts
 * draw the same graph (so the webview keeps a drawn graph when the rest of its run arrives).
 */
import type { Investigation, RunGraph } from "./types";

export function runGraphOf(inv: Pick<Investigation, "summary" | "graph" | "actions">): RunGraph {
  const marks: RunGraph["marks"] = Object.create(null);
  for (const [node, a] of Object.entries(inv.actions)) marks[node] = { sensitive: !!a.sensitive, blocked: a.blocked, high: a.alerts.includes("high") };
  return { summary: inv.summary, graph: inv.graph, marks };
}

/** The same nodes, edges (with their evidence and test results) and marks: one drawing. */
export function sameGraph(a: RunGraph, b: RunGraph): boolean {
  if (a === b || a.graph === b.graph) return true;
  const x = a.graph;
  const y = b.graph;
  if (x.nodes.length !== y.nodes.length || x.edges.length !== y.edges.length || x.inferSkipped !== y.inferSkipped) return false;
  for (let i = 0; i < x.nodes.length; i++) {
    const [m, n] = [x.nodes[i], y.nodes[i]];
    if (m.id !== n.id || m.type !== n.type || m.label !== n.label || m.trust !== n.trust) return false;
  }
  for (let i = 0; i < x.edges.length; i++) {
    const [e, f] = [x.edges[i], y.edges[i]];
    if (
      e.src !== f.src ||
      e.dst !== f.dst ||
      e.evidence !== f.evidence ||
      e.verdict !== f.verdict ||
      e.effect !== f.effect ||
      e.role !== f.role ||
      e.n !== f.n ||
      e.kind !== f.kind ||
      e.target !== f.target ||
      e.intervention !== f.intervention ||
      String(e.ci) !== String(f.ci)
    )
      return false;
  }
  const ka = Object.keys(a.marks);
  if (ka.length !== Object.keys(b.marks).length) return false;
  for (const k of ka) {
    const [p, q] = [a.marks[k], b.marks[k]];
    if (!q || p.sensitive !== q.sensitive || p.blocked !== q.blocked || p.high !== q.high) return false;
  }
  return true;
}
