/**
 * View logic: lookups, filters, orderings and groupings over an Investigation, kept out of the
 * components so they can be tested on their own. These only arrange what the analysis produced;
 * they never decide a verdict, an alert or an edge.
 */
import type { ActionView, Alert, ChainHop, EventView, HowTested, Influence, InfluenceSource, Investigation, TimelineRow } from "../core/analysis/types";
import type { GEdge, GNode } from "../core/graph/graph";
import type { TimelineFilters } from "./host";
import { SEVERITY_RANK } from "./labels";
import { lineageChains } from "../core/graph/lineage";
import { chainOf, howTested, notTestedOf } from "../core/analysis/tested";

/** Lookups built once per investigation (memoised on the object). */
export interface Index {
  nodes: Map<string, GNode>;
  eventsBySeq: Map<number, EventView>;
  eventsByNode: Map<string, EventView>;
  actions: ActionView[];
}

const indexes = new WeakMap<Investigation, Index>();

export function indexOf(inv: Investigation): Index {
  let ix = indexes.get(inv);
  if (!ix) {
    const nodes = nodesOf(inv.graph);
    const eventsBySeq = new Map(inv.events.map((e) => [e.seq, e] as const));
    const eventsByNode = new Map(inv.events.map((e) => [`ev:${e.id}`, e] as const));
    const actions = Object.values(inv.actions).sort((a, b) => a.seq - b.seq);
    ix = { nodes, eventsBySeq, eventsByNode, actions };
    indexes.set(inv, ix);
  }
  return ix;
}

const nodeMaps = new WeakMap<Investigation["graph"], Map<string, GNode>>();

/** A graph's nodes by id (memoised on the graph object). */
export function nodesOf(graph: Investigation["graph"]): Map<string, GNode> {
  let m = nodeMaps.get(graph);
  if (!m) nodeMaps.set(graph, (m = new Map(graph.nodes.map((n) => [n.id, n] as const))));
  return m;
}

/** A node's display name: "researcher · summarize", "send_email", "vendor:portal/notes.md". */
export function nodeName(inv: Pick<Investigation, "graph">, id: string): string {
  const n = nodesOf(inv.graph).get(id);
  if (!n) return id;
  if (n.type === "decision") return `${n.agent} \u00b7 ${n.label}`;
  if (n.type === "action") return `${n.agent} \u00b7 ${n.label}`;
  return n.label;
}

/** Alerts, most severe first (stable within a severity). */
export function sortedAlerts(alerts: readonly Alert[]): Alert[] {
  return alerts
    .map((a, i) => ({ a, i }))
    .sort((x, y) => SEVERITY_RANK[x.a.severity] - SEVERITY_RANK[y.a.severity] || x.i - y.i)
    .map((x) => x.a);
}

/** The tool call the Why screen opens on: the top alert's, else the first flagged, else the first. */
export function defaultAction(inv: Investigation): string | null {
  const ix = indexOf(inv);
  for (const a of sortedAlerts(inv.alerts)) if (a.node && inv.actions[a.node]) return a.node;
  return ix.actions.find((a) => a.alerts.length)?.node ?? ix.actions[0]?.node ?? null;
}

/** The highest alert severity on an action, or null. */
export function actionSeverity(a: ActionView): Alert["severity"] | null {
  if (!a.alerts.length) return null;
  return [...a.alerts].sort((x, y) => SEVERITY_RANK[x] - SEVERITY_RANK[y])[0];
}

/** Timeline rows that pass the filters. Text matches the row text, agent, type or seq. */
export function filterTimeline(rows: readonly TimelineRow[], f: TimelineFilters): TimelineRow[] {
  const q = f.text.trim().toLowerCase();
  return rows.filter((r) => {
    if (f.agent && r.agent !== f.agent) return false;
    if (f.type && r.type !== f.type) return false;
    if (f.flagged && !r.flags.length) return false;
    if (q && !`${r.text}\n${r.agent}\n${r.type}\n#${r.seq}`.toLowerCase().includes(q)) return false;
    return true;
  });
}

/** The distinct agents and types of a timeline, for the filter menus. */
export function timelineFacets(rows: readonly TimelineRow[]): { agents: string[]; types: string[] } {
  const agents = new Set<string>();
  const types = new Set<string>();
  for (const r of rows) {
    agents.add(r.agent);
    types.add(r.type);
  }
  return { agents: [...agents].sort(), types: [...types].sort() };
}

const observedParents = new WeakMap<Investigation, Map<string, string[]>>();

/**
 * The observed chains from each untrusted root (or, when none, each input) to a node, as the
 * host's case files name them: computed here from the graph, on demand, for the node on screen.
 */
export function nodeLineage(inv: Investigation, node: string): string[][] {
  let parents = observedParents.get(inv);
  if (!parents) {
    parents = new Map();
    for (const e of inv.graph.edges) if (e.evidence === "observed") (parents.get(e.dst) ?? parents.set(e.dst, []).get(e.dst)!).push(e.src);
    observedParents.set(inv, parents);
  }
  const nodes = indexOf(inv).nodes;
  return lineageChains(
    node,
    (id) => parents.get(id) ?? [],
    (id) => nodes.get(id),
  );
}

