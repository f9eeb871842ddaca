/**
 * The first view of a big graph: instead of every node (a run of 1,500 events draws ~1,500 nodes
 * and ~5,000 edges, a smear when fitted to the screen), one node per group, expanded on demand:
 *   agent    an agent's model calls and tool calls;
 *   channel  the messages from one agent to another;
 *   source   the inputs of one source family and trust ("inbox:* · untrusted"); the task stays alone.
 * Edges between groups are merged (one edge per pair of groups, with how many it stands for).
 * A selected node's lineage (what it came from and what it led to, nearest first, up to a cap)
 * is drawn node by node, so the selected action and its path are in focus while the rest of the
 * run stays grouped. Pure: the Graph screen turns the result into Cytoscape elements.
 */
import type { RunGraph } from "../../core/analysis/types";
import type { GEdge, GNode } from "../../core/graph/graph";

/** At most this many nodes of a selected node's lineage are drawn one by one. */
export const LINEAGE_MAX = 240;

export interface ViewNode {
  /** The graph node's id, or "group:<key>" for a group. */
  id: string;
  group: GroupInfo | null;
  /** Event order, for the layout: the group's first member. */
  seq: number;
}

export interface GroupInfo {
  key: string;
  kind: "agent" | "channel" | "source";
  label: string;
  members: string[];
  trust?: string;
  /** A member is a flagged (high-alert) tool call / a sensitive one. */
  flagged: boolean;
  sensitive: boolean;
}

export interface ViewEdge {
  src: string;
  dst: string;
  /** Indices into g.graph.edges this edge stands for. */
  members: number[];
  /** The strongest evidence among the members: tested > observed > inferred. */
  evidence: GEdge["evidence"];
  /** The causal tested member, if any (its effect labels the edge). */
  causal?: number;
}

export interface GraphView {
  nodes: ViewNode[];
  edges: ViewEdge[];
  /** The view node drawing each graph node (itself, or its group). */
  viewOf: Map<string, string>;
  groups: Map<string, GroupInfo>;
}

/** The group a node belongs to (null: always drawn alone). */
export function groupKey(n: GNode): { key: string; kind: GroupInfo["kind"]; label: string } | null {
  if (n.type === "input") {
    if (n.kind === "task") return null;
    const family = n.label.includes(":") ? `${n.label.slice(0, n.label.indexOf(":"))}:*` : n.label;
    const trust = n.trust === "untrusted" ? "untrusted" : "trusted";
    return { key: `source:${trust}:${family}`, kind: "source", label: family };
  }
  if (n.type === "message") return { key: `channel:${n.agent}->${n.to ?? "?"}`, kind: "channel", label: `${n.agent} \u2192 ${n.to ?? "?"}` };
  return { key: `agent:${n.agent}`, kind: "agent", label: n.agent };
}

/**
 * Nearest-first lineage of `id` along `edges`: `id`, then upstream and downstream nodes in
 * breadth-first order (alternating one level up, one level down), at most `max` in all.
 */
export function lineage(edges: readonly GEdge[], id: string, max = LINEAGE_MAX): string[] {
  const inn = new Map<string, string[]>();
  const out = new Map<string, string[]>();
  for (const e of edges) {
    (inn.get(e.dst) ?? inn.set(e.dst, []).get(e.dst)!).push(e.src);
    (out.get(e.src) ?? out.set(e.src, []).get(e.src)!).push(e.dst);
  }
  const seen = new Set([id]);
  const order = [id];
  let up = [id];
  let down = [id];
  while ((up.length || down.length) && order.length < max) {
    const step = (front: string[], adj: Map<string, string[]>): string[] => {
      const next: string[] = [];
      for (const f of front) {
        for (const n of adj.get(f) ?? []) {
          if (seen.has(n) || order.length >= max) continue;
          seen.add(n);
          order.push(n);
          next.push(n);
        }
      }
      return next;
    };
    up = step(up, inn);
    down = step(down, out);
  }
  return order;
}

