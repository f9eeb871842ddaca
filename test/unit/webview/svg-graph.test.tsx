// @vitest-environment happy-dom
/** @jsxImportSource preact */
// The grouped view drawn as SVG (webview/components/SvgGraph.tsx) on the demo's real
// investigation: every group and edge drawn once, labels as text, clicks and keys that select or
// expand, a drag that pans without clicking, the selected lineage in focus, and a hostile label
// that stays text.
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import type { RunGraph } from "../../../core/analysis/types";
import { runGraphOf } from "../../../core/analysis/run-graph";
import { SvgGraph } from "../../../webview/components/SvgGraph";
import type { GraphNav } from "../../../webview/components/graph-nav";
import type { DrawnEdge } from "../../../webview/graph/cy";
import { buildElements, buildViewElements } from "../../../webview/graph/elements";
import { groupedView, lineage, type GraphView } from "../../../webview/graph/groups";
import { layeredLayout } from "../../../webview/graph/layout";
import type { GraphColors } from "../../../webview/graph/theme";
import { edgeVisible, trace } from "../../../webview/logic";
import { HOSTILE } from "../../browser/hostile.mjs";
import { demoData, step } from "./fixture";

const COLORS: GraphColors = {
  background: "rgb(255, 255, 255)",
  foreground: "rgb(51, 51, 51)",
  muted: "rgb(113, 113, 113)",
  edge: "rgb(140, 140, 140)",
  trusted: "rgb(26, 133, 255)",
  untrusted: "rgb(209, 134, 22)",
  task: "rgb(26, 133, 255)",
  decision: "rgb(101, 45, 144)",
  action: "rgb(56, 138, 52)",
  message: "rgb(191, 136, 3)",
  sensitive: "rgb(191, 136, 3)",
  flagged: "rgb(229, 20, 0)",
  causal: "rgb(229, 20, 1)",
  ruledOut: "rgb(140, 140, 141)",
  focus: "rgb(0, 144, 241)",
  labelBackground: "rgb(255, 255, 255)",
  fontFamily: "sans-serif",
  highContrast: false,
};

let rg: RunGraph;
beforeAll(async () => {
  rg = runGraphOf((await demoData()).runs["demo-seed0"]);
}, 120_000);

const visible = (e: Parameters<typeof edgeVisible>[0]) => edgeVisible(e, { inferred: false, ruledOut: false });

function elementsOf(view: GraphView) {
  const layout = layeredLayout(view.nodes, view.edges, { dx: 220, dy: 120 });
  return buildViewElements(rg, view, layout.positions);
}

let host: HTMLElement | null = null;
afterEach(() => {
  if (host) render(null, host);
  host?.remove();
  host = null;
});

/** Mounts the view; returns what it called back. */
function draw(props: { view: GraphView; picked?: string | null; focus?: string[]; elements?: ReturnType<typeof elementsOf>; viewKey?: string }) {
  const calls = { taps: [] as string[], background: 0, drawn: 0 };
  const nav: { current: GraphNav | null } = { current: null };
  host = document.createElement("div");
  document.body.append(host);
  step(() => {
    render(
      <SvgGraph
        elements={props.elements ?? elementsOf(props.view)}
        picked={props.picked ?? null}
        focus={props.focus ?? []}
        colors={COLORS}
        nav={nav}
        viewKey={props.viewKey}
        onDrawn={() => calls.drawn++}
        onTapNode={(id) => calls.taps.push(id)}
        onTapBackground={() => calls.background++}
      />,
      host!,
    );
  });
  return { svg: host.querySelector("svg.graph-svg")!, calls, nav };
}

const pointer = (el: Element, type: string, x: number, y: number) =>
  step(() => {
    el.dispatchEvent(new PointerEvent(type, { bubbles: true, clientX: x, clientY: y, button: 0, pointerId: 1 }));
  });

