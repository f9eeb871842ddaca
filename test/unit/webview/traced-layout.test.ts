// A big run's traced lineage fits the panel: on a generated run of 1,461 graph nodes
// (test/browser/workers.mjs: long chains of calls), tracing one of worker-3's calls draws 240
// nodes one by one. Laid out in one row of layers they were a band 30,000 px wide, each node under
// a pixel once fitted; wrapped into rows, the traced nodes' box has about the panel's shape and
// each node stays several pixels wide (the keyboard and a zoom reach its label).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { RunGraph } from "../../../core/analysis/types";
import { System } from "../../../core/index";
import { recordWorkers } from "../../browser/workers.mjs";
import { readRun } from "../../../core/log/reader";
import { investigate } from "../../../core/analysis/investigate";
import { runGraphOf } from "../../../core/analysis/run-graph";
import { edgeVisible } from "../../../webview/logic";
import { LINEAGE_MAX, groupedView, lineage } from "../../../webview/graph/groups";
import { layeredLayout, wrappedLayout } from "../../../webview/graph/layout";
import { fitBox } from "../../../webview/graph/cy";
import { viewPositions } from "../../../webview/components/GraphScreen";

let rg: RunGraph;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-traced-"));
  await recordWorkers({ System }, dir, "workers");
  rg = runGraphOf(investigate(readRun(path.join(dir, "workers"))));
}, 120_000);

/** A typical investigator panel's drawing area (the graph beside its node panel), in px. */
const PANEL = { w: 1100, h: 640 };
/** The smallest node the SVG draws (a message's diamond; inputs are 30 × 20, calls 26 to 28). */
const NODE_PX = 20;

/**
 * The smallest node's size on screen once the box is fitted to the panel as SvgGraph fits the
 * traced nodes: labels' room around the box, 40 px padding, the legend's 50 px below.
 */
function nodePx(b: { x1: number; x2: number; y1: number; y2: number }): number {
  const { zoom } = fitBox({ x1: b.x1 - 100, x2: b.x2 + 100, y1: b.y1 - 15, y2: b.y2 + 33 }, PANEL.w, PANEL.h, 40, 50);
  return NODE_PX * zoom;
}

describe("a traced lineage in a big run", () => {
  test("is laid out in rows that fit the panel, nodes big enough to read", () => {
    expect(rg.graph.nodes.length).toBe(1461);
    const visible = (e: Parameters<typeof edgeVisible>[0]) => edgeVisible(e, { inferred: false, ruledOut: false });
    const calls = rg.graph.nodes.filter((n) => n.agent === "worker-3" && n.type === "action");
    const picked = calls[Math.floor(calls.length / 2)].id;
    const focus = lineage(rg.graph.edges.filter(visible), picked);
    expect(focus.length).toBe(LINEAGE_MAX);
    const view = groupedView(rg, visible, new Set(), focus);
    const positions = viewPositions(view, focus);
    const box = (ids: readonly string[], pos: Map<string, { x: number; y: number }>) => {
      const xs = ids.map((id) => pos.get(id)!.x);
      const ys = ids.map((id) => pos.get(id)!.y);
      return { x1: Math.min(...xs), x2: Math.max(...xs), y1: Math.min(...ys), y2: Math.max(...ys) };
    };
    const traced = box(focus, positions);
    const aspect = (traced.x2 - traced.x1) / Math.max(1, traced.y2 - traced.y1);
    // about the panel's shape (1100 / 640 = 1.7): not a band
    expect(aspect).toBeGreaterThan(1);
    expect(aspect).toBeLessThan(2.5);
    expect(nodePx(traced)).toBeGreaterThanOrEqual(5);
    // every traced node has a place of its own
    expect(new Set(focus.map((id) => `${positions.get(id)!.x},${positions.get(id)!.y}`)).size).toBe(focus.length);

    // the same nodes in one row of layers: the flat band the panel showed
    const viewEdges = view.edges.filter((e) => e.evidence !== "inferred");
    const flat = box(focus, layeredLayout(view.nodes, viewEdges, { dx: 220, dy: 120 }).positions);
    expect((flat.x2 - flat.x1) / Math.max(1, flat.y2 - flat.y1)).toBeGreaterThan(10);
    expect(nodePx(flat)).toBeLessThan(1);
  });

  test("wrapping keeps each row's layers left to right and a short chain in one row", () => {
    const chain = Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, seq: i }));
    const links = chain.slice(1).map((n, i) => ({ src: `n${i}`, dst: n.id }));
    const w = wrappedLayout(chain, links, { dx: 100, dy: 50 });
    expect(w.perRow).toBeLessThan(100);
    for (let i = 1; i < 100; i++) {
      const [a, b] = [w.positions.get(`n${i - 1}`)!, w.positions.get(`n${i}`)!];
      if (i % w.perRow)
        expect(b.x - a.x).toBe(100); // same row: the next layer to the right
      else expect(b.y).toBeGreaterThan(a.y); // wrapped: the start of the next row, below
    }
    const short = wrappedLayout(chain.slice(0, 3), links.slice(0, 2), { dx: 100, dy: 50 });
    expect(short.perRow).toBe(3);
  });
});
