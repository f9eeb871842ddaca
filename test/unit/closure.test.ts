import { describe, it, expect } from "vitest";
import { Graph, type GNode, type NodeType } from "../../core/graph/graph";
import { Bits, closure, topoOrder } from "../../core/graph/closure";

const node = (i: number, type: NodeType = "decision"): GNode => ({
  id: `n${i}`,
  type,
  agent: "a",
  seq: i,
  line: i + 1,
  label: `n${i}`,
  trust: "trusted",
  eventId: `e${i}`,
});

/** A graph of n nodes with the given edges (observed unless said). */
function graph(n: number, edges: [number, number, ("observed" | "inferred")?][]): Graph {
  const g = new Graph();
  for (let i = 0; i < n; i++) g.nodes.set(`n${i}`, node(i, i % 3 === 0 ? "input" : i % 3 === 1 ? "decision" : "action"));
  for (const [s, d, ev] of edges) g.addEdge({ src: `n${s}`, dst: `n${d}`, kind: "k", evidence: ev ?? "observed" });
  return g;
}

const labels = (b: Bits | undefined) => {
  const out: number[] = [];
  b?.forEach((i) => out.push(i));
  return out;
};

describe("reach of every node in one pass", () => {
  it("equals a search per node, both ways, on a random graph whose edges run forward (a log's)", () => {
    let x = 7;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const n = 300;
    const edges: [number, number, ("observed" | "inferred")?][] = [];
    for (let d = 1; d < n; d++) for (let k = 0; k < 3; k++) if (rnd() < 0.7) edges.push([Math.floor(rnd() * d), d, rnd() < 0.1 ? "inferred" : "observed"]);
    const g = graph(n, edges);
    const all = (id: string) => Number(id.slice(1));
    const up = closure(g, { direction: "up", evidence: ["observed"], width: n, labelOf: (m) => all(m.id), keep: () => true })!;
    const down = closure(g, { direction: "down", evidence: ["observed"], width: n, labelOf: (m) => all(m.id), keep: () => true })!;
    for (const id of g.nodes.keys()) {
      expect(labels(up.get(id))).toEqual([...g.ancestors(id)].map(all).sort((a, b) => a - b));
      expect(labels(down.get(id))).toEqual(
        [...g.descendants([id]).keys()]
          .filter((d) => d !== id)
          .map(all)
          .sort((a, b) => a - b),
      );
    }
    // keeping fewer sets lets a node take over its parent's: the same answers
    const some = closure(g, { direction: "up", evidence: ["observed"], width: n, labelOf: (m) => all(m.id), keep: (m) => m.type === "action" })!;
    expect([...some.keys()].length).toBe(100);
    for (const [id, b] of some) expect(labels(b)).toEqual([...g.ancestors(id)].map(all).sort((a, b) => a - b));
    // labels name only what the caller asks for, and only kept nodes are returned
    const tools = closure(g, {
      direction: "down",
      evidence: ["observed"],
      width: 1,
      labelOf: (m) => (m.type === "action" ? 0 : -1),
      keep: (m) => m.type === "input",
    })!;
    expect([...tools.keys()].every((id) => g.nodes.get(id)!.type === "input")).toBe(true);
    for (const [id, b] of tools) expect(b.has(0)).toBe([...g.descendants([id]).keys()].some((d) => d !== id && g.nodes.get(d)!.type === "action"));
  });

  it("finds no order in a cycle (a hostile log), so callers search per node", () => {
    const g = graph(4, [
      [0, 1],
      [1, 2],
      [2, 1],
      [2, 3],
    ]);
    expect(topoOrder(g, ["observed"])).toBeNull();
    expect(closure(g, { direction: "up", evidence: ["observed"], width: 4, labelOf: () => 0, keep: () => true })).toBeNull();
    // an edge against the log's order is fine as long as there is no cycle
    const back = graph(3, [
      [2, 0],
      [0, 1],
    ]);
    expect(topoOrder(back, ["observed"])!.map((m) => m.id)).toEqual(["n2", "n0", "n1"]);
    expect(
      labels(closure(back, { direction: "up", evidence: ["observed"], width: 3, labelOf: (m) => Number(m.id.slice(1)), keep: () => true })!.get("n1")),
    ).toEqual([0, 2]);
  });

  it("bit sets hold labels past one word", () => {
    const b = Bits.empty(70);
    for (const i of [0, 31, 32, 69]) b.add(i);
    expect(labels(b)).toEqual([0, 31, 32, 69]);
    expect(b.has(33)).toBe(false);
    expect(b.has(-1)).toBe(false);
  });
});
