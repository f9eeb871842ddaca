/**
 * The graph drawn as SVG: every run's graph of up to BIG_GRAPH nodes (elements.ts buildElements),
 * and a big run's grouped view (groups.ts, buildViewElements), styled like the Cytoscape graph
 * (same elements, same classes, same colours). The selected node's lineage stands out.
 *
 * Why not Cytoscape here: on a canvas, the first frame costs Cytoscape about 0.5 s of code running
 * for the first time (styles, label measurement, texture layers) even for 25 groups, and 1.1 s for
 * 585 nodes. SVG draws the same in tens of milliseconds, its labels are text nodes (never markup),
 * and its nodes take keyboard focus. Cytoscape draws a big run's graph ungrouped (Group unticked),
 * where its level of detail pays off.
 */
import type cytoscape from "cytoscape";
import type { JSX, RefObject } from "preact";
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { exposeEdges } from "../graph/cy";
import { usePointer, useViewport } from "./svg-viewport";
import { edgeLook, nodeLook, outline, shapeOf, type Look } from "./svg-looks";
import type { GraphColors } from "../graph/theme";
import type { GraphNav } from "./graph-nav";

interface Props {
  /**
   * The elements (elements.ts buildElements or buildViewElements): nodes with positions, edges
   * (those of class "hidden" are not drawn).
   */
  elements: cytoscape.ElementDefinition[];
  /** The selected node (traced: its lineage stands out, the rest fades), if it is drawn. */
  picked: string | null;
  /** The nodes of the selected node's lineage (groups.ts lineage, or logic.ts trace). */
  focus: readonly string[];
  colors: GraphColors;
  onTapNode(id: string): void;
  onTapBackground(): void;
  nav: { current: GraphNav | null };
  /** Called once the view's first frame is on screen. */
  onDrawn(): void;
  /**
   * Names the drawing (the run): its zoom and pan are kept under that name and given back when
   * the same nodes are drawn again (the Graph screen left and opened again).
   */
  viewKey?: string;
}

/** Arrow keys on a node: the direction they move the keyboard focus in. */
const STEP: Record<string, [number, number]> = { ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowDown: [0, 1], ArrowUp: [0, -1] };

/**
 * The node to move the keyboard focus to from `from` in direction `dir`: of the nodes ahead in
 * that direction, the nearest, counting sideways distance twice (so a key follows the row or
 * column it points along before it jumps across).
 */
function nextNode<N extends { id: string; x: number; y: number }>(all: Iterable<N>, from: N, dir: [number, number]): N | undefined {
  let best: N | undefined;
  let score = Infinity;
  for (const n of all) {
    const ahead = (n.x - from.x) * dir[0] + (n.y - from.y) * dir[1];
    if (n === from || ahead <= 0.5) continue;
    const side = Math.abs((n.x - from.x) * dir[1] - (n.y - from.y) * dir[0]);
    const s = ahead + 2 * side;
    if (s < score) [best, score] = [n, s];
  }
  return best;
}

interface DrawnNode {
  id: string;
  label: string;
  cls: Set<string>;
  x: number;
  y: number;
  look: Look;
}

interface DrawnEdge {
  source: string;
  target: string;
  label: string;
  labelOffset: number;
  weight: number;
  cls: Set<string>;
}

/** The elements as the SVG draws them: nodes with their look, edges with their classes. */
function readElements(elements: readonly cytoscape.ElementDefinition[], c: GraphColors): { nodes: Map<string, DrawnNode>; edges: DrawnEdge[] } {
  const nodes = new Map<string, DrawnNode>();
  const edges: DrawnEdge[] = [];
  for (const el of elements) {
    const d = el.data as Record<string, unknown>;
    const cls = new Set(
      String(el.classes ?? "")
        .split(" ")
        .filter(Boolean),
    );
    if (el.group === "nodes") {
      const pos = el.position ?? { x: 0, y: 0 };
      nodes.set(String(d.id), { id: String(d.id), label: String(d.label ?? ""), cls, x: pos.x, y: pos.y, look: nodeLook(cls, Number(d.size ?? 26), c) });
    } else {
      edges.push({
        source: String(d.source),
        target: String(d.target),
        label: String(d.label ?? ""),
        labelOffset: Number(d.labelOffset ?? 46),
        weight: Number(d.weight ?? 1),
        cls,
      });
    }
  }
  return { nodes, edges };
}

