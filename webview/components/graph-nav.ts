/**
 * The Graph screen's hold on its drawing, the same for both drawers: the SVG graph (SvgGraph.tsx,
 * its zoom and pan in svg-viewport.ts) and Cytoscape (CyGraph.tsx).
 */

/** What the toolbar's buttons and the keyboard ask of the drawn graph, whichever draws it. */
export interface GraphNav {
  zoomBy(factor: number): void;
  panBy(dx: number, dy: number): void;
  /** Fits the traced nodes if any, else the whole graph. */
  fit(): void;
}
