/**
 * The investigation's graph as Cytoscape elements and the stylesheet that draws them. Nodes are
 * styled by kind (input trusted/untrusted, the task, decision, action sensitive/blocked/flagged,
 * message); observed edges are plain, inferred dotted, tested causes red and labelled with their
 * effect, ruled-out tests dashed. Labels are canvas text, never markup.
 */
import type cytoscape from "cytoscape";
import type { RunGraph } from "../../core/analysis/types";
import type { GEdge, GNode } from "../../core/graph/graph";
import { clip, effect } from "../labels";
import type { GraphColors } from "./theme";
import { groupLabel, type GraphView } from "./groups";
import { visibleBidi } from "../../core/log/shown";
import { blend } from "./theme";

/** Above this many nodes the graph switches to the cheaper drawing options. */
export const BIG_GRAPH = 600;

/**
 * In a big graph node labels are styled only from this zoom on (the "labelled" class): below it
 * they would be too small to read, and computing thousands of them delays the first frame.
 */
export const LABEL_ZOOM = 0.5;

export function nodeClasses(rg: RunGraph, n: GNode): string {
  const cls: string[] = [n.type];
  if (n.type === "input") cls.push(n.kind === "task" ? "task" : n.trust === "untrusted" ? "untrusted" : "trusted");
  if (n.type === "message" && n.trust === "untrusted") cls.push("carries-untrusted");
  if (n.type === "action") {
    const a = rg.marks[n.id];
    if (a?.sensitive) cls.push("sensitive");
    if (a?.blocked) cls.push("blocked");
    if (a?.high) cls.push("flagged");
  }
  return cls.join(" ");
}

export function edgeClasses(e: GEdge): string {
  if (e.evidence === "observed") return "observed";
  if (e.evidence === "inferred") return "inferred";
  if (e.verdict === "causal") return "tested causal";
  if (e.verdict === "ruled-out") return "tested ruled";
  return "tested other";
}

/** A node's canvas label: what it is, short. */
export function nodeLabel(n: GNode): string {
  // a canvas label is not drawn by Preact: bidi controls are shown here (webview/bidi.ts)
  return visibleBidi(clip(n.type === "decision" ? `${n.agent}: ${n.label}` : n.label, 30));
}

/** The model-space margin left and right of the outermost nodes for their labels (30 characters at 11 px, halved). */
export const LABEL_MARGIN = 100;

/** Elements of a grouped view (groups.ts): groups, the nodes drawn alone, the merged edges. */
export function buildViewElements(rg: RunGraph, view: GraphView, positions: Map<string, { x: number; y: number }>): cytoscape.ElementDefinition[] {
  const out: cytoscape.ElementDefinition[] = [];
  const byId = new Map(rg.graph.nodes.map((n) => [n.id, n]));
  for (const v of view.nodes) {
    const position = { ...(positions.get(v.id) ?? { x: 0, y: 0 }) };
    if (v.group) {
      const g = v.group;
      const cls = ["group", `group-${g.kind}`];
      if (g.trust) cls.push(g.trust);
      if (g.flagged) cls.push("flagged");
      else if (g.sensitive) cls.push("sensitive");
      out.push({
        group: "nodes",
        data: { id: v.id, label: visibleBidi(groupLabel(g)), size: Math.round(34 + 10 * Math.log2(g.members.length)) },
        position,
        classes: cls.join(" "),
      });
    } else {
      const n = byId.get(v.id)!;
      out.push({ group: "nodes", data: { id: n.id, label: nodeLabel(n) }, position, classes: nodeClasses(rg, n) });
    }
  }
  const fromSource = new Map<string, number>();
  view.edges.forEach((e, i) => {
    const causal = e.causal !== undefined ? rg.graph.edges[e.causal] : undefined;
    const first = rg.graph.edges[e.members[0]];
    const cls = causal
      ? "tested causal"
      : e.evidence === "tested"
        ? edgeClasses(rg.graph.edges[e.members.find((m) => rg.graph.edges[m].evidence === "tested")!])
        : e.evidence === "observed"
          ? "observed"
          : edgeClasses(first);
    const k = causal ? (fromSource.get(e.src) ?? 0) : 0;
    if (causal) fromSource.set(e.src, k + 1);
    out.push({
      group: "edges",
      data: {
        id: `v${i}`,
        source: e.src,
        target: e.dst,
        index: e.members[0],
        members: e.members,
        label: causal ? effect(causal.effect) : "",
        labelOffset: 46 + 18 * k,
        weight: Math.min(6, 1 + Math.log2(e.members.length)),
      },
      classes: e.members.length > 1 ? `${cls} merged` : cls,
    });
  });
  return out;
}

