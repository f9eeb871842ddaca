// @vitest-environment happy-dom
/** @jsxImportSource preact */
// The investigator rendered from the demo's real investigations: every screen's key content, the
// host protocol (requests with ids, progress, results, cancel), keyboard use and kept state.
import { beforeAll, describe, expect, test } from "vitest";
import type { ReportData } from "../../../webview/host";
import { REPORT_REASON } from "../../../webview/host";
import { ScriptedHost, VSCODE, connect, demoData, mount, step, text, withText } from "./fixture";
import { runGraphOf } from "../../../core/analysis/run-graph";

let data: ReportData;
beforeAll(async () => {
  data = await demoData();
}, 120_000);

const key = (el: Element, k: string) => step(() => el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true })));
const click = (el: Element) => step(() => (el as HTMLElement).click());

describe("runs and overview", () => {
  test("the Runs screen lists every run with alerts, tests and integrity", () => {
    const host = new ScriptedHost(VSCODE);
    const { root } = mount(host);
    expect(host.posted[0]).toEqual({ type: "ready" });
    connect(host, data);
    const rows = root.querySelectorAll(".runs-table tbody tr");
    expect(rows).toHaveLength(8);
    const seed0 = withText(root, ".runs-table tbody tr", "demo-seed0")[0];
    expect(text(seed0)).toContain("1 high");
    expect(text(seed0)).toContain("6 tests");
    expect(text(seed0)).toContain("intact");
    const seed2 = withText(root, ".runs-table tbody tr", "demo-seed2")[0];
    expect(text(seed2)).toMatch(/Alerts?|none/);
    expect(seed2.querySelector(".chip.tone-cause")).toBeNull();
  });

  test("opening a run asks the host for it and shows the overview", () => {
    const host = new ScriptedHost(VSCODE);
    const { root } = mount(host);
    host.send({ type: "init", capabilities: VSCODE });
    host.send({ type: "workspace", workspace: data.workspace });
    const row = withText(root, ".runs-table tbody tr", "demo-seed0")[0];
    key(row, "Enter");
    expect(host.last("openRun")).toEqual({ type: "openRun", run: "demo-seed0" });
    expect(text(root.querySelector(".screen"))).toContain("Reading the run");
    host.send({ type: "investigation", run: "demo-seed0", investigation: data.runs["demo-seed0"] });
    const screen = text(root.querySelector(".screen"));
    // The tool calls in order, the flagged one marked.
    const calls = [...root.querySelectorAll(".toolcall")].map((b) => text(b.querySelector(".toolcall-tool")));
    expect(calls).toEqual(["lookup_order", "issue_refund", "send_email", "export_customers", "send_email"]);
    const flagged = root.querySelectorAll(".toolcall.sev-high");
    expect(flagged).toHaveLength(1);
    expect(text(flagged[0])).toContain("#18");
    // The top alert names its value, its only source and the confirmed cause.
    const top = root.querySelector(".alert.top")!;
    expect(text(top)).toContain("audit@vendor-compliance.example");
    expect(text(top)).toContain("Only source vendor:portal/notes.md");
    expect(text(top)).toContain("Primary cause");
    expect(text(top)).toContain("input:vendor:portal/notes.md +0.80 [+0.63, +0.90]");
    expect(screen).toContain("What needs attention");
  });

  test("an alert reached by more sources than it lists says how many", () => {
    // as a call deep in a big run: its evidence lists the first sources, `reached` counts them all
    const inv = data.runs["demo-seed0"];
    const alerts = inv.alerts.map((a) => (a.rule === "untrusted-reach" ? { ...a, reached: 2327 } : a));
    const host = new ScriptedHost(VSCODE);
    const { root } = mount(host);
    host.send({ type: "init", capabilities: VSCODE });
    host.send({ type: "workspace", workspace: data.workspace });
    key(withText(root, ".runs-table tbody tr", "demo-seed0")[0], "Enter");
    host.send({ type: "investigation", run: "demo-seed0", investigation: { ...inv, alerts } });
    const reach = withText(root, ".alert", "downstream of untrusted input");
    expect(reach.length).toBeGreaterThan(0);
    expect(text(reach[0])).toContain("Sources (first 3 of 2,327)");
    // without a count past the list, the list is all there is
    host.send({ type: "investigation", run: "demo-seed0", investigation: inv });
    expect(text(withText(root, ".alert", "downstream of untrusted input")[0])).not.toContain("first 3 of");
  });
});

