/**
 * Graph: the run's data-flow graph, laid out left to right in layers. Observed edges show; tested
 * causes are red and labelled with their effect; inferred edges and ruled-out tests are hidden
 * until switched on. Clicking a node traces it upstream and downstream. Colours follow the theme
 * and are re-read when it changes. Drawn as SVG (SvgGraph.tsx); a big run opens grouped: groups
 * expand on a click, a selected node's lineage is drawn node by node. Unticking Group draws a big
 * run's every node with Cytoscape (CyGraph.tsx), loaded then (load-cytoscape.ts). A traced lineage
 * in a big run is laid out in layers wrapped into rows that fit the panel (layout.ts wrappedLayout).
 */
import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { RunGraph } from "../../core/analysis/types";
import { int } from "../labels";
import { edgeVisible, trace } from "../logic";
import { BIG_GRAPH, buildElements, buildViewElements } from "../graph/elements";
import { groupedView, lineage, type GraphView } from "../graph/groups";
import type { GraphToggles } from "../host";
import { forceLayout, layeredLayout, wrappedLayout } from "../graph/layout";
import { readColors } from "../graph/theme";
import { useApp } from "./context";
import { CyGraph } from "./CyGraph";
import { Legend, NodePanel, NodeSearch } from "./GraphParts";
import { SvgGraph } from "./SvgGraph";
import type { GraphNav } from "./graph-nav";
import { Button, Empty } from "./ui";

declare global {
  interface Window {
    /** performance.now() when the graph was laid out and first drawn (read by the benchmark). */
    __causewayGraphReady?: number;
  }
}

const NONE: ReadonlySet<string> = new Set();

export function GraphScreen() {
  const { ctl, state } = useApp();
  // the run's graph part: all this screen draws (the rest of a big run is read when needed)
  const rg = ctl.currentGraph()!;
  const inv = ctl.current();
  const run = state.ui.run!;
  const toggles = state.ui.graph;
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
  const { view, focus, traced, placed } = useSvgView(rg, toggles, big, grouped, expanded);
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
  // the colours, re-read when the theme changes (the SVG redraws, Cytoscape is re-styled)
  const theme = useThemeChanges();
  const colors = useMemo(() => (svg ? readColors() : null), [svg, theme]);

  if (!rg.graph.nodes.length) return <Empty icon="type-hierarchy-sub">This run has no inputs, model calls, tool calls or messages to draw.</Empty>;

  const onKeyDown = (e: JSX.TargetedKeyboardEvent<HTMLDivElement>) => {
    const clear = () => {
      if (!toggles.node) return false;
      ctl.setGraph({ node: null });
      return true;
    };
    if (!graphKey(nav.current, e.key, clear)) return;
    e.preventDefault();
    e.stopPropagation();
  };

  return (
    <div class="graph-screen">
      <GraphToolbar
        rg={rg}
        view={view}
        big={big}
        grouping={grouping}
        setGrouping={setGrouping}
        expanded={expanded.size > 0}
        collapse={() => setExpanded(() => NONE)}
        nav={nav}
      />
      <div class="graph-body">
        <div class="graph-canvas-wrap">
          <div
            class="graph-canvas"
            tabIndex={0}
            role="application"
            aria-label={
              svg
                ? "Data-flow graph. Arrow keys pan, plus and minus zoom, 0 fits, Escape clears the trace. Tab moves to the nodes, where arrow keys go from node to node and Enter selects."
                : "Data-flow graph. Arrow keys pan, plus and minus zoom, 0 fits, Escape clears the trace."
            }
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
            ) : !svg ? (
              <CyGraph rg={rg} run={run} big={big} toggles={toggles} ctl={ctl} nav={nav} theme={theme} onDrawn={drawn} onFailure={setFailure} />
            ) : null}
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

/** A key on the graph: zoom (+ −), fit (0), pan (arrows), clear the trace (Escape). True when used. */
function graphKey(g: GraphNav | null, key: string, clear: () => boolean): boolean {
  if (!g) return false;
  const pan: Record<string, [number, number]> = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] };
  if (key === "+" || key === "=") g.zoomBy(1.25);
  else if (key === "-") g.zoomBy(0.8);
  else if (key === "0") g.fit();
  else if (key in pan) g.panBy(pan[key][0], pan[key][1]);
  else if (key === "Escape") return clear();
  else return false;
  return true;
}

/**
 * What SvgGraph draws: a small graph's elements (the toggled edges hidden), or a big run's grouped
 * view, with the selected node's lineage (`focus`, drawn node by node) or, on a small graph, what
 * is upstream and downstream of it (`traced`).
 */