/** The box around the given nodes with their labels (about 0.6 em a character wide, centred below). */
function labelledBox(nodes: Iterable<DrawnNode>): { x1: number; y1: number; x2: number; y2: number } {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const n of nodes) {
    const half = Math.max(n.look.w / 2, (n.label.length * n.look.fontSize * 0.3) / (n.cls.has("group") ? 1.6 : 1));
    x1 = Math.min(x1, n.x - half);
    x2 = Math.max(x2, n.x + half);
    y1 = Math.min(y1, n.y - n.look.h / 2);
    y2 = Math.max(y2, n.y + n.look.h / 2 + n.look.fontSize * (n.cls.has("group") ? 2.6 : 1.6));
  }
  return { x1, y1, x2, y2 };
}

export function SvgGraph(p: Props) {
  const svg = useRef<SVGSVGElement>(null);
  const layer = useRef<SVGGElement>(null);
  const c = p.colors;
  const { nodes, edges } = useMemo(() => readElements(p.elements, c), [p.elements, c]);
  const nodeSet = useMemo(() => [...nodes.keys()].join("\n"), [nodes]);

  // the selected node's lineage stands out, the rest fades (as applyFocus does on the canvas)
  const keep = useMemo(() => (p.picked && nodes.has(p.picked) ? new Set(p.focus) : null), [nodes, p.picked, p.focus]);
  const state = (ids: string[]) => (!keep ? "" : ids.every((id) => keep.has(id)) ? "traced" : "faded");

  const view = useViewport(svg, layer, p.viewKey, nodeSet, () => labelledBox((keep ? [...keep] : [...nodes.keys()]).flatMap((id) => nodes.get(id) ?? [])));
  p.nav.current = view.nav;

  // a node selected off screen (found by name, picked in a panel) is brought to the centre
  useLayoutEffect(() => {
    const n = p.picked ? nodes.get(p.picked) : undefined;
    if (n) view.reveal(n);
  }, [p.picked, nodeSet]);

  const roving = useRoving(nodes, p.picked, layer, view.reveal);
  useDrawnHook(nodes, edges, keep, state, c, () => p.onDrawn());
  const pointer = usePointer(
    svg,
    view,
    (id) => p.onTapNode(id),
    () => p.onTapBackground(),
  );

  const pairs = new Set(edges.map((e) => `${e.source}\u0000${e.target}`));
  return (
    <svg
      ref={svg}
      class="graph-svg"
      role="group"
      aria-label={`${nodes.size} ${p.elements.some((el) => String(el.classes ?? "").startsWith("group")) ? "groups and nodes" : "nodes"}, ${edges.filter((e) => !e.cls.has("hidden")).length} links`}
      {...pointer}
      font-family={c.fontFamily}
    >
      <g ref={layer}>
        {edges.map((e, i) => {
          const a = nodes.get(e.source);
          const b = nodes.get(e.target);
          if (!a || !b || e.cls.has("hidden")) return null;
          return <Edge key={i} e={e} a={a} b={b} both={pairs.has(`${e.target}\u0000${e.source}`)} state={state([a.id, b.id])} c={c} />;
        })}
        {[...nodes.values()].map((n) => (
          <Node
            key={n.id}
            n={n}
            state={state([n.id])}
            picked={n.id === p.picked}
            tabStop={n.id === roving.tabStop}
            c={c}
            onKey={(key) => (key === "Enter" || key === " " ? (p.onTapNode(n.id), true) : roving.moveFocus(n, key))}
            onFocus={() => roving.setFocused(n.id)}
          />
        ))}
      </g>
    </svg>
  );
}

/**
 * One tab stop for the whole graph (a roving tab index): the node last focused, else the selected
 * one, else the first. Tab enters and leaves the graph in one step; arrow keys move between
 * nodes, Home and End go to the first and last.
 */
