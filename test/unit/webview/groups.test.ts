// The grouped first view of a big graph (webview/graph/groups.ts) and the fitted viewport's room
// for labels, on the demo's real investigations.
import { beforeAll, describe, expect, test } from "vitest";
import type { Investigation, RunGraph } from "../../../core/analysis/types";
import { runGraphOf } from "../../../core/analysis/run-graph";
import type { ReportData } from "../../../webview/host";
import { edgeVisible } from "../../../webview/logic";
import { groupKey, groupedView, lineage } from "../../../webview/graph/groups";
import { fitted } from "../../../webview/graph/cy";
import { LABEL_MARGIN } from "../../../webview/graph/elements";
import { forceLayout, layeredLayout } from "../../../webview/graph/layout";
import { demoData } from "./fixture";

let inv: Investigation;
/** The Graph screen's part of it (what groupedView reads). */
let rg: RunGraph;
beforeAll(async () => {
  const data: ReportData = await demoData();
  inv = data.runs["demo-seed0"];
  rg = runGraphOf(inv);
}, 120_000);

const visible = (e: Parameters<typeof edgeVisible>[0]) => edgeVisible(e, { inferred: false, ruledOut: false });

describe("grouped view", () => {
  test("draws every node once, alone or in its group, and every visible edge between groups once", () => {
    const v = groupedView(rg, visible, new Set());
    expect(v.groups.size).toBeGreaterThan(0);
    expect(v.nodes.length).toBeLessThan(inv.graph.nodes.length);
    const drawn = new Map<string, number>();
    for (const n of v.nodes) for (const m of n.group ? n.group.members : [n.id]) drawn.set(m, (drawn.get(m) ?? 0) + 1);
    expect(drawn.size).toBe(inv.graph.nodes.length);
    expect([...drawn.values()].every((c) => c === 1)).toBe(true);
    for (const n of inv.graph.nodes) expect(v.viewOf.get(n.id)).toBeDefined();
    // agents' calls go to their agent's group; the task stays alone
    const decision = inv.graph.nodes.find((n) => n.type === "decision")!;
    expect(v.viewOf.get(decision.id)).toBe(`group:agent:${decision.agent}`);
    const task = inv.graph.nodes.find((n) => n.type === "input" && n.kind === "task")!;
    expect(v.viewOf.get(task.id)).toBe(task.id);
    // merged edges: each visible edge between two different drawn nodes in exactly one of them
    const counted = new Map<number, number>();
    for (const e of v.edges) for (const i of e.members) counted.set(i, (counted.get(i) ?? 0) + 1);
    inv.graph.edges.forEach((e, i) => {
      const crosses = visible(e) && v.viewOf.get(e.src) !== v.viewOf.get(e.dst);
      expect(counted.get(i) ?? 0).toBe(crosses ? 1 : 0);
    });
    // the tested cause (vendor note → the email) survives the merge, labelled by its effect
    expect(v.edges.some((e) => e.causal !== undefined && inv.graph.edges[e.causal].verdict === "causal")).toBe(true);
  });

  test("an expanded group and a selected node's lineage are drawn node by node", () => {
    const agent = inv.graph.nodes.find((n) => n.type === "action")!.agent;
    const v = groupedView(rg, visible, new Set([`agent:${agent}`]));
    for (const n of inv.graph.nodes.filter((x) => groupKey(x)?.key === `agent:${agent}`)) expect(v.viewOf.get(n.id)).toBe(n.id);
    const email = Object.values(inv.actions).find((a) => a.alerts.includes("high"))!;
    const line = lineage(inv.graph.edges.filter(visible), email.node);
    expect(line[0]).toBe(email.node);
    expect(line.length).toBeGreaterThan(3);
    const focused = groupedView(rg, visible, new Set(), line);
    for (const id of line) expect(focused.viewOf.get(id)).toBe(id);
    // nearest first, and capped
    expect(lineage(inv.graph.edges.filter(visible), email.node, 3)).toEqual(line.slice(0, 3));
  });
});

describe("fitted viewport", () => {
  test("leaves room left and right for the outermost nodes' labels", () => {
    const positions = new Map([
      ["a", { x: 0, y: 0 }],
      ["b", { x: 1000, y: 300 }],
    ]);
    const { zoom, pan } = fitted(positions, 800, 600);
    // a label centred under the leftmost node reaches LABEL_MARGIN to its left: still on screen
    expect(pan.x + (0 - LABEL_MARGIN) * zoom).toBeGreaterThanOrEqual(0);
    expect(pan.x + (1000 + LABEL_MARGIN) * zoom).toBeLessThanOrEqual(800);
  });
});

describe("the groups' placement", () => {
  test("is the same every time and keeps every two nodes apart", () => {
    const v = groupedView(rg, visible, new Set());
    const ids = v.nodes.map((n) => n.id);
    const start = layeredLayout(v.nodes, v.edges, { dx: 220, dy: 120 }).positions;
    const a = forceLayout(ids, v.edges, start);
    expect(forceLayout(ids, v.edges, start)).toEqual(a);
    expect([...a.keys()].sort()).toEqual([...ids].sort());
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        const p = a.get(ids[i])!;
        const q = a.get(ids[j])!;
        expect(Math.hypot(p.x - q.x, p.y - q.y)).toBeGreaterThan(40);
      }
    }
  });
});