/** Elements with their starting classes: edges the toggles hide are created hidden. */
export function buildElements(
  rg: RunGraph,
  positions: Map<string, { x: number; y: number }>,
  visible: (e: GEdge) => boolean = () => true,
): cytoscape.ElementDefinition[] {
  const out: cytoscape.ElementDefinition[] = [];
  for (const n of rg.graph.nodes) {
    out.push({
      group: "nodes",
      data: { id: n.id, label: nodeLabel(n) },
      position: { ...(positions.get(n.id) ?? { x: 0, y: 0 }) },
      classes: nodeClasses(rg, n),
    });
  }
  // several tests from one source: their labels sit at different distances along the edges
  const fromSource = new Map<string, number>();
  rg.graph.edges.forEach((e, i) => {
    const k = e.evidence === "tested" ? (fromSource.get(e.src) ?? 0) : 0;
    if (e.evidence === "tested") fromSource.set(e.src, k + 1);
    out.push({
      group: "edges",
      data: { id: `e${i}`, source: e.src, target: e.dst, index: i, label: e.evidence === "tested" ? effect(e.effect) : "", labelOffset: 46 + 18 * k },
      classes: visible(e) ? edgeClasses(e) : `${edgeClasses(e)} hidden`,
    });
  });
  return out;
}

