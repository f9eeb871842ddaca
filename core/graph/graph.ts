/**
 * The data-flow graph of a run, every edge graded by its evidence:
 *   observed  recorded at the time: X was in D's context, D asked for A, D's output was sent as M,
 *             identical content reappeared (a side channel made visible by hashing);
 *   inferred  a heuristic: text of X reappears in Y (word 5-gram overlap) with no recorded path;
 *   tested    measured: removing X in paired replays changed how often Y happened (tests.jsonl).
 * Tracing follows observed edges and answers "what could this have influenced"; only tested edges
 * answer "what did it influence".
 */
import { safeText } from "../log/sanitize";
import { parseIntervention, parseTarget, matchesTarget, removes, type ItemLike, type Target } from "../specs/grammar";
import type { ActionEvent, DecisionEvent, LoadedEvent } from "../log/events";
import type { TestRecord } from "../log/testslog";
import { RunModel } from "./model";
import { dumps } from "../log/pyjson";
import { lineageChains } from "./lineage";

export type Evidence = "observed" | "inferred" | "tested";
export type NodeType = "input" | "decision" | "action" | "message";

export interface GNode {
  id: string;
  type: NodeType;
  agent: string;
  seq: number;
  line: number;
  label: string;
  trust: string;
  kind?: string | null;
  to?: string | null;
  tool?: string;
  eventId: string;
}

export interface GEdge {
  src: string;
  dst: string;
  kind: string;
  evidence: Evidence;
  ref?: string;
  /** How much of the source's wording the decision's output reused (observed context edges). */
  reuse?: number;
  score?: number;
  shared?: number;
  effect?: number;
  ci?: [number, number];
  n?: number;
  verdict?: string;
  target?: string;
  intervention?: string;
  role?: string | null;
}

const ALL: readonly Evidence[] = ["observed", "inferred", "tested"];
const OBSERVED: readonly Evidence[] = ["observed"];

export function nodeId(eventId: string): string {
  return "ev:" + eventId;
}

export class Graph {
  readonly nodes = new Map<string, GNode>();
  readonly edges: GEdge[] = [];
  private readonly out = new Map<string, GEdge[]>();
  private readonly in = new Map<string, GEdge[]>();
  private readonly keys = new Set<string>();
  /** Inferred edges were not computed (the run is too large, or inference was off). */
  inferSkipped = false;