describe("the grouped view as SVG", () => {
  test("draws every group and node of the view once, labelled in text, and every merged edge with its arrow", () => {
    const view = groupedView(rg, visible, new Set());
    const { svg } = draw({ view });
    const nodes = [...svg.querySelectorAll(".gnode")];
    expect(nodes.map((n) => n.getAttribute("data-node")).sort()).toEqual(view.nodes.map((n) => n.id).sort());
    // a group's label: its name, then what it holds
    const agent = view.nodes.find((n) => n.group?.kind === "agent")!;
    const g = svg.querySelector(`.gnode[data-node="${agent.id}"]`)!;
    expect([...g.querySelectorAll("tspan")].map((t) => t.textContent)).toEqual([agent.group!.label, expect.stringMatching(/^\d+ calls?$/)]);
    expect(g.getAttribute("aria-label")).toContain(agent.group!.label);
    expect(svg.querySelectorAll(".gedge").length).toBe(view.edges.length);
    for (const e of svg.querySelectorAll(".gedge")) {
      expect(e.querySelector("path")!.getAttribute("d")).toMatch(/^M[-\d.]+ [-\d.]+ [LQ]/);
      expect(e.querySelector("polygon")!.getAttribute("points")!.split(" ")).toHaveLength(3);
    }
    // what the end-to-end tests read of the drawing
    const read = (window as unknown as { __causewayGraphEdges: () => DrawnEdge[] }).__causewayGraphEdges();
    expect(read).toHaveLength(view.edges.length);
    expect(read[0].sourceLabel).not.toBe("");
  });

  test("a click on a group asks to expand it, on the background to clear the selection; a drag pans and clicks nothing", () => {
    const view = groupedView(rg, visible, new Set());
    const { svg, calls } = draw({ view });
    const agent = view.nodes.find((n) => n.group?.kind === "agent")!;
    const shape = svg.querySelector(`.gnode[data-node="${agent.id}"] .shape > *`)!;
    pointer(shape, "pointerdown", 100, 100);
    pointer(shape, "pointerup", 101, 100);
    expect(calls.taps).toEqual([agent.id]);
    pointer(svg, "pointerdown", 10, 10);
    pointer(svg, "pointerup", 10, 10);
    expect(calls.background).toBe(1);
    const layer = svg.querySelector("g")!;
    const before = layer.getAttribute("transform");
    pointer(shape, "pointerdown", 100, 100);
    pointer(shape, "pointermove", 160, 130);
    pointer(shape, "pointerup", 160, 130);
    expect(calls.taps).toEqual([agent.id]);
    expect(calls.background).toBe(1);
    const [x0, y0] = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(before!)!.slice(1).map(Number);
    const [x1, y1] = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(layer.getAttribute("transform")!)!.slice(1).map(Number);
    expect([x1 - x0, y1 - y0]).toEqual([60, 30]);
  });

  test("the graph is one tab stop; arrow keys go from node to node and Enter selects; the toolbar's zoom keeps the centre", () => {
    const view = groupedView(rg, visible, new Set());
    const { svg, calls, nav } = draw({ view });
    const nodes = [...svg.querySelectorAll<SVGGElement>(".gnode")];
    expect(nodes.every((g) => g.getAttribute("role") === "button")).toBe(true);
    // one node takes Tab (the leftmost), the others only the arrow keys
    const stops = nodes.filter((g) => g.getAttribute("tabindex") === "0");
    expect(stops).toHaveLength(1);
    expect(nodes.filter((g) => g.getAttribute("tabindex") === "-1")).toHaveLength(nodes.length - 1);
    const x = (g: Element) => Number(/translate\(([-\d.]+) /.exec(g.getAttribute("transform")!)![1]);
    expect(x(stops[0])).toBe(Math.min(...nodes.map(x)));
    const key = (g: Element, k: string) => {
      const e = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
      step(() => {
        g.dispatchEvent(e);
      });
      return e;
    };
    step(() => stops[0].focus());
    expect(document.activeElement).toBe(stops[0]);
    // ArrowRight: the focus moves to a node further right, which becomes the tab stop; the key is
    // used (the container would have panned)
    const used = key(stops[0], "ArrowRight");
    expect(used.defaultPrevented).toBe(true);
    const next = document.activeElement as Element;
    expect(next).not.toBe(stops[0]);
    expect(next.getAttribute("class")).toMatch(/\bgnode\b/);
    expect(x(next)).toBeGreaterThan(x(stops[0]));
    expect(next.getAttribute("tabindex")).toBe("0");
    expect(svg.querySelectorAll('.gnode[tabindex="0"]')).toHaveLength(1);
    // ArrowLeft goes back left; Home and End reach the ends; a key of the graph's own passes through
    key(next, "ArrowLeft");
    expect(x(document.activeElement!)).toBeLessThan(x(next));
    key(document.activeElement!, "Home");
    expect(document.activeElement).toBe(stops[0]);
    key(stops[0], "End");
    expect(x(document.activeElement!)).toBe(Math.max(...nodes.map(x)));
    expect(key(document.activeElement!, "+").defaultPrevented).toBe(false);
    // Enter selects the focused node
    const focused = document.activeElement!;
    key(focused, "Enter");
    expect(calls.taps).toEqual([focused.getAttribute("data-node")]);
    const scale = () => Number(/scale\(([-\d.]+)\)/.exec(svg.querySelector("g")!.getAttribute("transform")!)![1]);
    const z = scale();
    step(() => nav.current!.zoomBy(2));
    expect(scale()).toBeCloseTo(Math.min(4, z * 2), 6);
  });

  test("drawn again, the same nodes come back at the zoom and pan they were left at; other nodes are fitted", () => {
    const view = groupedView(rg, visible, new Set());
    const elements = elementsOf(view);
    const transform = (svg: Element) => svg.querySelector("g")!.getAttribute("transform");
    const first = draw({ view, elements, viewKey: "run-a" });
    const fitted = transform(first.svg);
    step(() => first.nav.current!.zoomBy(2));
    step(() => first.nav.current!.panBy(30, -20));
    const left = transform(first.svg);
    expect(left).not.toBe(fitted);
    render(null, host!);
    // the screen opened again on the same run
    expect(transform(draw({ view, elements, viewKey: "run-a" }).svg)).toBe(left);
    render(null, host!);
    // another run, and the same run with other nodes drawn (a group expanded), are fitted
    expect(transform(draw({ view, elements, viewKey: "run-b" }).svg)).toBe(fitted);
    render(null, host!);
    const fewer = elements.filter((el) => !(el.group === "nodes" && el.data.id === view.nodes.at(-1)!.id));
    expect(transform(draw({ view, elements: fewer, viewKey: "run-a" }).svg)).not.toBe(left);
  });

  test("a selected node's lineage stands out and the rest fades", () => {
    const action = rg.graph.nodes.find((n) => n.type === "action" && rg.marks[n.id]?.high)!;
    const shown = rg.graph.edges.filter(visible);
    const focus = lineage(shown, action.id);
    const view = groupedView(rg, visible, new Set(), focus);
    const { svg } = draw({ view, picked: action.id, focus });
    const cls = (id: string) => svg.querySelector(`.gnode[data-node="${CSS.escape(id)}"]`)!.getAttribute("class")!;
    expect(cls(action.id)).toMatch(/\btraced\b/);
    const faded = view.nodes.filter((n) => !focus.includes(n.id));
    expect(faded.length).toBeGreaterThan(0);
    for (const n of faded) expect(cls(n.id)).toMatch(/\bfaded\b/);
    const edges = (window as unknown as { __causewayGraphEdges: () => DrawnEdge[] }).__causewayGraphEdges();
    const traced = edges.filter((e) => e.classes.includes("traced"));
    expect(traced.length).toBeGreaterThan(0);
    for (const e of traced) expect(focus.includes(e.source) && focus.includes(e.target)).toBe(true);
    expect(traced.every((e) => e.color === COLORS.focus || e.color === COLORS.causal)).toBe(true);
  });

  test("reports its first frame once per view", async () => {
    const view = groupedView(rg, visible, new Set());
    const { calls } = draw({ view });
    await new Promise((r) => setTimeout(r, 50));
    await act(async () => {
      for (let i = 0; i < 50 && !calls.drawn; i++) await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    });
    expect(calls.drawn).toBe(1);
  });

  test("a hostile label is drawn as text and creates no element or attribute", () => {
    const view = groupedView(rg, visible, new Set());
    const elements = elementsOf(view);
    HOSTILE.forEach((label, i) =>
      elements.push({ group: "nodes", data: { id: `hostile-${i}`, label }, position: { x: 40 * i, y: 900 }, classes: "input untrusted" }),
    );
    const { svg } = draw({ view, elements });
    const texts = [...svg.querySelectorAll(".gnode text")].map((t) => t.textContent);
    for (const s of HOSTILE) expect(texts).toContain(s);
    for (const el of svg.querySelectorAll("*")) {
      expect(["svg", "g", "title", "text", "tspan", "path", "polygon", "rect", "ellipse"]).toContain(el.tagName.toLowerCase());
      for (const a of el.attributes) expect(a.name.startsWith("on")).toBe(false);
    }
  });
});

describe("a small run's whole graph as SVG", () => {
  const whole = (toggles = { inferred: false, ruledOut: false }) =>
    buildElements(
      rg,
      layeredLayout(
        rg.graph.nodes,
        rg.graph.edges.filter((e) => e.evidence === "observed"),
      ).positions,
      (e) => edgeVisible(e, toggles),
    );

  test("draws every node once and only the edges the toggles show; the hook reports the hidden ones as hidden, colours as rgb()", () => {
    const shown = rg.graph.edges.filter(visible).length;
    expect(shown).toBeLessThan(rg.graph.edges.length); // the demo has inferred edges, hidden by default
    const { svg } = draw({ view: groupedView(rg, visible, new Set()), elements: whole() });
    expect(svg.querySelectorAll(".gnode")).toHaveLength(rg.graph.nodes.length);
    expect(svg.querySelectorAll(".gedge")).toHaveLength(shown);
    expect(svg.getAttribute("aria-label")).toBe(`${rg.graph.nodes.length} nodes, ${shown} links`);
    const read = (window as unknown as { __causewayGraphEdges: () => DrawnEdge[] }).__causewayGraphEdges();
    expect(read).toHaveLength(rg.graph.edges.length);
    expect(read.filter((e) => e.visible)).toHaveLength(shown);
    const cause = read.find((e) => e.classes.includes("causal"))!;
    expect(cause.color).toBe("rgb(229, 20, 1)");
    expect(cause.label).toMatch(/^\+0\.\d\d$/);
  });

  test("a selection restyles the nodes without refitting the viewport; upstream and downstream stay, the rest fades; a node off screen is centred", () => {
    const action = rg.graph.nodes.find((n) => n.type === "action" && rg.marks[n.id]?.high)!;
    const { svg, nav } = draw({ view: groupedView(rg, visible, new Set()), elements: whole() });
    nav.current!.zoomBy(2);
    const zoomed = svg.querySelector("svg > g")!.getAttribute("transform");
    const t = trace(rg.graph.edges.filter(visible), action.id);
    const focus = [action.id, ...t.up, ...t.down];
    step(() => {
      render(
        <SvgGraph
          elements={whole()}
          picked={action.id}
          focus={focus}
          colors={COLORS}
          nav={nav}
          onDrawn={() => {}}
          onTapNode={() => {}}
          onTapBackground={() => {}}
        />,
        host!,
      );
    });
    // not refitted: the zoom stays (the view may move to bring the node on screen)
    const scale = (t: string | null) => Number(/scale\(([-\d.e]+)\)/.exec(t!)![1]);
    expect(scale(svg.querySelector("svg > g")!.getAttribute("transform"))).toBe(scale(zoomed));
    expect(svg.querySelectorAll(".gnode.traced")).toHaveLength(focus.length);
    expect(svg.querySelectorAll(".gnode.faded")).toHaveLength(rg.graph.nodes.length - focus.length);
    // panned far away, a node selected by name is brought to the centre (the zoom stays)
    nav.current!.panBy(100_000, 0);
    const task = rg.graph.nodes.find((n) => n.type === "input" && n.kind === "task")!;
    step(() => {
      render(
        <SvgGraph
          elements={whole()}
          picked={task.id}
          focus={[task.id]}
          colors={COLORS}
          nav={nav}
          onDrawn={() => {}}
          onTapNode={() => {}}
          onTapBackground={() => {}}
        />,
        host!,
      );
    });
    const [, x, y, zoom] = /translate\(([-\d.e]+) ([-\d.e]+)\) scale\(([-\d.e]+)\)/.exec(svg.querySelector("svg > g")!.getAttribute("transform")!)!.map(Number);
    expect(zoom).toBe(scale(zoomed));
    const at = svg.querySelector(`.gnode[data-node="${task.id}"]`)!.getAttribute("transform")!;
    const [, nx, ny] = /translate\(([-\d.e]+) ([-\d.e]+)\)/.exec(at)!.map(Number);
    expect(nx * zoom + x).toBeCloseTo(400); // happy-dom has no layout: an 800 × 600 box
    expect(ny * zoom + y).toBeCloseTo(300);
  });
});
