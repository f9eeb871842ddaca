// View logic and formatting: filters, groupings, traces, rankings, the layered graph layout and the
// report's URL state.
import { describe, expect, test } from "vitest";
import type { InfluenceSource, TimelineRow } from "../../../core/analysis/types";
import type { GEdge } from "../../../core/graph/graph";
import { effect, interval, ms, pct, rates, verdictLabel } from "../../../webview/labels";
import { crossings, layeredLayout } from "../../../webview/graph/layout";
import { blend, opaque, parseColor } from "../../../webview/graph/theme";
import { DEFAULT_UI, formatHash, parseHash } from "../../../webview/host";
import { edgeVisible, filterTimeline, jobOutcome, lineageGroups, rankedSources, sortedAlerts, trace } from "../../../webview/logic";
import { orderFlags } from "../../../webview/components/TimelineScreen";

describe("format", () => {
  test("effects, intervals and rates", () => {
    expect(effect(0.8)).toBe("+0.80");
    expect(effect(-0.1755)).toBe("\u22120.18");
    expect(effect(0)).toBe("+0.00");
    expect(effect(-0.001)).toBe("+0.00");
    expect(effect(null)).toBe("—");
    expect(interval([0.6284, 0.895])).toBe("[+0.63, +0.90]");
    expect(rates(0.8, 0)).toBe("80% \u2192 0%");
    expect(pct(0.925)).toBe("93%");
    expect(ms(0.138)).toBe("0.14 ms");
    expect(ms(8.247)).toBe("8.2 ms");
    expect(ms(1350)).toBe("1.35 s");
    expect(ms(null)).toBe("");
    expect(verdictLabel("causal", "primary")).toBe("Primary cause");
    expect(verdictLabel("ruled-out")).toBe("Ruled out");
  });
});

const row = (seq: number, agent: string, type: string, text: string, flags: string[] = []): TimelineRow => ({
  seq,
  id: `e${seq}`,
  node: null,
  line: seq + 1,
  type,
  agent,
  t_ms: seq,
  duration_ms: null,
  text,
  trust: null,
  status: null,
  sensitive: false,
  mode: null,
  usage: null,
  flags,
});

describe("timeline", () => {
  const rows = [
    row(0, "run", "run.start", "Run started"),
    row(1, "researcher", "input", "researcher read vendor:portal/notes.md", ["untrusted"]),
    row(2, "executor", "action", "executor ran send_email({to: audit@vendor-compliance.example})", ["sensitive", "alert"]),
    row(3, "executor", "action", "executor ran lookup_order"),
  ];
  const none = { agent: "", type: "", text: "", flagged: false };
  test("filters combine agent, type, text and flagged", () => {
    expect(filterTimeline(rows, none)).toHaveLength(4);
    expect(filterTimeline(rows, { ...none, agent: "executor" }).map((r) => r.seq)).toEqual([2, 3]);
    expect(filterTimeline(rows, { ...none, type: "input" }).map((r) => r.seq)).toEqual([1]);
    expect(filterTimeline(rows, { ...none, text: "VENDOR" }).map((r) => r.seq)).toEqual([1, 2]);
    expect(filterTimeline(rows, { ...none, text: "#3" }).map((r) => r.seq)).toEqual([3]);
    expect(filterTimeline(rows, { ...none, flagged: true }).map((r) => r.seq)).toEqual([1, 2]);
    expect(filterTimeline(rows, { ...none, agent: "executor", text: "vendor" }).map((r) => r.seq)).toEqual([2]);
  });
  test("flags show the most important first", () => {
    expect(orderFlags(["sensitive", "untrusted", "alert", "odd"])).toEqual(["alert", "untrusted", "sensitive", "odd"]);
  });
});

