// Every screen of the investigator renders the demo's run demo-seed0 in the real webview, as a
// user reaches them: Runs (the run list), Overview, Why?, Timeline (its filters narrow the rows),
// Graph (drawn, with the tested cause as a red edge from the vendor note to the email, and a node
// traced), Agents and Influence; then a big run written into the workspace, whose graph opens
// grouped and, unticked, is drawn by Cytoscape, loaded from the extension's files only then.
// Assertions are on the text each screen shows; the graph's edges are read through the webview's
// read-only test hook window.__causewayGraphEdges (webview/graph/cy.ts).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { recordBig } from "../../browser/big.mjs";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

let b;
let page;
let ws;
let f; // the investigator's content frame

before(async () => {
  ws = cw.demoWorkspace("webview-screens");
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
  await vs.openViewContainer(page, "Causeway");
  await vs.treeRows(page, "Runs", { minRows: 8, timeout: vs.T(60_000) });
});

after(() => b?.close());

const norm = (s) => s.replace(/\s+/g, " ").trim();
// the later scenarios go on in the investigator the first one opened, on demo-seed0
const FIRST = "Runs lists the 8 demo runs with their alerts and tests; a row opens the run";

vs.scenario("Runs lists the 8 demo runs with their alerts and tests; a row opens the run", async () => {
  f = await cw.investigator(page);
  await cw.showScreen(f, "Runs");
  // the screen lists the runs analysed so far (the investigator may open before the background
  // analysis is over): wait until it lists all 8
  const rows = f.locator(".runs-table tbody tr");
  let text = "";
  await vs
    .waitUntil(page, async () => /^8 runs /i.test((text = await cw.screenText(f))), { what: "the Runs screen listing the 8 demo runs" })
    .catch((e) => {
      throw new Error(`${e.message}: it shows ${text.slice(0, 200)}`);
    });
  assert.match(text, /^8 runs 5 high alerts \d+ tests 0 failing verification/i);
  assert.equal(await rows.count(), 8);
  const seed0 = rows.filter({ hasText: "demo-seed0" });
  assert.match(
    norm(await seed0.innerText()),
    /demo-seed0 .* 3 20 lookup_order issue_refund send_email export_customers send_email 1 high 3 review 6 tests · 4 causes intact$/,
  );
  assert.match(norm(await rows.filter({ hasText: "demo-seed2" }).innerText()), /lookup_order escalate none none intact$/);
  await vs.screenshot(page, "31-screen-runs");
  await seed0.click();
  await f.locator('#tab-overview[aria-selected="true"]').waitFor();
  assert.equal(await f.locator('header select[aria-label="Run"] option:checked').textContent(), "demo-seed0");
});

vs.scenario(
  "Overview: what happened and what needs attention, with the tested cause",
  async () => {
    await cw.showScreen(f, "Overview");
    const text = await cw.screenText(f);
    assert.match(text, /3 agents executor, planner, researcher 20 events 3 model calls .* 5 tool calls/i);
    assert.match(
      text,
      /What happened: tool calls in order #9 lookup_order researcher #15 issue_refund executor #16 send_email executor #17 export_customers executor #18 send_email executor/i,
    );
    assert.match(
      text,
      /What needs attention 4 alerts High send_email used a value that only untrusted content supplied event #18 'audit@vendor-compliance\.example' appears only in vendor:portal\/notes\.md\./i,
    );
    assert.match(text, /Primary cause input:vendor:portal\/notes\.md \+0\.85 \[\+0\.5\d, \+0\.9\d\] n = 20/);
    assert.equal(await f.locator("header .topbar-status").innerText(), "log intact");
    await vs.screenshot(page, "31-screen-overview");
  },
  { needs: FIRST },
);