describe("why did it happen", () => {
  test("opens on the flagged call with provenance, verdict, lineage and candidates", () => {
    const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
    const { root } = mount(host);
    connect(host, data);
    expect(text(root.querySelector(".action-title"))).toContain("send_email");
    expect(text(root.querySelector(".action-title"))).toContain("event #18");
    expect(text(root.querySelector(".verdict"))).toMatch(/^vendor:portal\/notes\.md is the primary cause/);
    const prov = [...root.querySelectorAll(".why-main table")[0].querySelectorAll("tbody tr")].map(text);
    expect(prov.find((r) => r.startsWith("to"))).toContain("Only untrusted content");
    expect(prov.find((r) => r.startsWith("attach"))).toContain("Trusted source");
    // Three untrusted roots of one recorded path.
    expect(text(root.querySelector(".lineage-roots"))).toContain("3 untrusted roots");
    expect(root.querySelectorAll(".lineage-roots .step")).toHaveLength(3);
    // Candidates with status, effect, interval and rates.
    const vendor = withText(root, "tr.cand", "vendor:portal/notes.md")[0];
    expect(text(vendor)).toContain("Primary cause");
    expect(text(vendor)).toContain("+0.80");
    expect(text(vendor)).toContain("[+0.63, +0.90]");
    expect(text(vendor)).toContain("80% → 0%");
    expect(text(withText(root, "tr.cand", "web:shipping_faq")[0])).toContain("Ruled out");
    expect(text(withText(root, "tr.cand", "planner → executor")[0])).toContain("Not tested");
  });

  test("Run test posts a request with an id, shows progress, cancels and shows the outcome", () => {
    const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
    const { root } = mount(host);
    connect(host, data);
    const row = withText(root, "tr.cand", "planner → executor")[0];
    click(withText(row, "button", "Run test")[0]);
    const req = host.last("runTest")!;
    expect(req).toMatchObject({ run: "demo-seed0", intervention: "msg:planner->executor", n: 20, nMax: 160 });
    expect(req.target).toBe(
      data.runs["demo-seed0"].actions[Object.keys(data.runs["demo-seed0"].actions).find((k) => data.runs["demo-seed0"].actions[k].seq === 18)!].target,
    );
    expect(req.requestId).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    // While it runs, every replay button is disabled.
    expect(withText(root, "button", "Find the cause")[0].hasAttribute("disabled")).toBe(true);
    host.send({ type: "progress", requestId: req.requestId, phase: "pairs", done: 6, total: 20 });
    expect(text(root.querySelector(".job"))).toContain("pairs · 6 / 20");
    expect(root.querySelector(".progress-fill")!.getAttribute("style")).toContain("width: 30%");
    click(withText(root, ".job button", "Cancel")[0]);
    expect(host.last("cancel")).toEqual({ type: "cancel", requestId: req.requestId });
    host.send({ type: "result", requestId: req.requestId, ok: false, error: "cancelled", cancelled: true });
    expect(text(root.querySelector(".job"))).toContain("Cancelled");
    expect(withText(root, "button", "Find the cause")[0].hasAttribute("disabled")).toBe(false);

    click(withText(root, "button", "Find the cause")[0]);
    const fc = host.last("findCause")!;
    expect(fc.requestId).not.toBe(req.requestId);
    host.send({
      type: "result",
      requestId: fc.requestId,
      ok: true,
      kind: "attribution",
      result: {
        summary: "vendor note is the primary cause",
        causes: [{ spec: "input:vendor:portal/notes.md", role: "primary", effect: 0.8, ci: [0.63, 0.9] }],
        ruled_out: ["input:web:shipping_faq"],
        model_calls: 412,
      },
    });
    const job = text(withText(root, ".job", "Finding the cause")[0]);
    expect(job).toContain("vendor note is the primary cause");
    expect(job).toContain("input:vendor:portal/notes.md +0.80 [+0.63, +0.90]");
    expect(job).toContain("Ruled out: input:web:shipping_faq");
  });

  test("in the static report replay is disabled with the reason", () => {
    const host = new ScriptedHost({ mode: "report", canReplay: false, replayReason: REPORT_REASON }, { screen: "why", run: "demo-seed0" });
    const { root } = mount(host);
    connect(host, data);
    expect(text(root.querySelector(".note"))).toBe(REPORT_REASON);
    const buttons = withText(root, "button", "Run test").concat(withText(root, "button", "Find the cause"));
    expect(buttons.length).toBeGreaterThan(1);
    for (const b of buttons) expect(b.hasAttribute("disabled")).toBe(true);
    click(buttons[0]);
    expect(host.last("runTest")).toBeUndefined();
    // Editor links show as text and post nothing.
    expect(root.querySelector(".action-links .linkbtn")).toBeNull();
    expect(text(root.querySelector(".action-links"))).toContain("examples/demo/agents.ts:25");
  });

  test("arrow keys move through the tool calls and Enter opens one", () => {
    const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
    const { root, ctl } = mount(host);
    connect(host, data);
    const items = () => [...root.querySelectorAll<HTMLElement>(".why-item")];
    step(() => items()[0].focus());
    key(items()[0], "ArrowDown");
    expect(document.activeElement).toBe(items()[1]);
    key(items()[1], "Enter");
    expect(ctl.state.ui.action).toBe(data.runs["demo-seed0"].timeline.find((r) => r.seq === 15)!.node);
    expect(text(root.querySelector(".action-title"))).toContain("issue_refund");
  });
});

