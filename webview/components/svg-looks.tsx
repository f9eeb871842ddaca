/**
 * How the SVG graph draws a node or an edge: shape, size, colours and dashes for the classes of
 * elements.ts (the Cytoscape graph's graphStyle, followed class for class), and where an edge meets
 * a node's outline.
 */
import type { JSX } from "preact";
import { blend, type GraphColors } from "../graph/theme";

/** A node as drawn. */
export interface Look {
  shape: "ellipse" | "rect" | "diamond" | "tag";
  w: number;
  h: number;
  fill: string;
  stroke: string;
  strokeWidth: number;
  dash?: string;
  double?: boolean;
  fontSize: number;
  bold: boolean;
  labelColor: string;
}

/** The node's look, following graphStyle (elements.ts) for the classes a grouped view uses. */
export function nodeLook(cls: Set<string>, size: number, c: GraphColors): Look {
  const fill = (x: string) => blend(c.background, x, c.highContrast ? 0 : 0.28);
  const border = c.highContrast ? 2 : 1.5;
  const look: Look = {
    shape: "ellipse",
    w: 26,
    h: 26,
    fill: fill(c.muted),
    stroke: c.muted,
    strokeWidth: border,
    fontSize: 11,
    bold: false,
    labelColor: c.foreground,
  };
  const color = (x: string, width = look.strokeWidth) => Object.assign(look, { fill: fill(x), stroke: x, strokeWidth: width });
  if (cls.has("group")) {
    Object.assign(look, { shape: "rect", w: size, h: size, fontSize: 18, bold: true, strokeWidth: border + 1 });
    if (cls.has("group-agent")) color(c.decision).shape = "ellipse";
    else if (cls.has("group-channel")) color(cls.has("untrusted") ? c.untrusted : c.message).shape = "diamond";
    else color(cls.has("untrusted") ? c.untrusted : c.trusted);
    if (cls.has("flagged")) Object.assign(look, { stroke: c.flagged, strokeWidth: 4, labelColor: c.flagged });
    else if (cls.has("sensitive")) Object.assign(look, { stroke: c.sensitive, strokeWidth: border + 2.5, double: true });
    return look;
  }
  if (cls.has("input")) {
    Object.assign(look, { shape: cls.has("task") ? "tag" : "rect", w: 30, h: 20 });
    if (cls.has("untrusted")) color(c.untrusted, border + 1);
    else color(c.trusted);
  } else if (cls.has("decision")) color(c.decision);
  else if (cls.has("message")) Object.assign(color(c.message), { shape: "diamond", w: 22, h: 22 });
  else if (cls.has("action")) {
    Object.assign(color(c.action), { shape: "rect", w: 28, h: 28 });
    if (cls.has("sensitive")) Object.assign(look, { stroke: c.sensitive, strokeWidth: border + 1.5, double: true });
    if (cls.has("blocked")) Object.assign(look, { dash: "4 3", fill: c.background });
    if (cls.has("flagged")) Object.assign(look, { stroke: c.flagged, strokeWidth: 3.5, double: false, bold: true, labelColor: c.flagged });
  }
  return look;
}

/** Where the line from `from` towards the centre `at` meets the node's outline. */
export function outline(look: Look, at: { x: number; y: number }, from: { x: number; y: number }): { x: number; y: number } {
  const dx = from.x - at.x;
  const dy = from.y - at.y;
  const hw = look.w / 2 + look.strokeWidth / 2;
  const hh = look.h / 2 + look.strokeWidth / 2;
  if (!dx && !dy) return at;
  const t =
    look.shape === "ellipse"
      ? 1 / Math.hypot(dx / hw, dy / hh)
      : look.shape === "diamond"
        ? 1 / (Math.abs(dx) / hw + Math.abs(dy) / hh)
        : Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return { x: at.x + dx * t, y: at.y + dy * t };
}

/** The node's outline as an SVG shape centred on 0,0, `extra` wider and taller. */
export function shapeOf(look: Look, extra = 0): JSX.Element {
  const w = look.w + extra;
  const h = look.h + extra;
  if (look.shape === "ellipse") return <ellipse rx={w / 2} ry={h / 2} />;
  if (look.shape === "diamond") return <polygon points={`0,${-h / 2} ${w / 2},0 0,${h / 2} ${-w / 2},0`} />;
  if (look.shape === "tag") return <polygon points={`${-w / 2},${-h / 2} ${w / 4},${-h / 2} ${w / 2},0 ${w / 4},${h / 2} ${-w / 2},${h / 2}`} />;
  return <rect x={-w / 2} y={-h / 2} width={w} height={h} rx={Math.min(w, h) / 5} />;
}

/** An edge's colour, width and dashes, following graphStyle (elements.ts). */
export function edgeLook(cls: Set<string>, state: string, c: GraphColors): { stroke: string; width: number; dash?: string; opacity: number } {
  let look: { stroke: string; width: number; dash?: string; opacity: number } = {
    stroke: c.edge,
    width: c.highContrast ? 1.5 : 1,
    opacity: c.highContrast ? 1 : 0.75,
  };
  if (cls.has("inferred")) look = { ...look, stroke: c.muted, dash: "1 3" };
  if (cls.has("tested")) look.opacity = 1;
  if (cls.has("causal")) look = { ...look, stroke: c.causal, width: 2.5 };
  if (cls.has("ruled")) look = { ...look, stroke: c.ruledOut, width: 1.5, dash: "6 4" };
  if (cls.has("other")) look = { ...look, stroke: c.sensitive, width: 1.5, dash: "6 4" };
  if (state === "faded") look.opacity = cls.has("tested") ? 0.25 : 0.15;
  if (state === "traced") look = { ...look, opacity: 1, width: cls.has("causal") ? 3 : 2, stroke: cls.has("causal") ? c.causal : c.focus };
  return look;
}