/**
 * The grouped view: groups not in `expanded` are drawn as one node (a group of one is drawn as
 * its member), except the members of `focus` (a node's lineage), drawn one by one.
 */
export function groupedView(rg: RunGraph, visible: (e: GEdge) => boolean, expanded: ReadonlySet<string>, focus: readonly string[] = []): GraphView {
  const alone = new Set(focus);
  const byKey = new Map<string, GroupInfo>();
  const keyOf = new Map<string, string>();
  for (const n of rg.graph.nodes) {
    const g = groupKey(n);
    if (!g) continue;
    keyOf.set(n.id, g.key);
    let info = byKey.get(g.key);
    if (!info) {
      info = {
        key: g.key,
        kind: g.kind,
        label: g.label,
        members: [],
        trust:
          n.type === "input" ? (n.trust === "untrusted" ? "untrusted" : "trusted") : n.type === "message" && n.trust === "untrusted" ? "untrusted" : undefined,
        flagged: false,
        sensitive: false,
      };
      byKey.set(g.key, info);
    }
    info.members.push(n.id);
    if (n.type === "message" && n.trust === "untrusted") info.trust = "untrusted";
    if (n.type === "action") {
      const a = rg.marks[n.id];
      if (a?.high) info.flagged = true;
      if (a?.sensitive) info.sensitive = true;
    }
  }
  const viewOf = new Map<string, string>();
  const groups = new Map<string, GroupInfo>();
  const nodes: ViewNode[] = [];
  const left = new Map<string, number>(); // members of each group not drawn alone
  for (const [k, info] of byKey) left.set(k, info.members.length - countIn(info.members, alone));
  for (const n of rg.graph.nodes) {
    const key = keyOf.get(n.id);
    const info = key ? byKey.get(key)! : undefined;
    if (!info || alone.has(n.id) || expanded.has(info.key) || left.get(info.key)! <= 1) {
      viewOf.set(n.id, n.id);
      nodes.push({ id: n.id, group: null, seq: n.seq });
      continue;
    }
    const gid = `group:${info.key}`;
    viewOf.set(n.id, gid);
    if (!groups.has(gid)) {
      // the group node stands for the members not drawn on their own
      const members = info.members.filter((m) => !alone.has(m));
      const g = { ...info, members };
      groups.set(gid, g);
      nodes.push({ id: gid, group: g, seq: n.seq });
    }
  }
  const merged = new Map<string, ViewEdge>();
  const rank = { inferred: 0, observed: 1, tested: 2 } as const;
  rg.graph.edges.forEach((e, i) => {
    if (!visible(e)) return;
    const a = viewOf.get(e.src);
    const b = viewOf.get(e.dst);
    if (!a || !b || a === b) return;
    const k = `${a}\u0000${b}`;
    let v = merged.get(k);
    if (!v) {
      v = { src: a, dst: b, members: [], evidence: e.evidence };
      merged.set(k, v);
    }
    v.members.push(i);
    if (rank[e.evidence] > rank[v.evidence]) v.evidence = e.evidence;
    if (
      e.evidence === "tested" &&
      e.verdict === "causal" &&
      (v.causal === undefined || Math.abs(e.effect ?? 0) > Math.abs(rg.graph.edges[v.causal].effect ?? 0))
    )
      v.causal = i;
  });
  return { nodes, edges: [...merged.values()], viewOf, groups };
}

function countIn(xs: readonly string[], set: ReadonlySet<string>): number {
  let n = 0;
  for (const x of xs) if (set.has(x)) n++;
  return n;
}

/** A group node's canvas label: its name and what it holds. */
export function groupLabel(g: GroupInfo): string {
  const n = g.members.length;
  if (g.kind === "source") return `${g.label} \u00b7 ${n} ${g.trust === "untrusted" ? "untrusted " : ""}input${n === 1 ? "" : "s"}`;
  if (g.kind === "channel") return `${g.label} \u00b7 ${n} message${n === 1 ? "" : "s"}`;
  return `${g.label} \u00b7 ${n} call${n === 1 ? "" : "s"}`;
}