export function graphStyle(c: GraphColors, big: boolean): cytoscape.StylesheetJson {
  const fill = (x: string) => blend(c.background, x, c.highContrast ? 0 : 0.28);
  const border = c.highContrast ? 2 : 1.5;
  return [
    {
      selector: "node",
      style: {
        width: 26,
        height: 26,
        "background-color": fill(c.muted),
        "border-width": border,
        "border-color": c.muted,
        label: big ? "" : "data(label)",
        color: c.foreground,
        "font-family": c.fontFamily,
        "font-size": 11,
        "text-valign": "bottom",
        "text-halign": "center",
        "text-margin-y": 4,
        "text-wrap": "none",
        "text-background-color": c.labelBackground,
        "text-background-opacity": 0.85,
        "text-background-padding": "1px",
        "min-zoomed-font-size": big ? 9 : 6,
      },
    },
    { selector: "node.labelled, node.picked", style: { label: "data(label)" } },
    { selector: "node.input", style: { shape: "round-rectangle", width: 30, height: 20 } },
    { selector: "node.trusted, node.task", style: { "background-color": fill(c.trusted), "border-color": c.trusted } },
    { selector: "node.task", style: { shape: "round-tag" } },
    { selector: "node.untrusted", style: { "background-color": fill(c.untrusted), "border-color": c.untrusted, "border-width": border + 1 } },
    { selector: "node.decision", style: { shape: "ellipse", "background-color": fill(c.decision), "border-color": c.decision } },
    { selector: "node.message", style: { shape: "diamond", width: 22, height: 22, "background-color": fill(c.message), "border-color": c.message } },
    { selector: "node.action", style: { shape: "round-rectangle", width: 28, height: 28, "background-color": fill(c.action), "border-color": c.action } },
    { selector: "node.action.sensitive", style: { "border-width": border + 1.5, "border-style": "double", "border-color": c.sensitive } },
    { selector: "node.action.blocked", style: { "border-style": "dashed", "background-color": c.background } },
    {
      selector: "node.action.flagged",
      style: { "border-color": c.flagged, "border-width": 3.5, "border-style": "solid", color: c.flagged, "font-weight": "bold" },
    },
    {
      selector: "edge",
      style: {
        width: c.highContrast ? 1.5 : 1,
        "line-color": c.edge,
        "curve-style": big ? "haystack" : "bezier",
        "target-arrow-shape": big ? "none" : "triangle",
        "target-arrow-color": c.edge,
        "arrow-scale": 0.8,
        opacity: c.highContrast ? 1 : 0.75,
      },
    },
    { selector: "edge.inferred", style: { "line-style": "dotted", "line-color": c.muted, "target-arrow-color": c.muted, "curve-style": "bezier" } },
    {
      selector: "edge.tested",
      style: {
        "curve-style": "unbundled-bezier",
        "control-point-distances": [-40],
        "control-point-weights": [0.5],
        "target-arrow-shape": "triangle",
        // Near the source, so several tests of one target keep their labels apart.
        "source-label": "data(label)",
        "source-text-offset": "data(labelOffset)" as unknown as number,
        "font-family": c.fontFamily,
        "font-size": 11,
        "text-background-color": c.labelBackground,
        "text-background-opacity": 1,
        "text-background-padding": "2px",
        "text-background-shape": "roundrectangle",
        // below this on-screen size (zoomed out) the labels are hidden rather than piled up
        "min-zoomed-font-size": 8,
        opacity: 1,
      },
    },
    {
      selector: "edge.causal",
      style: { width: 2.5, "line-color": c.causal, "target-arrow-color": c.causal, color: c.causal, "font-weight": "bold", "z-index": 10 },
    },
    { selector: "edge.ruled", style: { width: 1.5, "line-style": "dashed", "line-color": c.ruledOut, "target-arrow-color": c.ruledOut, color: c.ruledOut } },
    { selector: "edge.other", style: { width: 1.5, "line-style": "dashed", "line-color": c.sensitive, "target-arrow-color": c.sensitive, color: c.sensitive } },
    { selector: ".hidden", style: { display: "none" } },
    // Tracing a node: the rest fades, the node and its upstream and downstream stand out.
    { selector: ".faded", style: { opacity: 0.15, "text-opacity": 0.3 } },
    { selector: "edge.faded.tested", style: { opacity: 0.25 } },
    { selector: "node.traced", style: { opacity: 1, "text-opacity": 1 } },
    { selector: "edge.traced", style: { opacity: 1, width: 2, "line-color": c.focus, "target-arrow-color": c.focus } },
    { selector: "edge.traced.causal", style: { "line-color": c.causal, "target-arrow-color": c.causal, width: 3 } },
    // groups (a big run's first view): bigger, labelled, sized by how much they hold
    {
      selector: "node.group",
      style: {
        shape: "round-rectangle",
        width: "data(size)",
        height: "data(size)",
        label: "data(label)",
        "font-weight": "bold",
        // groups are big and drawn zoomed out: a larger font keeps their names readable
        "font-size": 18,
        "text-wrap": "wrap",
        "text-max-width": "240px",
        "border-width": border + 1,
        "min-zoomed-font-size": 6,
      },
    },
    { selector: "node.group-agent", style: { shape: "ellipse", "background-color": fill(c.decision), "border-color": c.decision } },
    { selector: "node.group-channel", style: { shape: "diamond", "background-color": fill(c.message), "border-color": c.message } },
    { selector: "node.group-source", style: { "background-color": fill(c.trusted), "border-color": c.trusted } },
    { selector: "node.group-source.untrusted, node.group-channel.untrusted", style: { "background-color": fill(c.untrusted), "border-color": c.untrusted } },
    { selector: "node.group.sensitive", style: { "border-style": "double", "border-width": border + 2.5, "border-color": c.sensitive } },
    { selector: "node.group.flagged", style: { "border-color": c.flagged, "border-width": 4, color: c.flagged } },
    { selector: "edge.merged", style: { width: "data(weight)" } },
    { selector: "node.picked", style: { "overlay-color": c.focus, "overlay-opacity": 0.18, "overlay-padding": 6, "border-color": c.focus, "border-width": 3 } },
  ];
}
