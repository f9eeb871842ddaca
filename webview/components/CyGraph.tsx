/**
 * A big run's whole graph drawn with Cytoscape (the Graph screen with Group unticked): every node,
 * laid out in layers, labelled once the zoom makes labels readable; a selected node is traced and
 * the edge toggles restyle only what they touch. Cytoscape itself is loaded the first time this is
 * drawn (load-cytoscape.ts); nothing else needs it. SvgGraph.tsx draws every other view.
 */
import type cytoscape from "cytoscape";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { RunGraph } from "../../core/analysis/types";
import type { Controller } from "../state";
import type { GraphToggles } from "../host";
import { edgeVisible } from "../logic";
import { applyToggles, applyTrace, createGraph, fitted } from "../graph/cy";
import { LABEL_ZOOM, graphStyle } from "../graph/elements";
import { layeredLayout } from "../graph/layout";
import { cytoscapeLoaded, loadCytoscape, type Cytoscape } from "../graph/load-cytoscape";
import { readColors } from "../graph/theme";
import type { GraphNav } from "./graph-nav";

/**
 * Viewports kept per run, so a live update or a screen switch does not lose the user's place
 * (SvgGraph keeps its own, by the run given as its viewKey).
 */
const viewports = new Map<string, { zoom: number; pan: { x: number; y: number } }>();

interface Props {
  rg: RunGraph;
  run: string;
  big: boolean;
  toggles: GraphToggles;
  ctl: Controller;
  nav: { current: GraphNav | null };
  /** Bumped when the theme changes: the graph is re-styled. */
  theme: number;
  /** Called once the first frame is on screen. */
  onDrawn: () => void;
  /** Cytoscape could not load or draw here (no canvas): why, or null once it drew. */
  onFailure: (reason: string | null) => void;
}

export function CyGraph(p: Props) {
  const { rg, run, big, toggles, ctl } = p;
  const box = useRef<HTMLDivElement>(null);
  const cyRef = useRef<cytoscape.Core | null>(null);
  /** What the graph shows now, so effects only touch what changed. */
  const applied = useRef<GraphToggles>({ inferred: false, ruledOut: false, node: null });
  const lib = useCytoscape(p.onFailure);

  // Built once per investigation, as the screen commits: a layout effect, so Cytoscape's first
  // frame comes with the screen's (no frame in between).
  useLayoutEffect(() => {
    if (!lib || !box.current || !rg.graph.nodes.length) return;
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
      p.onFailure(err instanceof Error ? err.message : String(err));
      return;
    }
    performance.mark("causeway:graph-cy");
    p.onFailure(null);
    cyRef.current = cy;
    applied.current = { inferred: toggles.inferred, ruledOut: toggles.ruledOut, node: null };
    if (toggles.node) applyTrace(cy, rg, toggles, applied.current);
    cy.viewport(viewports.get(run) ?? fitted(layout.positions, cy.width(), cy.height()));
    const cyNav = navOf(cy);
    p.nav.current = cyNav;
    cy.on("tap", "node", (e) => ctl.setGraph({ node: e.target.id() }));
    cy.on("tap", (e) => {
      if (e.target === cy) ctl.setGraph({ node: null });
    });
    cy.on("viewport", () => viewports.set(run, { zoom: cy.zoom(), pan: { ...cy.pan() } }));
    if (big) labelWhenReadable(cy);
    cy.one("render", () => requestAnimationFrame(p.onDrawn));
    return () => {
      cy.destroy();
      cyRef.current = null;
      // the grouped view drawn in its place may have set its own already (it renders first)
      if (p.nav.current === cyNav) p.nav.current = null;
    };
    // toggles are applied by the effects below; rebuilding on them would lose the viewport.
  }, [rg, run, big, ctl, lib]);

  useEffect(() => {
    if (cyRef.current) applyToggles(cyRef.current, rg, toggles, applied.current);
  }, [rg, toggles.inferred, toggles.ruledOut]);

  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    applyTrace(cy, rg, toggles, applied.current);
    const n = toggles.node ? cy.getElementById(toggles.node) : null;
    if (n && n.nonempty()) {
      const bb = n.renderedBoundingBox();
      if (bb.x2 < 0 || bb.y2 < 0 || bb.x1 > cy.width() || bb.y1 > cy.height()) cy.center(n);
    }
  }, [rg, toggles.node, toggles.inferred, toggles.ruledOut]);

  // re-styled when the theme changes (the screen watches it)
  useEffect(() => {
    if (p.theme) cyRef.current?.style(graphStyle(readColors(), big));
  }, [p.theme]);

  return <div class="graph-cy" ref={box} />;
}

/** Cytoscape itself, once loaded (undefined until then); a load failure is reported. */
function useCytoscape(onFailure: (reason: string) => void): Cytoscape | undefined {
  const [lib, setLib] = useState<Cytoscape | undefined>(cytoscapeLoaded);
  useEffect(() => {
    if (lib) return;
    let live = true;
    loadCytoscape().then(
      (cy) => live && setLib(() => cy),
      (err: unknown) => live && onFailure(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [lib]);
  return lib;
}

/** Zoom, pan and fit for the toolbar and the keyboard. */
function navOf(cy: cytoscape.Core): GraphNav {
  return {
    zoomBy: (f) => cy.zoom({ level: cy.zoom() * f, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
    panBy: (x, y) => cy.panBy({ x, y }),
    fit: () => {
      const traced = cy.elements(".traced");
      cy.fit(traced.nonempty() ? traced : undefined, 40);
    },
  };
}

/** Labels nodes once the zoom makes them readable (see LABEL_ZOOM), after the user stops zooming. */
function labelWhenReadable(cy: cytoscape.Core): void {
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
