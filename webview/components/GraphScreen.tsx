/**
 * Graph: the run's data-flow graph, laid out left to right in layers. Observed edges show; tested
 * causes are red and labelled with their effect; inferred edges and ruled-out tests are hidden
 * until switched on. Clicking a node traces it upstream and downstream. Colours follow the theme
 * and are re-read when it changes. Drawn as SVG (SvgGraph.tsx); a big run opens grouped: groups
 * expand on a click, a selected node's lineage is drawn node by node. Unticking Group draws a big
 * run's every node with Cytoscape, loaded then (loadCytoscape.ts).
 */
import type cytoscape from "cytoscape";
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { int } from "../labels";
import { edgeVisible, trace } from "../logic";
import { applyToggles, applyTrace, createGraph, fitted } from "../graph/cy";
import { BIG_GRAPH, LABEL_ZOOM, buildElements, buildViewElements, graphStyle } from "../graph/elements";
import { groupedView, lineage } from "../graph/groups";
import type { GraphToggles } from "../host";
import { forceLayout, layeredLayout } from "../graph/layout";
import { cytoscapeLoaded, loadCytoscape, type Cytoscape } from "../graph/load-cytoscape";
import { readColors } from "../graph/theme";
import { useApp } from "./context";
import { Legend, NodePanel, NodeSearch } from "./GraphParts";
import { SvgGraph, type GraphNav } from "./SvgGraph";
import { Button, Empty } from "./ui";