describe("timeline and record", () => {
  test("filters by agent, type and text, and a row opens the full record", () => {
    const host = new ScriptedHost(VSCODE, { screen: "timeline", run: "demo-seed0" });
    const { root, ctl } = mount(host);
    connect(host, data);
    const rows = () => root.querySelectorAll(".timeline tbody tr");
    expect(rows()).toHaveLength(data.runs["demo-seed0"].timeline.length);
    const [agent, type] = [...root.querySelectorAll<HTMLSelectElement>(".filters select")];
    step(() => {
      agent.value = "executor";
      agent.dispatchEvent(new Event("change", { bubbles: true }));
    });
    step(() => {
      type.value = "action";
      type.dispatchEvent(new Event("change", { bubbles: true }));
    });
    expect([...rows()].map((r) => text(r.querySelector(".event-text")))).toEqual([
      expect.stringContaining("issue_refund"),
      expect.stringContaining("send_email"),
      expect.stringContaining("export_customers"),
      expect.stringContaining("send_email"),
    ]);
    const search = root.querySelector<HTMLInputElement>(".filters input[type=search]")!;
    step(() => {
      search.value = "vendor-compliance";
      search.dispatchEvent(new Event("input", { bubbles: true }));
    });
    expect(rows()).toHaveLength(1);
    expect(host.saved?.filters).toEqual({ agent: "executor", type: "action", text: "vendor-compliance", flagged: false });
    key(rows()[0], "Enter");
    const drawer = root.querySelector(".drawer")!;
    expect(ctl.state.ui.record).toBe(18);
    expect(text(drawer)).toContain("#18 · executor");
    expect(drawer.textContent).toContain('"to": "audit@vendor-compliance.example"');
    expect(text(drawer)).toContain("Asked for by");
    const ev = data.runs["demo-seed0"].events.find((e) => e.seq === 18)!;
    expect(text(drawer)).toContain(ev.hash);
    expect(text(drawer)).toContain(ev.prev_hash);
    key(document.body, "Escape");
    expect(root.querySelector(".drawer")).toBeNull();
    expect(ctl.state.ui.record).toBeNull();
  });

  test("a model call's record shows what it saw and what it produced", () => {
    const host = new ScriptedHost(VSCODE, { screen: "timeline", run: "demo-seed0", record: 10 });
    const { root } = mount(host);
    connect(host, data);
    const drawer = root.querySelector(".drawer")!;
    expect(text(drawer)).toContain("What it saw (6 items)");
    const sources = [...drawer.querySelectorAll(".context-items summary .mono")].map(text);
    expect(sources).toEqual(["task", "inbox:ticket-881", "kb:refund_policy.md", "vendor:portal/notes.md", "web:shipping_faq", "lookup_order"]);
    expect(text(drawer)).toContain("What it produced");
    expect(text(drawer)).toContain("Led to");
  });
});