function useRoving(nodes: Map<string, DrawnNode>, picked: string | null, layer: RefObject<SVGGElement>, reveal: (n: DrawnNode) => void) {
  const [focused, setFocused] = useState<string | null>(null);
  const order = useMemo(() => [...nodes.values()].sort((a, b) => a.x - b.x || a.y - b.y), [nodes]);
  const tabStop = focused && nodes.has(focused) ? focused : picked && nodes.has(picked) ? picked : (order[0]?.id ?? null);
  const moveFocus = (from: DrawnNode, key: string): boolean => {
    const to = key === "Home" ? order[0] : key === "End" ? order.at(-1) : key in STEP ? nextNode(order, from, STEP[key]) : null;
    if (to === null) return false; // not a key of ours
    if (!to || to === from) return true; // no node that way: the focus stays
    reveal(to);
    setFocused(to.id);
    layer.current?.querySelector<SVGGElement>(`[data-node="${CSS.escape(to.id)}"]`)?.focus();
    return true;
  };
  return { tabStop, moveFocus, setFocused };
}

/** Exposes the drawn edges to tests, and reports the view drawn after its first frame. */
function useDrawnHook(
  nodes: Map<string, DrawnNode>,
  edges: DrawnEdge[],
  keep: Set<string> | null,
  state: (ids: string[]) => string,
  c: GraphColors,
  onDrawn: () => void,
): void {
  useLayoutEffect(() => {
    performance.mark("causeway:graph-cy");
    exposeEdges(() => {
      // each colour converted once per call (a graph has a handful); not kept across calls, as
      // the theme may have changed in between
      const rgbOf = new Map<string, string>();
      const rgb = (color: string): string => {
        let out = rgbOf.get(color);
        if (out === undefined) rgbOf.set(color, (out = cssRgb(color)));
        return out;
      };
      return edges.map((e) => ({
        source: e.source,
        target: e.target,
        sourceLabel: nodes.get(e.source)?.label ?? "",
        targetLabel: nodes.get(e.target)?.label ?? "",
        label: e.label,
        classes: [...e.cls, ...[state([e.source, e.target])].filter(Boolean)],
        visible: !e.cls.has("hidden"),
        // as the canvas reports it: rgb(r, g, b)
        color: rgb(edgeLook(e.cls, state([e.source, e.target]), c).stroke),
      }));
    });
    let frame = requestAnimationFrame(() => {
      // a task queued from the frame's callback runs once that frame is drawn
      frame = window.setTimeout(() => onDrawn(), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(frame);
    };
  }, [nodes, edges, keep]);
}

interface NodeProps {
  n: DrawnNode;
  state: string;
  picked: boolean;
  /** The graph's one tab stop. */
  tabStop: boolean;
  c: GraphColors;
  /** A key pressed on the node: true when it was used. */
  onKey: (key: string) => boolean;
  onFocus: () => void;
}

function Node({ n, state, picked, tabStop, c, onKey, onFocus }: NodeProps) {
  const look = picked ? { ...n.look, stroke: c.focus, strokeWidth: 3 } : n.look;
  const group = n.cls.has("group");
  // a group's label: its name, then what it holds ("fetch_doc · 120 untrusted inputs")
  const at = n.label.lastIndexOf(" \u00b7 ");
  const lines = group && at > 0 ? [n.label.slice(0, at), n.label.slice(at + 3)] : [n.label];
  const y0 = look.h / 2 + 4 + look.fontSize;
  return (
    <g
      class={`gnode ${[...n.cls].join(" ")} ${state}`}
      data-node={n.id}
      transform={`translate(${n.x} ${n.y})`}
      opacity={state === "faded" ? 0.15 : 1}
      // lower case: on an SVG element "tabIndex" would be an attribute of that name, ignored
      tabindex={tabStop ? 0 : -1}
      role="button"
      aria-label={n.label}
      onFocus={onFocus}
      onKeyDown={(e) => {
        if (!onKey(e.key)) return;
        // used here: the graph's container would pan on an arrow key
        e.preventDefault();
        e.stopPropagation();
      }}
    >
      <title>{n.label}</title>
      {picked && (
        <g fill={c.focus} fill-opacity={0.18} stroke="none">
          {shapeOf(look, 12)}
        </g>
      )}
      <g class="shape" fill={look.fill} stroke={look.stroke} stroke-width={look.strokeWidth} stroke-dasharray={look.dash}>
        {shapeOf(look)}
      </g>
      {look.double && (
        <g fill="none" stroke={c.background} stroke-width={Math.max(1, look.strokeWidth / 3)}>
          {shapeOf(look)}
        </g>
      )}
      <text
        class="glabel"
        text-anchor="middle"
        font-size={look.fontSize}
        font-weight={look.bold ? "bold" : undefined}
        fill={look.labelColor}
        stroke={c.labelBackground}
        stroke-width={3}
        paint-order="stroke"
        stroke-linejoin="round"
      >
        {lines.map((line, i) => (
          <tspan key={i} x={0} y={y0 + i * look.fontSize * 1.15}>
            {line}
          </tspan>
        ))}
      </text>
    </g>
  );
}

function Edge({
  e,
  a,
  b,
  both,
  state,
  c,
}: {
  e: { label: string; labelOffset: number; weight: number; cls: Set<string> };
  a: DrawnNode;
  b: DrawnNode;
  both: boolean;
  state: string;
  c: GraphColors;
}) {
  const look = edgeLook(e.cls, state, c);
  const width = e.cls.has("merged") && state !== "traced" && !e.cls.has("causal") ? e.weight : look.width;
  // two edges between the same nodes bend apart; a tested edge bends as on the canvas
  const bend = e.cls.has("tested") ? 40 : both ? 24 : 0;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const ctl = { x: (a.x + b.x) / 2 + (dy / len) * bend, y: (a.y + b.y) / 2 - (dx / len) * bend };
  const from = outline(a.look, a, bend ? ctl : b);
  const tip = outline(b.look, b, bend ? ctl : a);
  // the arrow head: a triangle whose tip touches the target's outline
  const ux = tip.x - ctl.x || tip.x - from.x;
  const uy = tip.y - ctl.y || tip.y - from.y;
  const ul = Math.hypot(ux, uy) || 1;
  const [nx, ny] = [ux / ul, uy / ul];
  const head = 6 + 1.5 * width;
  const base = { x: tip.x - nx * head, y: tip.y - ny * head };
  const arrow = `${tip.x},${tip.y} ${base.x - ny * head * 0.45},${base.y + nx * head * 0.45} ${base.x + ny * head * 0.45},${base.y - nx * head * 0.45}`;
  const d = bend ? `M${from.x} ${from.y} Q${ctl.x} ${ctl.y} ${base.x} ${base.y}` : `M${from.x} ${from.y} L${base.x} ${base.y}`;
  // a tested edge's effect sits near its source, as the canvas's source label does
  let label: JSX.Element | null = null;
  if (e.label) {
    const t = Math.min(0.5, e.labelOffset / len);
    const q = (p0: number, p1: number, p2: number) => (1 - t) * (1 - t) * p0 + 2 * (1 - t) * t * p1 + t * t * p2;
    label = (
      <text
        x={q(from.x, ctl.x, tip.x)}
        y={q(from.y, ctl.y, tip.y)}
        text-anchor="middle"
        dominant-baseline="middle"
        font-size={11}
        font-weight="bold"
        fill={look.stroke}
        stroke={c.labelBackground}
        stroke-width={4}
        paint-order="stroke"
      >
        {e.label}
      </text>
    );
  }
  return (
    <g class={`gedge ${[...e.cls].join(" ")} ${state}`} opacity={look.opacity}>
      <path d={d} fill="none" stroke={look.stroke} stroke-width={width} stroke-dasharray={look.dash} />
      <polygon points={arrow} fill={look.stroke} />
      {label}
    </g>
  );
}

/** A CSS colour as the browser computes it (rgb(r, g, b)): what the test hook reports. */
function cssRgb(color: string): string {
  const probe = document.createElement("span");
  probe.style.color = color;
  document.body.appendChild(probe);
  const out = getComputedStyle(probe).color || color;
  probe.remove();
  return out;
}