/**
 * Lineage chains (root → … → action) grouped by the path after their root, so that three untrusted
 * inputs read by the same model call show as three roots of one path.
 */
export function lineageGroups(chains: readonly string[][]): { roots: string[]; path: string[] }[] {
  const groups = new Map<string, { roots: string[]; path: string[] }>();
  for (const c of chains) {
    if (!c.length) continue;
    const path = c.slice(1);
    const key = path.join("\u0000");
    const g = groups.get(key) ?? { roots: [], path };
    if (!g.roots.includes(c[0])) g.roots.push(c[0]);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** Which edges the graph shows with the current toggles. */
export function edgeVisible(e: GEdge, t: { inferred: boolean; ruledOut: boolean }): boolean {
  if (e.evidence === "observed") return true;
  if (e.evidence === "inferred") return t.inferred;
  if (e.verdict === "ruled-out") return t.ruledOut;
  return true;
}

/** Everything upstream and downstream of a node over the given edges (breadth-first). */
export function trace(edges: readonly GEdge[], id: string): { up: Set<string>; down: Set<string>; edges: Set<number> } {
  const out = new Map<string, number[]>();
  const inn = new Map<string, number[]>();
  edges.forEach((e, i) => {
    (out.get(e.src) ?? out.set(e.src, []).get(e.src)!).push(i);
    (inn.get(e.dst) ?? inn.set(e.dst, []).get(e.dst)!).push(i);
  });
  const used = new Set<number>();
  const walk = (adj: Map<string, number[]>, next: (e: GEdge) => string): Set<string> => {
    const seen = new Set<string>();
    const q = [id];
    for (let k = 0; k < q.length; k++) {
      for (const i of adj.get(q[k]) ?? []) {
        used.add(i);
        const n = next(edges[i]);
        if (n !== id && !seen.has(n)) {
          seen.add(n);
          q.push(n);
        }
      }
    }
    return seen;
  };
  const up = walk(inn, (e) => e.src);
  const down = walk(out, (e) => e.dst);
  return { up, down, edges: used };
}

/** Sources ranked by their strongest tested effect (untested last, then by reach). */
export function rankedSources(inf: Influence): InfluenceSource[] {
  return [...inf.sources].sort((a, b) => {
    const ea = a.max_effect ?? -Infinity;
    const eb = b.max_effect ?? -Infinity;
    return eb - ea || b.runs - a.runs || a.labels.join().localeCompare(b.labels.join());
  });
}

/** A display name for an influence source: its labels, or its short content hash. */
export function sourceName(s: InfluenceSource): string {
  return s.labels.length ? s.labels.join(", ") : s.id.replace(/^sha256:/, "").slice(0, 12);
}

/** What a finished job came back with, in the fields the UI shows. */
export interface JobOutcome {
  kind: "test" | "attribution";
  verdict?: string;
  role?: string | null;
  effect?: number;
  ci?: [number, number];
  pWith?: number;
  pWithout?: number;
  n?: number;
  summary?: string;
  causes?: { spec: string; role: string; effect: number; ci: [number, number] }[];
  ruledOut?: string[];
  inconclusive?: string[];
  modelCalls?: number;
  /** A test's rung, assumptions and off-tape actions, when its result says. */
  how?: HowTested;
  /** Find the cause: the hops it followed, root → action, when it followed any. */
  chain?: ChainHop[];
  /** Find the cause: the suspects it could not test (rung 1), with why. */
  notTested?: { spec: string; reason: string }[];
}

const num = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) ? x : undefined);
const txt = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
const pair = (x: unknown): [number, number] | undefined =>
  Array.isArray(x) && x.length === 2 && typeof x[0] === "number" && typeof x[1] === "number" ? [x[0], x[1]] : undefined;
const strings = (x: unknown): string[] | undefined => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : undefined);

/** Reads a result the host sent (typed unknown on the wire) defensively. */
export function jobOutcome(kind: "test" | "attribution" | "fixCheck", result: unknown): JobOutcome {
  const r = (result && typeof result === "object" ? result : {}) as Record<string, unknown>;
  if (kind === "fixCheck") return { kind: "attribution", summary: txt(r.summary) ? `Fix check — ${txt(r.summary)}` : undefined };
  if (kind === "test") {
    return {
      kind,
      verdict: txt(r.verdict),
      role: txt(r.role) ?? null,
      effect: num(r.effect),
      ci: pair(r.ci),
      pWith: num(r.p_with),
      pWithout: num(r.p_without),
      n: num(r.n),
      modelCalls: num(r.model_calls),
      how: howTested(r),
    };
  }
  const causes = Array.isArray(r.causes)
    ? r.causes.flatMap((c) => {
        const o = (c && typeof c === "object" ? c : {}) as Record<string, unknown>;
        const spec = txt(o.spec);
        const effect = num(o.effect);
        const ci = pair(o.ci);
        return spec && effect !== undefined && ci ? [{ spec, role: txt(o.role) ?? "", effect, ci }] : [];
      })
    : undefined;
  return {
    kind,
    summary: txt(r.summary),
    causes,
    ruledOut: strings(r.ruled_out),
    inconclusive: strings(r.inconclusive),
    modelCalls: num(r.model_calls),
    chain: chainOf(r.chain),
    notTested: notTestedOf(r.not_tested),
  };
}