declare global {
  interface Window {
    /** performance.now() when the graph was laid out and first drawn (read by the benchmark). */
    __causewayGraphReady?: number;
  }
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Viewports kept per run, so a live update or a screen switch does not lose the user's place (the
 * canvas's; SvgGraph keeps its own, by the run given as its viewKey).
 */
const viewports = new Map<string, { zoom: number; pan: { x: number; y: number } }>();

export function GraphScreen() {
  const { ctl, state } = useApp();
  // the run's graph part: all this screen draws (the rest of a big run is read when needed)
  const rg = ctl.currentGraph()!;
  const inv = ctl.current();
  const run = state.ui.run!;
  const toggles = state.ui.graph;
  const box = useRef<HTMLDivElement>(null);
  const cyRef = useRef<cytoscape.Core | null>(null);
  /** What the graph shows now, so effects only touch what changed. */
  const applied = useRef<GraphToggles>({ inferred: false, ruledOut: false, node: null });
  const [ready, setReady] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const big = rg.graph.nodes.length > BIG_GRAPH;
  // A big run opens grouped (agents, channels, source families; groups.ts); groups expand on a
  // click, a selected node's lineage is drawn node by node.
  const [grouping, setGrouping] = useState(true);
  // expanded groups, per run (another run starts collapsed)
  const [expandedOf, setExpandedOf] = useState<{ run: string; keys: ReadonlySet<string> }>({ run, keys: NONE });
  const expanded = expandedOf.run === run ? expandedOf.keys : NONE;
  const setExpanded = (f: (prev: ReadonlySet<string>) => ReadonlySet<string>) => setExpandedOf((p) => ({ run, keys: f(p.run === run ? p.keys : NONE) }));
  const grouped = big && grouping;
  // SVG draws every graph of up to BIG_GRAPH nodes and a big run's grouped view; Cytoscape a big
  // run's graph ungrouped (see SvgGraph.tsx for why)
  const svg = !big || grouped;
  const shownEdges = useMemo(() => (grouped ? rg.graph.edges.filter((e) => edgeVisible(e, toggles)) : null), [grouped, rg, toggles.inferred, toggles.ruledOut]);
  const focus = useMemo(() => (shownEdges && toggles.node ? lineage(shownEdges, toggles.node) : []), [shownEdges, toggles.node]);
  // a small graph's selected node: what is upstream and downstream of it, as the canvas traces it
  const traced = useMemo(() => {
    if (big || !toggles.node) return [];
    const t = trace(rg.graph.edges.filter((e) => edgeVisible(e, toggles)), toggles.node);
    return [toggles.node, ...t.up, ...t.down];
  }, [big, rg, toggles.node, toggles.inferred, toggles.ruledOut]);
  const view = useMemo(() => (grouped ? groupedView(rg, (e) => edgeVisible(e, toggles), expanded, focus) : null), [grouped, rg, toggles.inferred, toggles.ruledOut, expanded, focus]);
  /** The graph's first frame is on screen (its first view's, or a new grouped view's). */
  const drawn = () => {
    window.__causewayGraphReady = performance.now();
    performance.mark("causeway:graph-ready");
    setReady(true);
    // a small run's rest is read now (a big run's when another screen or the drawer needs it)
    if (!big) ctl.needRun("all");
  };
  /** Zoom, pan and fit of whichever draws the graph (the toolbar and the keyboard use it). */
  const nav = useRef<GraphNav | null>(null);
  // the SVG's colours, re-read when the theme changes (Cytoscape is re-styled instead)
  const [theme, setTheme] = useState(0);
  const colors = useMemo(() => (svg ? readColors() : null), [svg, theme]);

  // A small graph's positions: layers left to right, as the screen renders.
  const smallLayout = useMemo(() => {
    if (big) return null;
    performance.mark("causeway:graph-start");
    const positions = layeredLayout(
      rg.graph.nodes,
      rg.graph.edges.filter((e) => e.evidence === "observed"),
    ).positions;
    performance.mark("causeway:graph-layout");
    return positions;
  }, [rg, big]);

  // What SvgGraph draws: a small graph's elements (the toggled edges hidden), or a grouped view
  // laid out as the screen renders.
  const placed = useMemo(() => {
    if (smallLayout) return buildElements(rg, smallLayout, (e) => edgeVisible(e, toggles));
    if (!view) return null;
    performance.mark("causeway:graph-start");
    const viewEdges = view.edges.filter((e) => e.evidence !== "inferred");
    const layout = layeredLayout(view.nodes, viewEdges, { dx: 220, dy: 120 });
    // the groups alone (nothing traced): a few dozen nodes, placed by forces (a chain of layers
    // would be too wide to read), started from the layered positions so it is repeatable
    const positions = focus.length ? layout.positions : forceLayout(view.nodes.map((n) => n.id), viewEdges, layout.positions);
    performance.mark("causeway:graph-layout");
    return buildViewElements(rg, view, positions);
  }, [rg, view, smallLayout, toggles.inferred, toggles.ruledOut]);

  // Cytoscape itself, loaded the first time a big run's graph is drawn ungrouped (nothing else
  // needs it)
  const [lib, setLib] = useState<Cytoscape | undefined>(cytoscapeLoaded);
  useEffect(() => {
    if (svg || lib) return;
    let live = true;
    loadCytoscape().then(
      (cy) => live && setLib(() => cy),
      (err: unknown) => live && setFailure(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [svg, lib]);

  // Build Cytoscape once per investigation (a big run drawn ungrouped), as the screen commits: a layout
  // effect, so Cytoscape's first frame comes with the screen's (no frame in between).
  useLayoutEffect(() => {
    if (svg || !lib || !box.current || !rg.graph.nodes.length) return;
    performance.mark("causeway:graph-start");
    const layout = layeredLayout(
      rg.graph.nodes,
      rg.graph.edges.filter((e) => e.evidence === "observed"),
    );
    performance.mark("causeway:graph-layout");
    let cy: cytoscape.Core;
    try {
      cy = createGraph(lib, box.current, rg, layout.positions, big, (e) => edgeVisible(e, toggles));
    } catch (err) {
      // No canvas (an unusual browser, a test DOM): say so instead of breaking the app.
      setFailure(err instanceof Error ? err.message : String(err));
      return;
    }
    performance.mark("causeway:graph-cy");
    setFailure(null);
    cyRef.current = cy;
    applied.current = { inferred: toggles.inferred, ruledOut: toggles.ruledOut, node: null };
    if (toggles.node) applyTrace(cy, rg, toggles, applied.current);
    cy.viewport(viewports.get(run) ?? fitted(layout.positions, cy.width(), cy.height()));
    const cyNav: GraphNav = {
      zoomBy: (f) => cy.zoom({ level: cy.zoom() * f, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
      panBy: (x, y) => cy.panBy({ x, y }),
      fit: () => {
        const traced = cy.elements(".traced");
        cy.fit(traced.nonempty() ? traced : undefined, 40);
      },
    };
    nav.current = cyNav;
    cy.on("tap", "node", (e) => ctl.setGraph({ node: e.target.id() }));
    cy.on("tap", (e) => {
      if (e.target === cy) ctl.setGraph({ node: null });
    });
    cy.on("viewport", () => viewports.set(run, { zoom: cy.zoom(), pan: { ...cy.pan() } }));
    if (big) {
      // Label nodes once the zoom makes them readable (see LABEL_ZOOM), after the user stops zooming.
      let labelled = false;
      let timer = 0;
      const sync = () => {
        const want = cy.zoom() >= LABEL_ZOOM;
        if (want !== labelled) {
          labelled = want;
          cy.batch(() => (want ? cy.nodes().addClass("labelled") : cy.nodes().removeClass("labelled")));
        }
      };
      sync();
      cy.on("zoom", () => {
        clearTimeout(timer);
        timer = window.setTimeout(sync, 120);
      });
    }
    cy.one("render", () => requestAnimationFrame(drawn));
    return () => {
      cy.destroy();
      cyRef.current = null;
      // the grouped view drawn in its place may have set its own already (it renders first)
      if (nav.current === cyNav) nav.current = null;
    };
    // toggles are applied by the effects below; rebuilding on them would lose the viewport.
  }, [rg, run, big, ctl, svg, lib]);

  useEffect(() => {
    if (cyRef.current && !svg) applyToggles(cyRef.current, rg, toggles, applied.current);
  }, [rg, toggles.inferred, toggles.ruledOut]);

  useEffect(() => {
    const cy = cyRef.current;
    if (!cy || svg) return;
    applyTrace(cy, rg, toggles, applied.current);
    const n = toggles.node ? cy.getElementById(toggles.node) : null;
    if (n && n.nonempty()) {
      const bb = n.renderedBoundingBox();
      if (bb.x2 < 0 || bb.y2 < 0 || bb.x1 > cy.width() || bb.y1 > cy.height()) cy.center(n);
    }
  }, [rg, toggles.node, toggles.inferred, toggles.ruledOut]);

  // Re-style when the theme changes (VS Code swaps body classes and the variables on <html>).
  useEffect(() => {
    let last = JSON.stringify(readColors());
    const restyle = () => {
      const colors = readColors();
      const key = JSON.stringify(colors);
      if (key === last) return; // a class was touched but the theme is the same
      last = key;
      cyRef.current?.style(graphStyle(colors, big && !grouped));
      setTheme((t) => t + 1);
    };
    const obs = new MutationObserver(restyle);
    obs.observe(document.body, { attributes: true, attributeFilter: ["class"] });
    obs.observe(document.documentElement, { attributes: true, attributeFilter: ["class", "style", "data-theme"] });
    const media = window.matchMedia?.("(prefers-color-scheme: dark)");
    media?.addEventListener?.("change", restyle);
    return () => {
      obs.disconnect();
      media?.removeEventListener?.("change", restyle);
    };
  }, [big, grouped]);

  if (!rg.graph.nodes.length) return <Empty icon="type-hierarchy-sub">This run has no inputs, model calls, tool calls or messages to draw.</Empty>;

  const zoomBy = (f: number) => nav.current?.zoomBy(f);
  const fit = () => nav.current?.fit();
  const onKeyDown = (e: JSX.TargetedKeyboardEvent<HTMLDivElement>) => {
    const g = nav.current;
    if (!g) return;
    const pan: Record<string, [number, number]> = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] };
    if (e.key === "+" || e.key === "=") zoomBy(1.25);
    else if (e.key === "-") zoomBy(0.8);
    else if (e.key === "0") fit();
    else if (e.key in pan) g.panBy(pan[e.key][0], pan[e.key][1]);
    else if (e.key === "Escape" && toggles.node) ctl.setGraph({ node: null });
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  const hidden = rg.graph.edges.filter((e) => !edgeVisible(e, toggles)).length;

  return (
    <div class="graph-screen">
      <div class="graph-toolbar">
        <label class="check" title={rg.graph.inferSkipped ? "Inferred edges were not computed for this run" : "Heuristic links: wording of one item reappears in another"}>
          <input type="checkbox" checked={toggles.inferred} disabled={rg.graph.inferSkipped} onChange={(e) => ctl.setGraph({ inferred: e.currentTarget.checked })} />
          <span>Inferred edges</span>
        </label>
        <label class="check">
          <input type="checkbox" checked={toggles.ruledOut} onChange={(e) => ctl.setGraph({ ruledOut: e.currentTarget.checked })} />
          <span>Ruled-out tests</span>
        </label>
        {big && (
          <label class="check" title="Draw agents, message channels and source families as groups; click a group to expand it">
            <input type="checkbox" checked={grouping} onChange={(e) => setGrouping(e.currentTarget.checked)} />
            <span>Group</span>
          </label>
        )}
        {view && expanded.size > 0 && <Button small icon="collapse-all" label="Collapse groups" title="Collapse the expanded groups" onClick={() => setExpanded(() => NONE)} />}
        <NodeSearch rg={rg} />
        <span class="topbar-spacer" />
        <span class="muted">{`${int(rg.graph.nodes.length)} nodes \u00b7 ${int(rg.graph.edges.length - hidden)} edges${hidden ? ` (${int(hidden)} hidden)` : ""}${view ? ` \u00b7 grouped: ${int(view.groups.size)} groups, ${int(view.nodes.length - view.groups.size)} node${view.nodes.length - view.groups.size === 1 ? "" : "s"} drawn alone` : ""}`}</span>
        <Button small icon="zoom-in" label="Zoom in" title="Zoom in (+)" onClick={() => zoomBy(1.25)} />
        <Button small icon="zoom-out" label="Zoom out" title="Zoom out (−)" onClick={() => zoomBy(0.8)} />
        <Button small icon="screen-full" label="Fit" title={toggles.node ? "Fit the traced nodes (0)" : "Fit the graph (0)"} onClick={fit} />
      </div>
      <div class="graph-body">
        <div class="graph-canvas-wrap">
          <div
            class="graph-canvas"
            tabIndex={0}
            role="application"
            aria-label={svg ? "Data-flow graph. Arrow keys pan, plus and minus zoom, 0 fits, Escape clears the trace. Tab moves to the nodes, where arrow keys go from node to node and Enter selects." : "Data-flow graph. Arrow keys pan, plus and minus zoom, 0 fits, Escape clears the trace."}
            onKeyDown={onKeyDown}
            data-ready={ready ? "true" : "false"}
          >
            {svg && placed && colors ? (
              <SvgGraph
                elements={placed}
                picked={toggles.node}
                focus={view ? focus : traced}
                colors={colors}
                nav={nav}
                viewKey={run}
                onDrawn={drawn}
                onTapNode={(id) => {
                  const g = view?.groups.get(id);
                  if (g) setExpanded((prev) => new Set([...prev, g.key]));
                  else ctl.setGraph({ node: id });
                }}
                onTapBackground={() => ctl.setGraph({ node: null })}
              />
            ) : (
              <div class="graph-cy" ref={box} />
            )}
          </div>
          {failure && !svg && (
            <div class="graph-failure">
              <Empty icon="warning">{`The graph could not be drawn here (${failure}). The other screens show the same data.`}</Empty>
            </div>
          )}
          <Legend grouped={!!view} />
        </div>
        <NodePanel rg={rg} inv={inv} />
      </div>
    </div>
  );
}