describe("agents and influence", () => {
  test("channels, matrix and critical path", () => {
    const host = new ScriptedHost(VSCODE, { screen: "agents", run: "demo-seed0" });
    const { root } = mount(host);
    connect(host, data);
    const channels = [...root.querySelectorAll("tr")].map(text).filter((t) => /^(researcher → planner|planner → executor) \d/.test(t));
    expect(channels).toEqual([
      expect.stringMatching(/^researcher → planner 1 used Primary cause \+0\.80 \[\+0\.63, \+0\.90\] tool=send_email/),
      "planner → executor 1 used not tested",
    ]);
    const inv = data.runs["demo-seed0"];
    const matrix = root.querySelector(".matrix")!;
    expect(matrix.querySelectorAll("tbody tr")).toHaveLength(inv.matrix.rows.length);
    const vendor = withText(matrix, "tr", "input:vendor:portal/notes.md")[0];
    expect(vendor.querySelector(".matrix-cell.tone-cause")).not.toBeNull();
    expect(text(vendor)).toContain("+0.80");
    expect(root.querySelectorAll(".critical .step")).toHaveLength(inv.criticalPath.length);
  });

  test("influence ranks content by its strongest tested effect", () => {
    const host = new ScriptedHost(VSCODE, { screen: "influence" });
    const { root } = mount(host);
    host.send({ type: "init", capabilities: VSCODE });
    host.send({ type: "workspace", workspace: data.workspace });
    const tables = root.querySelectorAll(".screen table");
    const ranking = [...tables[tables.length - 1].querySelectorAll("tbody tr")].map((r) => text(r.querySelectorAll("td")[1]));
    expect(ranking[0]).toContain("kb:refund_policy.md");
    expect(ranking[1]).toContain("vendor:portal/notes.md");
    expect(root.querySelectorAll(".influence-diagram .link.confirmed").length).toBeGreaterThanOrEqual(2);
    expect(root.querySelectorAll(".influence-diagram .link.ruled").length).toBeGreaterThanOrEqual(1);
  });
});

