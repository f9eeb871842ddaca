/**
 * What the recording says about the suspects of Find the cause, before any replay: which inputs
 * lie upstream of the action, and how strongly the recorded evidence points at each (argument
 * provenance, wording reuse, distance). Evidence only orders the tests; it never blames.
 */
import { buildGraph, nodeId, targetHits } from "../graph/graph";
import { ProvenanceIndex } from "../analysis/provenance";
import { ReplayError, type ReplayContext } from "./context";
import type { SuspectEvidence } from "./attribute-types";

/** Every untrusted input upstream of the first action the target matches. */
export function defaultSuspects(ctx: ReplayContext, target: string): string[] {
  const hits = targetHits(ctx.model, target);
  if (!hits.length) throw new ReplayError(`the target ${JSON.stringify(target)} did not happen in this run`);
  const g = buildGraph(ctx.model, { infer: false, reuse: false });
  const anc = [...g.ancestors(nodeId(hits[0].id))].map((n) => g.nodes.get(n)!).sort((a, b) => a.seq - b.seq);
  const out: string[] = [];
  for (const n of anc) {
    const ev = ctx.model.byId.get(n.eventId)!;
    if (n.type === "input" && ev.kind !== "task" && ev.trust === "untrusted") {
      const spec = `input:${ev.source}`;
      if (!out.includes(spec)) out.push(spec);
    }
  }
  return out;
}

/**
 * Suspects upstream of the first action the target matches, of one kind, ranked by the recorded
 * evidence: argument provenance first (a value of the action's arguments found in the suspect,
 * weighted by how few recorded sources held it), then wording reuse, then a shorter path. Recorded evidence only orders the tests; it never blames.
 */
export function rankedSuspects(ctx: ReplayContext, target: string, kind: "untrusted" | "trusted" | "channels" | "all"): SuspectEvidence[] {
  const hits = targetHits(ctx.model, target);
  if (!hits.length) throw new ReplayError(`the target ${JSON.stringify(target)} did not happen in this run`);
  const action = hits[0];
  const g = buildGraph(ctx.model, { infer: false, reuse: true });
  const goal = nodeId(action.id);
  const anc = [...g.ancestors(goal)].map((n) => g.nodes.get(n)!).sort((a, b) => a.seq - b.seq);
  const prov = new ProvenanceIndex(ctx.model).forAction(action);
  // shortest path (in edges) from every ancestor to the action: BFS backwards over observed edges
  const dist = new Map<string, number>([[goal, 0]]);
  const queue = [goal];
  for (let q = 0; q < queue.length; q++) {
    for (const e of g.inEdges(queue[q], ["observed"])) {
      if (!dist.has(e.src)) {
        dist.set(e.src, dist.get(queue[q])! + 1);
        queue.push(e.src);
      }
    }
  }
  const out = new Map<string, SuspectEvidence>();
  for (const n of anc) {
    const ev = ctx.model.byId.get(n.eventId)!;
    let spec: string | null = null;
    let k: SuspectEvidence["kind"] = "input";
    if (n.type === "input" && ev.kind !== "task") {
      const untrusted = ev.trust === "untrusted";
      if (kind === "all" || (kind === "untrusted" && untrusted) || (kind === "trusted" && !untrusted)) spec = `input:${ev.source}`;
    } else if (n.type === "message" && (kind === "channels" || kind === "all")) {
      spec = `msg:${ev.agent}->${ev.to}`;
      k = "message";
    }
    if (!spec) continue;
    const held = prov.filter((r) => r.sources.some((src) => src.node === n.id));
    const provenance = held.length;
    // how many distinct recorded sources held each value (the same input read twice is one)
    const holders = held.map((r) => new Set(r.sources.map((src) => src.label)).size);
    const exclusive = holders.reduce((sum, k) => sum + 1 / Math.max(1, k), 0);
    const sole = holders.filter((k) => k === 1).length;
    const reuse = Math.max(0, ...g.outEdges(n.id, ["observed"]).map((e) => e.reuse ?? 0));
    const distance = dist.get(n.id) ?? Infinity;
    const score = 2 * exclusive + reuse + (Number.isFinite(distance) && distance > 0 ? 1 / distance : 0);
    const prev = out.get(spec);
    if (!prev || score > prev.score)
      out.set(spec, {
        spec,
        kind: k,
        trust: String(n.trust ?? ev.trust ?? ""),
        provenance: prev ? Math.max(prev.provenance, provenance) : provenance,
        exclusive: Math.round(exclusive * 1000) / 1000,
        sole: prev ? Math.max(prev.sole, sole) : sole,
        reuse,
        distance,
        score: Math.round(score * 1000) / 1000,
      });
  }
  // stable: equal scores keep the order of the recording
  return [...out.values()].sort((a, b) => b.score - a.score);
}

/**
 * The suspect the recorded evidence singles out, if any: the only one of a phase's suspects that
 * held an argument value of the action no other recorded source held (the outside address only the
 * supplier note carries). Ties (two such suspects) or none: no lead.
 */
export function leadSuspect(ev: SuspectEvidence[]): string | undefined {
  const sole = ev.filter((e) => e.sole >= 1);
  return sole.length === 1 ? sole[0].spec : undefined;
}