  addEdge(e: GEdge): void {
    if (e.src === e.dst || !this.nodes.has(e.src) || !this.nodes.has(e.dst)) return;
    const key = `${e.src}|${e.dst}|${e.kind}|${e.evidence}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.edges.push(e);
    (this.out.get(e.src) ?? this.out.set(e.src, []).get(e.src)!).push(e);
    (this.in.get(e.dst) ?? this.in.set(e.dst, []).get(e.dst)!).push(e);
  }

  outEdges(n: string, evidence: readonly Evidence[] = ALL): GEdge[] {
    return (this.out.get(n) ?? []).filter((e) => evidence.includes(e.evidence));
  }

  inEdges(n: string, evidence: readonly Evidence[] = ALL): GEdge[] {
    return (this.in.get(n) ?? []).filter((e) => evidence.includes(e.evidence));
  }

  /** Breadth-first forward: node → the node it was first reached from (null for starts). */
  descendants(starts: Iterable<string>, evidence: readonly Evidence[] = OBSERVED): Map<string, string | null> {
    const parent = new Map<string, string | null>();
    const q: string[] = [];
    for (const s of starts) {
      if (this.nodes.has(s) && !parent.has(s)) {
        parent.set(s, null);
        q.push(s);
      }
    }
    for (let i = 0; i < q.length; i++) {
      for (const e of this.out.get(q[i]) ?? []) {
        if (!evidence.includes(e.evidence) || parent.has(e.dst)) continue;
        parent.set(e.dst, q[i]);
        q.push(e.dst);
      }
    }
    return parent;
  }

  ancestors(n: string, evidence: readonly Evidence[] = OBSERVED): Set<string> {
    const seen = new Set<string>();
    const q = [n];
    for (let i = 0; i < q.length; i++) {
      for (const e of this.in.get(q[i]) ?? []) {
        if (!evidence.includes(e.evidence) || seen.has(e.src)) continue;
        seen.add(e.src);
        q.push(e.src);
      }
    }
    return seen;
  }

  static path(parent: Map<string, string | null>, n: string): string[] {
    const out: string[] = [];
    let x: string | null | undefined = n;
    while (x) {
      out.push(x);
      x = parent.get(x);
    }
    return out.reverse();
  }

  toJSON(): { nodes: GNode[]; edges: GEdge[]; inferSkipped: boolean } {
    return { nodes: [...this.nodes.values()], edges: this.edges, inferSkipped: this.inferSkipped };
  }
}

function label(e: LoadedEvent): string {
  switch (e.type) {
    case "input":
      return safeText(e.source ?? "input");
    case "decision":
      return safeText(e.purpose || e.model || "decision");
    case "action":
      return safeText(e.tool);
    case "message":
      return `${e.agent} → ${e.to}`;
    default:
      return e.type;
  }
}

// ---------------------------------------------------------------------------------- text

const WORD = /[a-z0-9@._-]+/g;

/** Text of a value as the overlap heuristics read it: strings as they are, anything else as JSON. */
export function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "";
  try {
    return dumps(v, "file");
  } catch {
    return "";
  }
}

/** Word 5-grams of a text, lower-cased. */
export function shingles(text: string, n = 5): Set<string> {
  const w = text.toLowerCase().match(WORD) ?? [];
  const out = new Set<string>();
  for (let i = 0; i + n <= w.length; i++) out.add(w.slice(i, i + n).join(" "));
  return out;
}

/** Shared 5-grams over the smaller set. */
export function overlap(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let k = 0;
  for (const x of small) if (big.has(x)) k++;
  return k / small.size;
}

// ---------------------------------------------------------------------------------- build

export interface GraphOptions {
  /** Compute inferred (content-overlap) edges. Default true. */
  infer?: boolean;
  inferThreshold?: number;
  minShared?: number;
  /** Above this many nodes inferred edges are skipped (marked on the graph). Default 4000. */
  inferMaxNodes?: number;
  /** Compute how much of each context item a decision's output reused. Default true. */
  reuse?: boolean;
}

/** The item an intervention would match for a node of the original run. */
export function itemOfNode(m: RunModel, n: GNode): ItemLike | null {
  const e = m.byId.get(n.eventId);
  if (!e) return null;
  if (n.type === "input")
    return { kind: safeText(e.kind ?? "input"), source: safeText(e.source ?? ""), trust: safeText(e.trust ?? "trusted"), ref: safeText(e.ref ?? "") };
  if (n.type === "message") return { kind: "message", source: `${e.agent}->${e.to}`, trust: safeText(e.trust ?? "trusted"), ref: safeText(e.ref ?? "") };
  if (n.type === "action") return { kind: "result", source: safeText(e.tool), trust: "trusted", ref: safeText(e.result_ref ?? "") };
  return null;
}

/** Nodes of the original run an intervention spec would remove. Unparseable specs match nothing. */
export function nodesMatching(m: RunModel, g: Graph, spec: string): string[] {
  let iv;
  try {
    iv = parseIntervention(spec);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of g.nodes.values()) {
    const it = itemOfNode(m, n);
    if (it && removes([iv], it)) out.push(n.id);
  }
  return out;
}

/** The action events a target spec matches. Unparseable specs match nothing. */
export function targetHits(m: RunModel, spec: string | Target): ActionEvent[] {
  let t: Target;
  try {
    t = typeof spec === "string" ? parseTarget(spec) : spec;
  } catch {
    return [];
  }
  return m.actions.filter((a) => matchesTarget(t, { tool: a.tool, agent: a.agent, args: m.canonical(a.args_ref), result: m.canonical(a.result_ref) }));
}

export function buildGraph(m: RunModel, opts: GraphOptions = {}): Graph {
  const g = new Graph();
  const producer = new Map<string, string>(); // first event that brought each ref into the run
  for (const e of m.events) {
    if (e.type !== "input" && e.type !== "decision" && e.type !== "action" && e.type !== "message") continue;
    if (typeof e.id !== "string") continue;
    const id = nodeId(e.id);
    if (g.nodes.has(id)) continue;
    g.nodes.set(id, {
      id,
      type: e.type,
      agent: safeText(e.agent),
      seq: Number(e.seq),
      line: e.line,
      label: label(e),
      trust: safeText(e.trust ?? "trusted"),
      kind: (e.kind as string | undefined) ?? null,
      to: (e.to as string | undefined) ?? null,
      tool: e.type === "action" ? safeText(e.tool) : undefined,
      eventId: e.id,
    });
    for (const k of ["ref", "output", "result_ref"]) {
      const r = e[k as keyof typeof e];
      if (typeof r === "string" && !producer.has(r)) producer.set(r, id);
    }
  }
  for (const e of m.events) {
    if (typeof e.id !== "string") continue;
    const id = nodeId(e.id);
    if (e.type === "decision") {
      for (const c of (e.context ?? []) as { from_event?: string | null; ref?: string; kind?: string }[]) {
        const src = c.from_event ? nodeId(c.from_event) : c.ref ? producer.get(c.ref) : undefined;
        if (src) g.addEdge({ src, dst: id, kind: "context:" + (c.kind ?? "?"), evidence: "observed", ref: c.ref });
      }
    } else if (e.type === "action" || e.type === "message") {
      const d = e.decision;
      if (typeof d === "string" && d) g.addEdge({ src: nodeId(d), dst: id, kind: e.type === "action" ? "invoked" : "sent", evidence: "observed" });
    } else if (e.type === "input") {
      const p = typeof e.ref === "string" ? producer.get(e.ref) : undefined;
      if (p && p !== id) g.addEdge({ src: p, dst: id, kind: "same-content", evidence: "observed", ref: e.ref as string });
    }
  }
  const wantInfer = opts.infer !== false;
  const tooBig = g.nodes.size > (opts.inferMaxNodes ?? 4000);
  if (wantInfer || opts.reuse !== false) {
    const sh = new Map<string, Set<string>>();
    const shOf = (n: GNode): Set<string> => {
      let s = sh.get(n.id);
      if (!s) {
        s = shingles(nodeText(m, n));
        sh.set(n.id, s);
      }
      return s;
    };
    if (wantInfer && !tooBig) inferEdges(g, shOf, opts.inferThreshold ?? 0.3, opts.minShared ?? 3);
    if (opts.reuse !== false && !tooBig) weightContextEdges(m, g, shOf);
  }
  g.inferSkipped = !wantInfer || tooBig;
  attachTests(m, g, m.run.tests);
  return g;
}

function nodeText(m: RunModel, n: GNode): string {
  const e = m.byId.get(n.eventId)!;
  switch (n.type) {
    case "input":
    case "message":
      return textOf(m.value(e.ref));
    case "decision":
      return textOf(m.value(e.output));
    case "action":
      return textOf(m.value(e.args_ref)) + " " + textOf(m.value(e.result_ref));
  }
}

/** Content-overlap edges between nodes with no observed path, found through an index of 5-grams. */
function inferEdges(g: Graph, shOf: (n: GNode) => Set<string>, threshold: number, minShared: number): void {
  const order = [...g.nodes.values()].sort((a, b) => a.seq - b.seq);
  const index = new Map<string, number[]>(); // shingle → positions in order
  const COMMON = 200; // a 5-gram in this many nodes is boilerplate, not evidence
  for (let j = 0; j < order.length; j++) {
    const dst = order[j];
    const b = shOf(dst);
    if (dst.type === "input" || dst.type === "decision" || dst.type === "action") {
      const counts = new Map<number, number>();
      for (const s of b) {
        const at = index.get(s);
        if (!at || at.length > COMMON) continue;
        for (const i of at) counts.set(i, (counts.get(i) ?? 0) + 1);
      }
      let anc: Set<string> | undefined;
      for (const [i, shared] of [...counts].sort((x, y) => x[0] - y[0])) {
        if (shared < minShared) continue;
        const src = order[i];
        const score = overlap(shOf(src), b);
        if (score < threshold) continue;
        anc ??= g.ancestors(dst.id, OBSERVED);
        if (anc.has(src.id)) continue;
        g.addEdge({ src: src.id, dst: dst.id, kind: "content-overlap", evidence: "inferred", score: Math.round(score * 1000) / 1000, shared });
      }
    }
    for (const s of b) {
      const at = index.get(s);
      if (at) at.push(j);
      else index.set(s, [j]);
    }
  }
}

/** Annotates observed context edges with how much of the item's wording the output reused. */
function weightContextEdges(m: RunModel, g: Graph, shOf: (n: GNode) => Set<string>): void {
  for (const e of g.edges) {
    if (e.evidence !== "observed" || !e.kind.startsWith("context")) continue;
    const a = shingles(textOf(m.value(e.ref)));
    const b = shOf(g.nodes.get(e.dst)!);
    e.reuse = a.size && b.size ? Math.round(overlap(a, b) * 1000) / 1000 : 0;
  }
}

/** Tested edges: each test links what it removed to what its target matched. */
function attachTests(m: RunModel, g: Graph, tests: readonly TestRecord[]): void {
  for (const t of tests) {
    if (typeof t.intervention !== "string" || typeof t.target !== "string") continue;
    let srcs: string[];
    let dsts: string[];
    if (t.scope === "decision") {
      const dec = typeof t.decision === "string" ? nodeId(t.decision) : "";
      const ev = g.nodes.get(dec) ? (m.byId.get(t.decision as string) as DecisionEvent | undefined) : undefined;
      const ctx = new Set((ev?.context ?? []).map((c) => c.ref));
      srcs = nodesMatching(m, g, t.intervention).filter((s) => ctx.has(safeText(m.byId.get(g.nodes.get(s)!.eventId)?.ref)));
      dsts = ev ? [dec] : [];
    } else {
      srcs = nodesMatching(m, g, t.intervention);
      dsts = targetHits(m, t.target).map((a) => nodeId(a.id));
    }
    for (const s of srcs) {
      for (const d of dsts) {
        g.addEdge({
          src: s,
          dst: d,
          kind: "causal",
          evidence: "tested",
          effect: t.effect as number,
          ci: t.ci as [number, number],
          n: t.n as number,
          verdict: t.verdict as string,
          target: t.target,
          intervention: t.intervention,
          role: (t.role as string | undefined) ?? null,
        });
      }
    }
  }
}

// ---------------------------------------------------------------------------------- queries

export interface TaintResult {
  sources: { node: string; label: string; agent: string }[];
  reachedNodes: string[];
  agentsReached: string[];
  actions: { node: string; seq: number; agent: string; tool: string; args: unknown; path: string[] }[];
  evidence: Evidence[];
}

/** Blast radius: forward reach from source inputs. Reach is not causation. */
export function taint(m: RunModel, g: Graph, sources: readonly string[] = ["untrusted"], includeInferred = false): TaintResult {
  const starts: string[] = [];
  for (const s of sources) for (const n of nodesMatching(m, g, s)) if (g.nodes.get(n)!.type === "input" && !starts.includes(n)) starts.push(n);
  const evidence: Evidence[] = includeInferred ? ["observed", "inferred"] : ["observed"];
  const parent = g.descendants(starts, evidence);
  const reached = [...parent.keys()].filter((n) => !starts.includes(n));
  const actions = reached
    .map((n) => g.nodes.get(n)!)
    .filter((n) => n.type === "action")
    .sort((a, b) => a.seq - b.seq)
    .map((n) => {
      const e = m.byId.get(n.eventId)!;
      return {
        node: n.id,
        seq: n.seq,
        agent: n.agent,
        tool: n.label,
        args: m.value(e.args_ref),
        path: Graph.path(parent, n.id).map((p) => `${g.nodes.get(p)!.label} [${g.nodes.get(p)!.agent}]`),
      };
    });
  return {
    sources: starts.map((s) => ({ node: s, label: g.nodes.get(s)!.label, agent: g.nodes.get(s)!.agent })),
    reachedNodes: reached,
    agentsReached: [...new Set(reached.map((n) => g.nodes.get(n)!.agent))].sort(),
    actions,
    evidence,
  };
}

/** The observed chains from each untrusted input (or, when none, each input) to the node (see lineageChains). */
export function lineage(g: Graph, target: string, max = 12): string[][] {
  return lineageChains(
    target,
    (id) => g.inEdges(id, OBSERVED).map((e) => e.src),
    (id) => g.nodes.get(id),
    max,
  );
}

/** The longest observed chain (by hops) ending at an action: the run's critical path. */
export function criticalPath(g: Graph): string[] {
  const order = [...g.nodes.values()].sort((a, b) => a.seq - b.seq);
  const best = new Map<string, number>();
  const prev = new Map<string, string | null>();
  for (const n of order) {
    best.set(n.id, 0);
    prev.set(n.id, null);
    for (const e of g.inEdges(n.id, OBSERVED)) {
      const b = (best.get(e.src) ?? 0) + 1;
      if (b > best.get(n.id)!) {
        best.set(n.id, b);
        prev.set(n.id, e.src);
      }
    }
  }
  const actions = order.filter((n) => n.type === "action");
  if (!actions.length) return [];
  let end: string | null = actions.reduce((a, b) => (best.get(b.id)! > best.get(a.id)! ? b : a)).id;
  const out: string[] = [];
  while (end) {
    out.push(end);
    end = prev.get(end) ?? null;
  }
  return out.reverse();
}