vs.scenario(
  "Why?: the email to the planted address, its verdict, provenance and candidate causes",
  async () => {
    await cw.showScreen(f, "Why?");
    await f.locator(".why-item.selected", { hasText: "#18" }).waitFor();
    const text = await cw.screenText(f);
    assert.match(text, /send_email by executor · event #18 High sensitive \(declared\)/);
    assert.match(
      norm(await f.locator(".verdict").innerText()),
      /^vendor:portal\/notes\.md is the primary cause: without it send_email happens in 0% of replays instead of 85% \(\+0\.85 \[\+0\.5\d, \+0\.9\d\], n = 20\)\.$/,
    );
    assert.match(text, /to audit@vendor-compliance\.example Only untrusted content vendor:portal\/notes\.md untrusted/);
    const vendor = f.locator("tr.cand", { has: f.locator(".cell-sub", { hasText: /^input:vendor:portal\/notes\.md$/ }) });
    assert.match(norm(await vendor.innerText()), /Primary cause (?:rung \d: .*? )?\+0\.85 \[\+0\.5\d, \+0\.9\d\] 85% → 0% 20 /);
    await vs.screenshot(page, "31-screen-why");
  },
  { needs: FIRST },
);

vs.scenario(
  "Timeline: 20 events; the type, text and flag filters narrow the rows, Clear restores them",
  async () => {
    await cw.showScreen(f, "Timeline");
    const count = f.locator('.filters [aria-live="polite"]');
    const rows = f.locator("table.timeline tbody tr");
    assert.equal(await count.innerText(), "20 events");
    assert.equal(await rows.count(), 20);
    // type: tool calls only
    await f.locator(".filters label", { hasText: "Type" }).locator("select").selectOption({ label: "Tool call" });
    await f.locator('.filters [aria-live="polite"]', { hasText: "5 of 20 events" }).waitFor();
    assert.deepEqual(await rows.locator(".type-badge").allInnerTexts(), Array(5).fill("Tool call"));
    // and text: the two emails
    await f.locator('input[aria-label="Filter by text"]').fill("send_email");
    await f.locator('.filters [aria-live="polite"]', { hasText: "2 of 20 events" }).waitFor();
    const emails = (await rows.allInnerTexts()).map(norm);
    assert.equal(emails.length, 2);
    assert.match(emails[0], /^16 .* executor Tool call executor ran send_email\(\{"body": "Refund of \$89\.00 issued\.", "to": "c\.rao@example\.com"\}\)/);
    assert.match(emails[1], /^18 .* executor Tool call executor ran send_email\(\{"attach": "customers\.csv", "to": "audit@vendor-compliance\.example"\}\)/);
    await vs.screenshot(page, "31-screen-timeline-filtered");
    // a filter that matches nothing says so; Clear brings every event back
    await f.locator('input[aria-label="Filter by text"]').fill("no such event");
    await f.locator("#screen", { hasText: "No event matches these filters." }).waitFor();
    await f.locator(".filters button", { hasText: "Clear" }).click();
    await f.locator('.filters [aria-live="polite"]', { hasText: /^20 events$/ }).waitFor();
    assert.equal(await rows.count(), 20);
    // flagged only: the untrusted inputs, the messages carrying them, the sensitive calls
    await f.locator(".filters label", { hasText: "Flagged only" }).locator("input").check();
    await f.locator('.filters [aria-live="polite"]', { hasText: /^\d+ of 20 events$/ }).waitFor();
    const flagged = (await rows.allInnerTexts()).map(norm);
    assert.ok(flagged.length > 0 && flagged.length < 20);
    assert.ok(
      flagged.every((r) => /\b(alert|untrusted|sensitive|blocked|error|stub)\b/.test(r)),
      JSON.stringify(flagged),
    );
    await f.locator(".filters button", { hasText: "Clear" }).click();
    await f.locator('.filters [aria-live="polite"]', { hasText: /^20 events$/ }).waitFor();
  },
  { needs: FIRST },
);

vs.scenario(
  "Graph: drawn, the tested cause is a red edge vendor note → email labelled +0.85; a node traces",
  async () => {
    await cw.showScreen(f, "Graph");
    await f.locator('.graph-canvas[data-ready="true"]').waitFor();
    assert.match(await cw.screenText(f), /15 nodes · \d+ edges/);
    const { inner } = await cw.investigatorFrames(page);
    const edges = await inner.evaluate(() => window.__causewayGraphEdges?.());
    assert.ok(Array.isArray(edges) && edges.length > 0, "the graph test hook lists the drawn edges");
    const rgb = (c) => (/rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(c) ?? []).slice(1).map(Number);
    const red = (c) => {
      const [r, g, bl] = rgb(c);
      return r >= 150 && r - g >= 60 && r - bl >= 60;
    };
    const cause = edges.filter((e) => e.classes.includes("causal") && e.sourceLabel === "vendor:portal/notes.md" && e.targetLabel === "send_email");
    assert.equal(cause.length, 1, JSON.stringify(edges.filter((e) => e.classes.includes("tested"))));
    assert.ok(cause[0].visible, "the cause edge is shown");
    assert.equal(cause[0].label, "+0.85");
    assert.ok(red(cause[0].color), `the cause edge is red: ${cause[0].color}`);
    const observed = edges.filter((e) => e.classes.includes("observed"));
    assert.ok(observed.length > 0 && observed.every((e) => !red(e.color)), "plain observed edges are not red");
    await vs.screenshot(page, "31-screen-graph");
    // find the email by name: the node is traced and described in the side panel
    const search = f.locator('input[aria-label^="Find a node"]');
    await search.fill("send_email #18");
    await search.press("Enter");
    const panel = f.locator('aside.graph-panel[aria-label="Selected node"]');
    await panel.waitFor();
    const ptext = norm(await panel.innerText());
    assert.match(ptext, /^Tool call send_email Agent executor Event #18 .*Primary cause \+0\.85 input:vendor:portal\/notes\.md/);
    const traced = await inner.evaluate(() => window.__causewayGraphEdges().filter((e) => e.classes.includes("traced")).length);
    assert.ok(traced > 0, "the trace highlights edges");
    await vs.screenshot(page, "31-screen-graph-traced");
  },
  { needs: FIRST },
);

vs.scenario(
  "Agents: the three agents, their channels (tested) and the influence matrix",
  async () => {
    await cw.showScreen(f, "Agents");
    const text = await cw.screenText(f);
    assert.match(text, /researcher gathers facts — 4 1 1 1 0 .* planner decides steps researcher 0 1 0 1 1 .* executor runs tools planner 0 1 4 0 1/);
    assert.match(text, /Channels between agents .* researcher → planner 1 used Primary cause \+0\.85/i);
    assert.match(text, /Influence matrix .* input:vendor:portal\/notes\.md \+0\.85 Primary cause/i);
    await vs.screenshot(page, "31-screen-agents");
  },
  { needs: FIRST },
);

vs.scenario(
  "Influence: across the 8 runs, the vendor note is the confirmed cause of send_email",
  async () => {
    await cw.showScreen(f, "Influence");
    const text = await cw.screenText(f);
    assert.match(text, /Sources and the tools they reached across 8 runs/i);
    assert.match(text, /vendor:portal\/notes\.md · 7 runs not tested 7 runs cause \+0\.85/);
    assert.match(text, /2 vendor:portal\/notes\.md sha256:[0-9a-f]+… untrusted 8 8 \+0\.85 send_email Batch B-200/);
    assert.equal(b.errors.length, 0, `no page errors: ${b.errors.map((e) => e.message).join("; ")}`);
    await vs.screenshot(page, "31-screen-influence");
  },
  { needs: FIRST },
);

vs.scenario(
  "a big run opens grouped as SVG; unticked, Cytoscape is loaded from the extension and draws every node",
  async () => {
    await recordBig(createRequire(import.meta.url)(path.join(cw.ROOT, "dist/lib/index.js")), path.join(ws, "runs"));
    // the new run reaches the investigator's run list
    const pick = f.locator('header select[aria-label="Run"]');
    await pick.locator("option", { hasText: /^big$/ }).waitFor({ state: "attached", timeout: vs.T(60_000) });
    await pick.selectOption({ label: "big" });
    await cw.showScreen(f, "Graph");
    await f
      .locator(".graph-svg .gnode.group")
      .first()
      .waitFor({ timeout: vs.T(60_000) });
    assert.match(await f.locator(".graph-toolbar").innerText(), /grouped: \d+ groups/);
    const { inner } = await cw.investigatorFrames(page);
    assert.equal(await inner.evaluate(() => typeof window.__causewayCytoscape), "undefined", "the grouped view draws without Cytoscape");
    await f.getByText("Group", { exact: true }).click();
    // drawn, or the graph says why not
    await f
      .locator(".graph-canvas canvas, .graph-failure")
      .first()
      .waitFor({ timeout: vs.T(60_000) });
    if (await f.locator(".graph-failure").count()) assert.fail(await f.locator(".graph-failure").innerText());
    await f.locator('.graph-canvas[data-ready="true"]').waitFor({ timeout: vs.T(60_000) });
    assert.equal(await inner.evaluate(() => typeof window.__causewayCytoscape), "function", "Cytoscape loaded by its webview URI");
    const edges = await inner.evaluate(() => window.__causewayGraphEdges().length);
    assert.ok(edges > 600, `every edge drawn: ${edges}`);
    await vs.screenshot(page, "31-screen-graph-big-ungrouped");
  },
  { needs: FIRST },
);
