/**
 * The SVG graph's zoom and pan (SvgGraph.tsx): the layer's transform, kept per drawing, fitted when
 * the nodes drawn change; dragging pans, the wheel zooms around the pointer, a press that did not
 * move is a click.
 */
import type { JSX, RefObject } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import { fitBox } from "../graph/cy";
import type { GraphNav } from "./graph-nav";

/** The zoom and pan each drawing was left at, with the nodes it drew. */
const kept = new Map<string, { nodeSet: string; zoom: number; x: number; y: number }>();

const MIN_ZOOM = 0.02;
const MAX_ZOOM = 4;
/** Pointer travel (px) from which a press is a pan, not a click. */
const DRAG_PX = 4;

export interface Viewport {
  vp: { current: { zoom: number; x: number; y: number } };
  apply: () => void;
  zoomAt: (factor: number, at: { x: number; y: number }) => void;
  /** Brings a node that is off screen to the centre, at the same zoom. */
  reveal: (n: { x: number; y: number }) => void;
  nav: GraphNav;
}

/**
 * The drawing's zoom and pan: applied as the layer's transform, kept under `viewKey`, fitted to
 * `box()` when the nodes drawn change (a new view, a group expanded, a lineage drawn), not when a
 * selection or a toggle only restyles them; the same nodes drawn again (the screen opened again)
 * are shown as they were left.
 */
export function useViewport(
  svg: RefObject<SVGSVGElement>,
  layer: RefObject<SVGGElement>,
  viewKey: string | undefined,
  nodeSet: string,
  box: () => { x1: number; y1: number; x2: number; y2: number },
): Viewport {
  const vp = useRef({ zoom: 1, x: 0, y: 0 });
  const apply = () => {
    const v = vp.current;
    layer.current?.setAttribute("transform", `translate(${v.x} ${v.y}) scale(${v.zoom})`);
    if (viewKey !== undefined) kept.set(viewKey, { nodeSet, ...v });
  };
  const size = () => ({ w: svg.current?.clientWidth || 800, h: svg.current?.clientHeight || 600 });
  const zoomAt = (factor: number, at: { x: number; y: number }) => {
    const v = vp.current;
    const zoom = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, v.zoom * factor));
    vp.current = { zoom, x: at.x - ((at.x - v.x) / v.zoom) * zoom, y: at.y - ((at.y - v.y) / v.zoom) * zoom };
    apply();
  };
  const fit = () => {
    const { w, h } = size();
    // the legend covers the bottom of the drawing (50 px): keep the graph above it
    const { zoom, pan } = fitBox(box(), w, h, 40, 50);
    vp.current = { zoom, x: pan.x, y: pan.y };
    apply();
  };
  const reveal = (n: { x: number; y: number }) => {
    const v = vp.current;
    const { w, h } = size();
    const [x, y] = [n.x * v.zoom + v.x, n.y * v.zoom + v.y];
    if (x >= 0 && x <= w && y >= 0 && y <= h) return;
    vp.current = { ...v, x: w / 2 - n.x * v.zoom, y: h / 2 - n.y * v.zoom };
    apply();
  };
  useLayoutEffect(() => {
    const was = viewKey !== undefined ? kept.get(viewKey) : undefined;
    if (was?.nodeSet !== nodeSet) return fit();
    vp.current = { zoom: was.zoom, x: was.x, y: was.y };
    apply();
  }, [nodeSet]);
  const nav: GraphNav = {
    zoomBy: (f) => {
      const { w, h } = size();
      zoomAt(f, { x: w / 2, y: h / 2 });
    },
    panBy: (dx, dy) => {
      vp.current = { ...vp.current, x: vp.current.x + dx, y: vp.current.y + dy };
      apply();
    },
    fit,
  };
  return { vp, apply, zoomAt, reveal, nav };
}

/**
 * Pan by dragging anywhere, zoom with the wheel around the pointer; a press that did not move is
 * a click (on a node: select or expand it; on the background: clear the selection).
 */
export function usePointer(svg: RefObject<SVGSVGElement>, view: Viewport, onTapNode: (id: string) => void, onTapBackground: () => void) {
  const drag = useRef<{ x: number; y: number; vx: number; vy: number; moved: boolean } | null>(null);
  return {
    onPointerDown: (e: JSX.TargetedPointerEvent<SVGSVGElement>) => {
      if (e.button !== 0) return;
      drag.current = { x: e.clientX, y: e.clientY, vx: view.vp.current.x, vy: view.vp.current.y, moved: false };
    },
    onPointerMove: (e: JSX.TargetedPointerEvent<SVGSVGElement>) => {
      const d = drag.current;
      if (!d) return;
      if (!d.moved && Math.hypot(e.clientX - d.x, e.clientY - d.y) < DRAG_PX) return;
      if (!d.moved) svg.current?.setPointerCapture?.(e.pointerId);
      d.moved = true;
      view.vp.current = { ...view.vp.current, x: d.vx + e.clientX - d.x, y: d.vy + e.clientY - d.y };
      view.apply();
    },
    onPointerUp: (e: JSX.TargetedPointerEvent<SVGSVGElement>) => {
      const d = drag.current;
      drag.current = null;
      if (!d || d.moved) return;
      const hit = (e.target as Element).closest?.("[data-node]");
      if (hit) onTapNode(hit.getAttribute("data-node")!);
      else onTapBackground();
    },
    onPointerCancel: () => {
      drag.current = null;
    },
    onWheel: (e: JSX.TargetedWheelEvent<SVGSVGElement>) => {
      e.preventDefault();
      const r = svg.current!.getBoundingClientRect();
      view.zoomAt(Math.exp(-e.deltaY * 0.0015), { x: e.clientX - r.left, y: e.clientY - r.top });
    },
  };
}