function useSvgView(rg: RunGraph, toggles: GraphToggles, big: boolean, grouped: boolean, expanded: ReadonlySet<string>) {
  const shownEdges = useMemo(() => (grouped ? rg.graph.edges.filter((e) => edgeVisible(e, toggles)) : null), [grouped, rg, toggles.inferred, toggles.ruledOut]);
  const focus = useMemo(() => (shownEdges && toggles.node ? lineage(shownEdges, toggles.node) : []), [shownEdges, toggles.node]);
  // a small graph's selected node: what is upstream and downstream of it, as the canvas traces it
  const traced = useMemo(() => {
    if (big || !toggles.node) return [];
    const t = trace(
      rg.graph.edges.filter((e) => edgeVisible(e, toggles)),
      toggles.node,
    );
    return [toggles.node, ...t.up, ...t.down];
  }, [big, rg, toggles.node, toggles.inferred, toggles.ruledOut]);
  const view = useMemo(
    () => (grouped ? groupedView(rg, (e) => edgeVisible(e, toggles), expanded, focus) : null),
    [grouped, rg, toggles.inferred, toggles.ruledOut, expanded, focus],
  );

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

  const placed = useMemo(() => {
    if (smallLayout) return buildElements(rg, smallLayout, (e) => edgeVisible(e, toggles));
    if (!view) return null;
    performance.mark("causeway:graph-start");
    const positions = viewPositions(view, focus);
    performance.mark("causeway:graph-layout");
    return buildViewElements(rg, view, positions);
  }, [rg, view, smallLayout, toggles.inferred, toggles.ruledOut]);
  return { view, focus, traced, placed };
}

/**
 * A grouped view's positions. The groups alone (nothing traced): a few dozen nodes, placed by
 * forces (a chain of layers would be too wide to read), started from the layered positions so it
 * is repeatable. A traced lineage (up to LINEAGE_MAX nodes, often a long chain): layers wrapped
 * into rows so that the whole fits a panel's shape with nodes big enough to read.
 */
export function viewPositions(view: GraphView, focus: readonly string[]): Map<string, { x: number; y: number }> {
  const viewEdges = view.edges.filter((e) => e.evidence !== "inferred");
  if (focus.length) return wrappedLayout(view.nodes, viewEdges, { dx: 200, dy: 80, rowGap: 1 }).positions;
  const layout = layeredLayout(view.nodes, viewEdges, { dx: 220, dy: 120 });
  return forceLayout(
    view.nodes.map((n) => n.id),
    viewEdges,
    layout.positions,
  );
}

/** A counter bumped when the theme changes (VS Code swaps body classes and the variables on <html>). */
function useThemeChanges(): number {
  const [theme, setTheme] = useState(0);
  useEffect(() => {
    let last = JSON.stringify(readColors());
    const restyle = () => {
      const key = JSON.stringify(readColors());
      if (key === last) return; // a class was touched but the theme is the same
      last = key;
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
  }, []);
  return theme;
}

interface ToolbarProps {
  rg: RunGraph;
  view: GraphView | null;
  big: boolean;
  grouping: boolean;
  setGrouping: (on: boolean) => void;
  /** Some group is expanded. */
  expanded: boolean;
  collapse: () => void;
  nav: { current: GraphNav | null };
}

function GraphToolbar({ rg, view, big, grouping, setGrouping, expanded, collapse, nav }: ToolbarProps) {
  const { ctl, state } = useApp();
  const toggles = state.ui.graph;
  const hidden = rg.graph.edges.filter((e) => !edgeVisible(e, toggles)).length;
  const alone = view ? view.nodes.length - view.groups.size : 0;
  return (
    <div class="graph-toolbar">
      <label
        class="check"
        title={rg.graph.inferSkipped ? "Inferred edges were not computed for this run" : "Heuristic links: wording of one item reappears in another"}
      >
        <input
          type="checkbox"
          checked={toggles.inferred}
          disabled={rg.graph.inferSkipped}
          onChange={(e) => ctl.setGraph({ inferred: e.currentTarget.checked })}
        />
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
      {view && expanded && <Button small icon="collapse-all" label="Collapse groups" title="Collapse the expanded groups" onClick={collapse} />}
      <NodeSearch rg={rg} />
      <span class="topbar-spacer" />
      <span class="muted">{`${int(rg.graph.nodes.length)} nodes \u00b7 ${int(rg.graph.edges.length - hidden)} edges${hidden ? ` (${int(hidden)} hidden)` : ""}${view ? ` \u00b7 grouped: ${int(view.groups.size)} groups, ${int(alone)} node${alone === 1 ? "" : "s"} drawn alone` : ""}`}</span>
      <Button small icon="zoom-in" label="Zoom in" title="Zoom in (+)" onClick={() => nav.current?.zoomBy(1.25)} />
      <Button small icon="zoom-out" label="Zoom out" title="Zoom out (−)" onClick={() => nav.current?.zoomBy(0.8)} />
      <Button small icon="screen-full" label="Fit" title={toggles.node ? "Fit the traced nodes (0)" : "Fit the graph (0)"} onClick={() => nav.current?.fit()} />
    </div>
  );
}
