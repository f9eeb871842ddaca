/**
 * Influence across runs: which content (by hash) reached which tools in how many runs, and which of
 * those links tests confirmed or ruled out. A citation index in which some citations are proven to
 * matter. Also: finding run folders under a root.
 */
import { safeText } from "../log/sanitize";
import type { RunData } from "../log/reader";
import { readRun } from "../log/reader";
import { listRunDirs } from "../log/run-dirs";
import { buildGraph, nodeId, nodesMatching, textOf, type Graph } from "../graph/graph";
import { closure } from "../graph/closure";
import { RunModel } from "../graph/model";
import type { Influence, InfluenceEdge, InfluenceSource, RunSummary, Workspace } from "./types";
import { investigateLite } from "./investigate";
import { REACH_NAMED } from "./alerts";

/**
 * Every folder holding an events.jsonl at or under root, sorted: a run's own folders are not
 * searched for more runs; node_modules, blobs and dot-folders are skipped, links not followed.
 */
export function listRuns(root: string, maxDepth = 4): string[] {
  return listRunDirs(root, { maxDepth, nested: false, followLinks: false, skip: (n) => n === "node_modules" || n === "blobs" || n.startsWith(".") });
}

function short(v: unknown, n: number): string {
  const s = textOf(v).replace(/\n/g, " ");
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}

const settledRuledOut = (t: { verdict: string; ci: [number, number]; stopped?: unknown }) =>
  t.verdict === "ruled-out" || (t.verdict !== "causal" && t.verdict !== "inconclusive" && t.ci[1] < 0.2 && t.ci[0] > -0.2);

/**
 * The tools each input reaches over observed edges (names of the calls downstream), computed for
 * every input in one pass (core/graph/closure.ts); a graph with a cycle searches per input.
 */
function reachedTools(g: Graph): (input: string) => string[] {
  const tools = [...new Set([...g.nodes.values()].filter((n) => n.type === "action").map((n) => n.label))];
  const toolId = new Map(tools.map((t, i) => [t, i]));
  const sets = closure(g, {
    direction: "down",
    evidence: ["observed"],
    width: tools.length,
    labelOf: (n) => (n.type === "action" ? toolId.get(n.label)! : -1),
    keep: (n) => n.type === "input",
  });
  return (input) => {
    const bits = sets?.get(input);
    const out: string[] = [];
    if (bits) bits.forEach((i) => out.push(tools[i]));
    else if (!sets)
      for (const x of new Set(
        [...g.descendants([input]).keys()]
          .map((id) => g.nodes.get(id)!)
          .filter((n) => n.type === "action")
          .map((n) => n.label),
      ))
        out.push(x);
    return out;
  };
}

/** The cross-run influence graph of several runs. */
export function influence(runs: readonly RunData[]): Influence {
  const sources = new Map<string, InfluenceSource>();
  const outcomes = new Map<string, { id: string; runs: number }>();
  const edges = new Map<string, InfluenceEdge>();
  const edge = (ref: string, tool: string) => {
    const k = `${ref}|${tool}`;
    let e = edges.get(k);
    if (!e) {
      e = { source: ref, tool, reach_runs: 0, tests: [], max_effect: null, confirmed: false, ruled_out: false };
      edges.set(k, e);
    }
    if (!outcomes.has(tool)) outcomes.set(tool, { id: tool, runs: 0 });
    return e;
  };
  for (const run of runs) {
    const m = new RunModel(run);
    const g = buildGraph(m, { infer: false, reuse: false });
    const toolsBelow = reachedTools(g);
    for (const ev of m.inputs) {
      if (ev.kind === "task" || typeof ev.ref !== "string") continue;
      const nid = nodeId(ev.id);
      let s = sources.get(ev.ref);
      if (!s) {
        s = {
          id: ev.ref,
          labels: [],
          trust: ev.trust ?? null,
          runs: 0,
          cited_by: 0,
          preview: short(m.value(ev.ref), 140),
          max_effect: null,
          confirmed_tools: [],
        };
        sources.set(ev.ref, s);
      }
      if (!s.labels.includes(ev.source)) s.labels.push(ev.source);
      s.runs++;
      s.cited_by += g.outEdges(nid, ["observed"]).filter((e) => e.kind.startsWith("context")).length;
      for (const tool of toolsBelow(nid)) edge(ev.ref, tool).reach_runs++;
    }
    for (const t of run.tests) {
      if ((t.scope ?? "run") !== "run" || typeof t.intervention !== "string" || typeof t.target !== "string") continue;
      if (t.group || t.intervention.includes(" | ")) continue; // a group is not evidence about a single member
      const toolClause = t.target.split(",").find((c) => c.trim().startsWith("tool="));
      if (!toolClause) continue;
      const tool = toolClause.trim().slice(5);
      for (const nid of nodesMatching(m, g, t.intervention)) {
        const n = g.nodes.get(nid)!;
        if (n.type !== "input") continue;
        const ref = safeText(m.byId.get(n.eventId)?.ref ?? "");
        if (!sources.has(ref)) continue;
        edge(ref, tool).tests.push({
          run: run.runId,
          target: t.target,
          effect: typeof t.effect === "number" ? t.effect : 0,
          ci: Array.isArray(t.ci) && t.ci.length === 2 ? (t.ci as [number, number]) : [0, 0],
          verdict: safeText(t.verdict),
          n: typeof t.n === "number" ? t.n : 0,
        });
      }
    }
    for (const tool of new Set(m.actions.map((a) => safeText(a.tool)))) {
      const o = outcomes.get(tool) ?? { id: tool, runs: 0 };
      o.runs++;
      outcomes.set(tool, o);
    }
  }
  for (const e of edges.values()) {
    const eff = e.tests.map((t) => t.effect);
    e.max_effect = eff.length ? Math.max(...eff) : null;
    e.confirmed = e.tests.some((t) => t.verdict === "causal");
    e.ruled_out = e.tests.length > 0 && !e.confirmed && e.tests.every((t) => settledRuledOut(t));
  }
  const bySource = new Map<string, InfluenceEdge[]>();
  for (const e of edges.values()) (bySource.get(e.source) ?? bySource.set(e.source, []).get(e.source)!).push(e);
  for (const s of sources.values()) {
    const es = bySource.get(s.id) ?? [];
    const effs = es.map((e) => e.max_effect).filter((x): x is number => x !== null);
    s.max_effect = effs.length ? Math.max(...effs) : null;
    s.confirmed_tools = [...new Set(es.filter((e) => e.confirmed).map((e) => e.tool))].sort();
  }
  return {
    sources: [...sources.values()].sort((a, b) => (b.max_effect ?? 0) - (a.max_effect ?? 0) || b.cited_by - a.cited_by),
    outcomes: [...outcomes.values()].sort((a, b) => b.runs - a.runs),
    edges: [...edges.values()],
  };
}

/** Summaries of every run under root, and their influence graph. Unreadable runs are listed as failed, never dropped. */
export function workspace(root: string): Workspace {
  const runs: RunData[] = listRuns(root).map((d) => readRun(d));
  const summaries: RunSummary[] = runs.map((r) => investigateLite(r, { reachNamed: REACH_NAMED }).summary);
  summaries.sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : a.run_id.localeCompare(b.run_id)));
  return { schema: "causeway.workspace.v1", runs: summaries, influence: influence(runs) };
}
