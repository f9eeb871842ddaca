/**
 * What the recording says about handoffs between agents, before any replay, for Find the cause's
 * chain (docs/statistics.md, "Handoff chains"): which suspects carry an earlier agent's words (a
 * message, or an input whose text carries an earlier output: exact, `substring` or `inferred`),
 * which suspects of the sending agent lie upstream of such a carrier, and which handoffs lie on
 * the recorded path from a root input to the action. Recorded text is untrusted: it is only
 * compared (core/adapters/handoffs.ts, linear), never run or followed as an address.
 */
import { buildGraph, nodeId, targetHits, textOf, Graph, type GNode } from "../graph/graph";
import { findCarried } from "../adapters/handoffs";
import type { ReplayContext } from "./context";

/** The suspect id of a graph node: `input:source` (not the task) or `msg:from->to`; null for the rest. */
function specOf(ctx: ReplayContext, n: GNode): string | null {
  const ev = ctx.model.byId.get(n.eventId);
  if (!ev) return null;
  if (n.type === "input" && ev.kind !== "task") return `input:${String(ev.source)}`;
  if (n.type === "message") return `msg:${String(ev.agent)}->${String(ev.to)}`;
  return null;
}

export class HandoffMap {
  private readonly g: Graph;
  private readonly goal: string;
  /** Every node upstream of the action (observed edges only). */
  private readonly upstreamOfAction: Set<string>;

  constructor(
    private readonly ctx: ReplayContext,
    target: string,
  ) {
    this.g = buildGraph(ctx.model, { infer: false, reuse: false });
    const hits = targetHits(ctx.model, target);
    this.goal = hits.length ? nodeId(hits[0].id) : "";
    this.upstreamOfAction = this.goal ? this.g.ancestors(this.goal) : new Set();
  }

  /** The graph nodes a suspect id names, upstream of the action, in recorded order. */
  private nodesOf(spec: string): GNode[] {
    return [...this.upstreamOfAction]
      .map((id) => this.g.nodes.get(id)!)
      .filter((n) => specOf(this.ctx, n) === spec)
      .sort((a, b) => a.seq - b.seq);
  }

  /** The earlier decision (of another agent) whose output an input's text carries, if any. */
  private carriedDecision(input: GNode): GNode | undefined {
    const ev = this.ctx.model.byId.get(input.eventId)!;
    const block = textOf(this.ctx.model.value(ev.ref));
    if (!block) return undefined;
    const earlier = this.ctx.model.decisions.filter((d) => d.seq < input.seq && String(d.agent) !== input.agent);
    const texts = earlier.map((d) => ({ text: textOf(this.ctx.model.value(d.output)), of: d }));
    const exact = texts.find((t) => t.text.length > 0 && t.text === block);
    const hit = exact?.of ?? findCarried(block, texts)?.of;
    return hit ? this.g.nodes.get(nodeId(hit.id)) : undefined;
  }

  /** The sending agent's own suspects (its inputs, the messages it received) upstream of `decision`. */
  private suspectsFeeding(decision: GNode): string[] {
    const out: string[] = [];
    const nodes = [...this.g.ancestors(decision.id)].map((id) => this.g.nodes.get(id)!).sort((a, b) => a.seq - b.seq);
    for (const n of nodes) {
      const mine = (n.type === "input" && n.agent === decision.agent) || (n.type === "message" && n.to === decision.agent);
      const spec = mine ? specOf(this.ctx, n) : null;
      if (spec && !out.includes(spec)) out.push(spec);
    }
    // what carries untrusted words first: the likelier way the words came in
    const untrusted = (s: string) => nodes.some((n) => specOf(this.ctx, n) === s && n.trust === "untrusted");
    return [...out.filter(untrusted), ...out.filter((s) => !untrusted(s))];
  }

  /**
   * When `spec` carries an earlier agent's words: that agent's suspects upstream of the words it
   * sent (untrusted first). Undefined when `spec` carries nobody's words.
   */
  upstream(spec: string): string[] | undefined {
    const out: string[] = [];
    for (const n of this.nodesOf(spec)) {
      const senders =
        n.type === "message"
          ? this.g
              .inEdges(n.id, ["observed"])
              .map((e) => this.g.nodes.get(e.src)!)
              .filter((s) => s.type === "decision")
          : [this.carriedDecision(n)].filter((d): d is GNode => !!d);
      for (const d of senders) for (const s of this.suspectsFeeding(d)) if (s !== spec && !out.includes(s)) out.push(s);
    }
    return out.length ? out : undefined;
  }

  /**
   * The handoffs (message ids) on the shortest recorded path from `spec` to the action, root →
   * action, when one of them was found in the prompt's text rather than sent by the program (it
   * has `carried` evidence): such a hop is confirmed by a replay test. Undefined otherwise.
   */
  downstream(spec: string): string[] | undefined {
    let best: GNode[] | undefined;
    for (const n of this.nodesOf(spec)) {
      const parent = this.g.descendants([n.id]);
      if (!parent.has(this.goal)) continue;
      const path = Graph.path(parent, this.goal).map((id) => this.g.nodes.get(id)!);
      if (!best || path.length < best.length) best = path;
    }
    const messages = (best ?? []).slice(1).filter((n) => n.type === "message");
    if (!messages.some((n) => this.ctx.model.byId.get(n.eventId)?.carried)) return undefined;
    const specs: string[] = [];
    for (const n of messages) {
      const s = specOf(this.ctx, n)!;
      if (s !== spec && !specs.includes(s)) specs.push(s);
    }
    return specs.length ? specs : undefined;
  }
}
