/**
 * The Cytoscape side of the Graph screen: creating the graph from an investigation, its first
 * viewport, and the two incremental updates (edge toggles, tracing a node) that touch only the
 * elements that change, so a 2,000-node graph stays responsive.
 */
import type cytoscape from "cytoscape";
import type { RunGraph } from "../../core/analysis/types";
import type { GEdge } from "../../core/graph/graph";
import type { GraphToggles } from "../host";
import { edgeVisible, trace } from "../logic";
import { LABEL_MARGIN, buildElements, graphStyle } from "./elements";
import type { Cytoscape } from "./load-cytoscape";
import { readColors } from "./theme";

/**
 * A Cytoscape graph of the investigation at the given positions, edges hidden per visible().
 * `lib` is Cytoscape itself, loaded when first needed (load-cytoscape.ts).
 */
export function createGraph(
  lib: Cytoscape,
  container: HTMLElement,
  rg: RunGraph,
  positions: Map<string, { x: number; y: number }>,
  big: boolean,
  visible: (e: GEdge) => boolean,
): cytoscape.Core {
  const cy = lib({
    container,
    elements: buildElements(rg, positions, visible),
    style: graphStyle(readColors(), big),
    // Positions are given; the first viewport is computed from them (fitted), which spares
    // Cytoscape measuring every label up front.
    layout: { name: "preset", fit: false },
    minZoom: 0.02,
    maxZoom: 4,
    boxSelectionEnabled: false,
    autoungrabify: big,
    textureOnViewport: big,
    hideEdgesOnViewport: big,
    pixelRatio: big ? 1 : "auto",
  });
  exposeForTests(cy);
  return cy;
}

/** What the end-to-end tests read of the drawn graph (test/e2e/scenarios/31-webview-screens). */
export interface DrawnEdge {
  source: string;
  target: string;
  /** The source node's canvas label. */
  sourceLabel: string;
  targetLabel: string;
  label: string;
  classes: string[];
  visible: boolean;
  /** The computed line colour, e.g. "rgb(229,20,0)". */
  color: string;
}

declare global {
  interface Window {
    /** Read-only: the edges of the graph on screen, as drawn (for tests; the canvas has no DOM). */
    __causewayGraphEdges?: () => DrawnEdge[];
  }
}

/** Lets tests read the edges of the graph drawn last (Cytoscape's, or the grouped view's SVG). */
export function exposeEdges(read: () => DrawnEdge[]): void {
  window.__causewayGraphEdges = read;
}

/** Lets tests read the last created graph's edges; reads only, and nothing once it is destroyed. */
function exposeForTests(cy: cytoscape.Core): void {
  exposeEdges(() =>
    cy.destroyed()
      ? []
      : cy.edges().map((e) => ({
          source: e.source().id(),
          target: e.target().id(),
          sourceLabel: String(e.source().data("label") ?? ""),
          targetLabel: String(e.target().data("label") ?? ""),
          label: String(e.data("label") ?? ""),
          classes: e.classes(),
          visible: e.visible(),
          color: String(e.style("line-color")),
        })),
  );
}

/**
 * A viewport showing every position with a margin, at most 1.5× zoom. `labelMargin` (model
 * units) widens the box left and right: node labels are centred under their nodes, so the
 * outermost nodes' labels would otherwise be cut at the edges.
 */
export function fitted(
  positions: Map<string, { x: number; y: number }>,
  width: number,
  height: number,
  pad = 60,
  labelMargin = LABEL_MARGIN,
): { zoom: number; pan: { x: number; y: number } } {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const p of positions.values()) {
    x1 = Math.min(x1, p.x);
    y1 = Math.min(y1, p.y);
    x2 = Math.max(x2, p.x);
    y2 = Math.max(y2, p.y);
  }
  // the label below the lowest node
  return fitBox({ x1: x1 - labelMargin, y1, x2: x2 + labelMargin, y2: y2 + 20 }, width, height, pad);
}

/**
 * The viewport showing a box (model units) with `pad` pixels around it and `below` more pixels
 * under it (what covers the drawing's bottom), at most 1.5× zoom; a box with no extent (no
 * nodes) is centred at 1×.
 */
export function fitBox(
  box: { x1: number; y1: number; x2: number; y2: number },
  width: number,
  height: number,
  pad: number,
  below = 0,
): { zoom: number; pan: { x: number; y: number } } {
  const { x1, y1, x2, y2 } = box;
  if (!Number.isFinite(x1)) return { zoom: 1, pan: { x: width / 2, y: height / 2 } };
  const zoom = Math.max(0.02, Math.min(1.5, (width - 2 * pad) / Math.max(1, x2 - x1), (height - 2 * pad - below) / Math.max(1, y2 - y1)));
  return { zoom, pan: { x: width / 2 - ((x1 + x2) / 2) * zoom, y: (height - below) / 2 - ((y1 + y2) / 2) * zoom } };
}

/** Shows and hides the toggled edges, touching only those whose visibility changes. */
export function applyToggles(cy: cytoscape.Core, rg: RunGraph, t: GraphToggles, now: GraphToggles) {
  if (now.inferred === t.inferred && now.ruledOut === t.ruledOut) return;
  cy.batch(() => {
    const changed = cy.edges().filter((e) => {
      const g = rg.graph.edges[e.data("index") as number];
      return !!g && edgeVisible(g, t) === e.hasClass("hidden");
    });
    changed.filter(".hidden").removeClass("hidden");
    changed.not(".hidden").addClass("hidden");
  });
  now.inferred = t.inferred;
  now.ruledOut = t.ruledOut;
  now.node = null; // the trace follows visible edges: redo it
}

/** Fades everything but the selected node and what is upstream and downstream of it. */
export function applyTrace(cy: cytoscape.Core, rg: RunGraph, t: GraphToggles, now: GraphToggles) {
  if (now.node === t.node) return;
  cy.batch(() => {
    cy.elements(".faded, .traced, .picked").removeClass("faded traced picked");
    now.node = t.node;
    if (!t.node || cy.getElementById(t.node).empty()) return;
    const at: number[] = [];
    const visible = rg.graph.edges.filter((e, i) => edgeVisible(e, t) && at.push(i) > 0);
    const tr = trace(visible, t.node);
    const keep = new Set([t.node, ...tr.up, ...tr.down]);
    const idx = new Set([...tr.edges].map((i) => at[i]));
    const nodes = cy.nodes();
    nodes.filter((n) => keep.has(n.id())).addClass("traced");
    nodes.filter((n) => !keep.has(n.id())).addClass("faded");
    const edges = cy.edges();
    edges.filter((e) => idx.has(e.data("index") as number)).addClass("traced");
    edges.filter((e) => !idx.has(e.data("index") as number)).addClass("faded");
    cy.getElementById(t.node).addClass("picked");
  });
}