describe("lineage and trace", () => {
  test("chains sharing a path after their root are grouped", () => {
    const g = lineageGroups([
      ["a", "d", "m", "x"],
      ["b", "d", "m", "x"],
      ["c", "e", "x"],
      ["a", "d", "m", "x"],
    ]);
    expect(g).toEqual([
      { roots: ["a", "b"], path: ["d", "m", "x"] },
      { roots: ["c"], path: ["e", "x"] },
    ]);
  });

  const E = (src: string, dst: string, evidence: GEdge["evidence"] = "observed", verdict?: string): GEdge => ({ src, dst, kind: "k", evidence, verdict });
  test("trace walks upstream and downstream, not sideways", () => {
    const edges = [E("a", "b"), E("b", "c"), E("x", "b"), E("c", "d"), E("y", "z")];
    const t = trace(edges, "b");
    expect([...t.up].sort()).toEqual(["a", "x"]);
    expect([...t.down].sort()).toEqual(["c", "d"]);
    expect([...t.edges].sort()).toEqual([0, 1, 2, 3]);
  });
  test("inferred edges and ruled-out tests are hidden unless switched on", () => {
    const off = { inferred: false, ruledOut: false };
    expect(edgeVisible(E("a", "b"), off)).toBe(true);
    expect(edgeVisible(E("a", "b", "inferred"), off)).toBe(false);
    expect(edgeVisible(E("a", "b", "inferred"), { ...off, inferred: true })).toBe(true);
    expect(edgeVisible(E("a", "b", "tested", "causal"), off)).toBe(true);
    expect(edgeVisible(E("a", "b", "tested", "ruled-out"), off)).toBe(false);
    expect(edgeVisible(E("a", "b", "tested", "ruled-out"), { ...off, ruledOut: true })).toBe(true);
  });
});

describe("rankings", () => {
  test("alerts by severity, stable", () => {
    const a = (severity: "high" | "review" | "info", title: string) => ({ severity, title, rule: "r", detail: "", seq: null, tool: null });
    expect(sortedAlerts([a("info", "i"), a("review", "r1"), a("high", "h"), a("review", "r2")]).map((x) => x.title)).toEqual(["h", "r1", "r2", "i"]);
  });
  test("sources by strongest tested effect, untested last", () => {
    const s = (id: string, max_effect: number | null, runs = 1): InfluenceSource => ({
      id,
      labels: [id],
      trust: null,
      runs,
      cited_by: 1,
      preview: "",
      max_effect,
      confirmed_tools: [],
    });
    expect(rankedSources({ sources: [s("u", null, 9), s("a", 0), s("b", 0.93), s("c", 0.8)], outcomes: [], edges: [] }).map((x) => x.id)).toEqual([
      "b",
      "c",
      "a",
      "u",
    ]);
  });
  test("job results are read defensively", () => {
    expect(jobOutcome("test", { verdict: "causal", role: "primary", effect: 0.8, ci: [0.6, 0.9], p_with: 0.8, p_without: 0, n: 40 })).toMatchObject({
      verdict: "causal",
      effect: 0.8,
      ci: [0.6, 0.9],
      n: 40,
    });
    expect(jobOutcome("test", "garbage")).toMatchObject({ kind: "test", verdict: undefined, effect: undefined });
    expect(jobOutcome("attribution", { causes: [{ spec: "input:x", role: "primary", effect: 0.5, ci: [0.2, 0.7] }, { spec: 3 }], summary: 5 })).toMatchObject({
      causes: [{ spec: "input:x", role: "primary", effect: 0.5, ci: [0.2, 0.7] }],
      summary: undefined,
    });
  });
});