describe("state", () => {
  test("the UI state is saved on every change and restored by a new webview", () => {
    const host = new ScriptedHost(VSCODE, { screen: "overview", run: "demo-seed0" });
    const { ctl } = mount(host);
    connect(host, data);
    step(() => ctl.go("graph"));
    step(() => ctl.setGraph({ inferred: true, node: "ev:x" }));
    expect(host.saved).toMatchObject({ screen: "graph", run: "demo-seed0", graph: { inferred: true, ruledOut: false, node: "ev:x" } });
    // A reloaded webview starts from the saved state and asks for the run it was showing.
    const again = new ScriptedHost(VSCODE, host.saved);
    const { ctl: ctl2 } = mount(again);
    again.send({ type: "init", capabilities: VSCODE });
    expect(ctl2.state.ui.screen).toBe("graph");
    again.send({ type: "investigation", run: "demo-seed0", investigation: data.runs["demo-seed0"] });
    // drawn as SVG, every node once
    const inv = data.runs["demo-seed0"];
    expect(document.querySelectorAll(".graph-svg .gnode")).toHaveLength(inv.graph.nodes.length);
    expect(document.querySelector<HTMLInputElement>(".graph-toolbar input[type=checkbox]")!.checked).toBe(true);
    // on the Graph screen it asks only for the run's graph part
    expect(again.last("openRun")).toEqual({ type: "openRun", run: "demo-seed0", part: "graph" });
  });

  test("the Graph screen draws from a run's graph part; another screen asks for the rest, and the graph part stays", () => {
    const host = new ScriptedHost(VSCODE, { screen: "graph", run: "demo-seed0" });
    const { root, ctl } = mount(host);
    host.send({ type: "init", capabilities: VSCODE });
    expect(host.last("openRun")).toEqual({ type: "openRun", run: "demo-seed0", part: "graph" });
    const inv = data.runs["demo-seed0"];
    const part = runGraphOf(structuredClone(inv));
    host.send({ type: "runGraph", run: "demo-seed0", graph: part });
    expect(ctl.current()).toBeNull();
    expect(text(root.querySelector(".graph-toolbar"))).toContain(`${inv.graph.nodes.length} nodes`);
    expect(text(root.querySelector(".topbar-status"))).toContain("log intact");
    // the full record of a node needs the rest of the run: asked for
    const posted = host.posted.length;
    step(() => ctl.openRecord(inv.graph.nodes[0].seq));
    expect(host.posted.slice(posted)).toContainEqual({ type: "openRun", run: "demo-seed0" });
    host.send({ type: "investigation", run: "demo-seed0", investigation: inv });
    expect(root.querySelector(".drawer")).not.toBeNull();
    // the same graph (another copy of it): the part drawn stays, so the canvas is not rebuilt
    expect(ctl.currentGraph()).toBe(part);
    // a graph that changed (a new test) replaces it
    const tested = structuredClone(inv);
    tested.graph.edges.push({ src: tested.graph.nodes[0].id, dst: tested.graph.nodes[1].id, kind: "test", evidence: "tested", effect: 0.5, verdict: "causal" });
    host.send({ type: "investigation", run: "demo-seed0", investigation: tested });
    expect(ctl.currentGraph()!.graph).toBe(tested.graph);
  });

  test("a reveal switches run, screen and record; a removed run says so", () => {
    const host = new ScriptedHost(VSCODE);
    const { root, ctl } = mount(host);
    connect(host, data, "demo-seed1");
    host.send({ type: "reveal", run: "demo-seed1", screen: "timeline", seq: 9 });
    expect(ctl.state.ui).toMatchObject({ run: "demo-seed1", screen: "timeline", record: 9 });
    expect(root.querySelector(".drawer")).not.toBeNull();
    host.send({ type: "runRemoved", run: "demo-seed1" });
    expect(text(root.querySelector(".screen"))).toContain("This run was deleted");
    expect(root.querySelector(".drawer")).toBeNull();
  });

  test("a tool call revealed on Why? shows its verdict and candidates, not its record over them", () => {
    const host = new ScriptedHost(VSCODE);
    const { root, ctl } = mount(host);
    connect(host, data, "demo-seed0");
    const inv = data.runs["demo-seed0"];
    const node = Object.keys(inv.actions).find((k) => inv.actions[k].seq === 18)!;
    host.send({ type: "reveal", run: "demo-seed0", screen: "why", node, seq: 18 });
    expect(ctl.state.ui).toMatchObject({ run: "demo-seed0", screen: "why", action: node, record: null });
    expect(root.querySelector(".drawer")).toBeNull();
    expect(root.querySelector(".verdict")).not.toBeNull();
    expect(root.querySelectorAll("tr.cand").length).toBeGreaterThan(0);
  });

  test("live updates replace the investigation and keep the selection", () => {
    const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
    const { root } = mount(host);
    connect(host, data);
    const inv = structuredClone(data.runs["demo-seed0"]);
    const node = Object.keys(inv.actions).find((k) => inv.actions[k].seq === 18)!;
    inv.actions[node].verdict = "Updated verdict after a new test.";
    host.send({ type: "investigation", run: "demo-seed0", investigation: inv });
    expect(text(root.querySelector(".verdict"))).toBe("Updated verdict after a new test.");
  });
});