describe("layered layout", () => {
  test("every edge points left to right and no two nodes share a place", () => {
    const nodes = Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, seq: i }));
    const edges = [
      ["n0", "n4"],
      ["n1", "n4"],
      ["n2", "n4"],
      ["n3", "n5"],
      ["n4", "n6"],
      ["n5", "n6"],
      ["n6", "n7"],
      ["n7", "n8"],
      ["n7", "n9"],
      ["n0", "n9"],
      ["n10", "n11"],
    ].map(([src, dst]) => ({ src, dst }));
    const { positions } = layeredLayout(nodes, edges);
    for (const e of edges) expect(positions.get(e.src)!.x).toBeLessThan(positions.get(e.dst)!.x);
    const places = new Set([...positions.values()].map((p) => `${p.x},${p.y}`));
    expect(places.size).toBe(nodes.length);
  });

  test("edges against event order do not loop the layering", () => {
    const { positions } = layeredLayout(
      [
        { id: "a", seq: 0 },
        { id: "b", seq: 1 },
      ],
      [
        { src: "a", dst: "b" },
        { src: "b", dst: "a" },
      ],
    );
    expect(positions.get("a")!.x).toBeLessThan(positions.get("b")!.x);
  });

  test("barycentre sweeps remove crossings the event order creates", () => {
    // Two chains whose middle nodes arrive in the opposite order: a0→b1, a1→b0.
    const nodes = [
      { id: "a0", seq: 0 },
      { id: "a1", seq: 1 },
      { id: "b0", seq: 2 },
      { id: "b1", seq: 3 },
      { id: "c0", seq: 4 },
      { id: "c1", seq: 5 },
    ];
    const edges = [
      { src: "a0", dst: "b1" },
      { src: "a1", dst: "b0" },
      { src: "b1", dst: "c0" },
      { src: "b0", dst: "c1" },
    ];
    expect(crossings(layeredLayout(nodes, edges, { sweeps: 0 }), edges)).toBeGreaterThan(0);
    expect(crossings(layeredLayout(nodes, edges), edges)).toBe(0);
  });

  test("2,000 nodes: every node placed, each edge pointing forward (speed: bench/webview-graph.mjs)", () => {
    const nodes = Array.from({ length: 2000 }, (_, i) => ({ id: `n${i}`, seq: i }));
    const edges = [];
    for (let i = 1; i < 2000; i++) {
      edges.push({ src: `n${Math.floor(i / 3)}`, dst: `n${i}` });
      if (i > 10) edges.push({ src: `n${i - 7}`, dst: `n${i}` });
    }
    const { positions } = layeredLayout(nodes, edges);
    expect(positions.size).toBe(2000);
    for (const e of edges) expect(positions.get(e.dst)!.x).toBeGreaterThan(positions.get(e.src)!.x);
  });
});

describe("colours and URL state", () => {
  test("theme colours become opaque rgb() for the canvas", () => {
    expect(parseColor("#f14c4c")).toEqual([241, 76, 76, 1]);
    expect(parseColor("#fff")).toEqual([255, 255, 255, 1]);
    expect(opaque("#cccccc80", "#000000", "#000")).toBe("rgb(102, 102, 102)");
    expect(opaque("rgba(255, 0, 0, 0.5)", "#ffffff", "#000")).toBe("rgb(255, 128, 128)");
    expect(opaque("not a colour", "#ffffff", "#123456")).toBe("rgb(18, 52, 86)");
    expect(blend("#000000", "#ffffff", 0.25)).toBe("rgb(64, 64, 64)");
  });

  test("the report keeps its screen in the URL fragment", () => {
    const ui = {
      ...DEFAULT_UI,
      screen: "why" as const,
      run: "demo seed/0&x",
      action: "ev:abc",
      record: 7,
      filters: { agent: "a", type: "", text: "<b>", flagged: true },
      theme: "hc" as const,
    };
    const back = parseHash(`#${formatHash(ui)}`)!;
    expect(back).toMatchObject({
      screen: "why",
      run: "demo seed/0&x",
      action: "ev:abc",
      record: 7,
      filters: { agent: "a", type: "", text: "<b>", flagged: true },
      theme: "hc",
    });
    expect(parseHash("#screen=nonsense&theme=evil")).toMatchObject({ screen: undefined, theme: "auto" });
    expect(parseHash("")).toBeUndefined();
  });
});
