// The static report in a real browser: the demo's runs written by `causeway report`, opened from a
// file:// URL in headless Chromium. Every screen renders its key content with no console error and
// no request beyond file: and data:; a run full of markup and script executes none of it.
//   node --test test/browser/   (npm run test:browser)
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ROOT, build, cli, demoReport, fileUrl, launch, screenReady, tempDir, watchedPage } from "./lib.mjs";
import { HOSTILE, recordHostile } from "./hostile.mjs";
import { recordBig } from "./big.mjs";

const REASON = "This is a static report: open the runs in VS Code to run tests.";
let browser;

before(async () => {
  build();
  browser = await launch();
});
after(async () => browser?.close());

/** Opens the report on a screen and returns the page and what it recorded. */
async function open(report, hash) {
  const w = await watchedPage(browser);
  await w.page.goto(fileUrl(report, hash));
  return w;
}

function clean(seen, where) {
  assert.deepEqual(seen.errors, [], `${where}: console errors`);
  assert.deepEqual(seen.requests, [], `${where}: network requests`);
  assert.deepEqual(seen.dialogs, [], `${where}: dialogs`);
}

describe("the demo's report", () => {
  let report;
  before(() => {
    report = demoReport(tempDir("causeway-report-"));
  });

  test("Runs lists all 8 runs", async () => {
    const { page, seen, context } = await open(report, "screen=runs");
    await screenReady(page, "runs");
    assert.equal(await page.locator(".runs-table tbody tr").count(), 8);
    assert.match(await page.locator(".runs-table tbody tr", { hasText: "demo-seed0" }).innerText(), /1 high[\s\S]*6 tests[\s\S]*intact/);
    // Enter on a row opens the run.
    await page.locator(".runs-table tbody tr").first().focus();
    await page.keyboard.press("Enter");
    await page.waitForSelector(".toolflow");
    clean(seen, "runs");
    await context.close();
  });

  test("Overview marks the flagged call and names value, only source and cause", async () => {
    const { page, seen, context } = await open(report, "screen=overview&run=demo-seed0");
    await screenReady(page, "overview");
    assert.equal(await page.locator(".toolcall").count(), 5);
    assert.match(await page.locator(".toolcall.sev-high").innerText(), /#18\s*send_email/);
    const top = await page.locator(".alert.top").innerText();
    assert.match(top, /audit@vendor-compliance\.example/);
    assert.match(top, /Only source\s+vendor:portal\/notes\.md/);
    assert.match(top, /Primary cause\s+input:vendor:portal\/notes\.md\s+\+0\.80 \[\+0\.63, \+0\.90\]/);
    clean(seen, "overview");
    await context.close();
  });

  test("Why names the vendor note as primary cause, +0.80, with replay disabled", async () => {
    const { page, seen, context } = await open(report, "screen=why&run=demo-seed0");
    await screenReady(page, "why");
    assert.match(await page.locator(".verdict").innerText(), /^vendor:portal\/notes\.md is the primary cause/);
    const vendor = await page.locator("tr.cand", { hasText: "vendor:portal/notes.md" }).innerText();
    assert.match(vendor, /Primary cause/);
    assert.match(vendor, /\+0\.80/);
    assert.match(vendor, /80% → 0%/);
    assert.match(await page.locator("tr.cand", { hasText: "web:shipping_faq" }).innerText(), /Ruled out/);
    assert.equal(await page.locator(".note").innerText(), REASON);
    assert.equal(await page.getByRole("button", { name: "Find the cause" }).isDisabled(), true);
    assert.equal(await page.locator("tr.cand button").first().isDisabled(), true);
    clean(seen, "why");
    await context.close();
  });

  test("Timeline filters, opens a record and Escape closes it", async () => {
    const { page, seen, context } = await open(report, "screen=timeline&run=demo-seed0");
    await screenReady(page, "timeline");
    assert.equal(await page.locator(".timeline tbody tr").count(), 20);
    await page.getByLabel("Filter by text").fill("vendor-compliance");
    assert.equal(await page.locator(".timeline tbody tr").count(), 1);
    await page.locator(".timeline tbody tr").first().click();
    const drawer = page.locator(".drawer");
    await drawer.waitFor();
    assert.match(await drawer.innerText(), /#18 · executor[\s\S]*ARGUMENTS[\s\S]*audit@vendor-compliance\.example[\s\S]*Previous hash/i);
    await page.keyboard.press("Escape");
    await drawer.waitFor({ state: "detached" });
    clean(seen, "timeline");
    await context.close();
  });

  test("Graph lays out, traces a found node and switches themes", async () => {
    const { page, seen, context } = await open(report, "screen=graph&run=demo-seed0");
    await screenReady(page, "graph");
    // a small run's graph: SVG, every node drawn, without loading Cytoscape
    const nodes = Number(/(\d+) nodes/.exec(await page.locator(".graph-toolbar").innerText())[1]);
    assert.equal(await page.locator(".graph-svg .gnode").count(), nodes);
    assert.equal(await page.evaluate(() => typeof window.__causewayCytoscape), "undefined");
    await page.getByPlaceholder("Find a node (Enter)").fill("send_email #18");
    await page.keyboard.press("Enter");
    const panel = page.locator(".graph-panel");
    await panel.getByText("Downstream").waitFor();
    assert.match(await panel.innerText(), /send_email[\s\S]*Upstream\s+\d+ nodes/);
    assert.equal(await panel.getByRole("button", { name: "Why did it happen?" }).count(), 1);
    // the trace: the email and what leads to it stand out, the rest fades
    assert.ok((await page.locator(".graph-svg .gnode.traced").count()) > 1);
    assert.ok((await page.locator(".graph-svg .gnode.faded").count()) > 0);
    const stroke = () => page.locator(".graph-svg .gnode.decision .shape").first().getAttribute("stroke");
    const light = await stroke();
    await page.getByLabel("Theme").selectOption("hc");
    await page.waitForFunction(() => document.documentElement.dataset.theme === "hc" && document.body.classList.contains("vscode-high-contrast"));
    await page.waitForFunction((before) => document.querySelector(".graph-svg .gnode.decision .shape")?.getAttribute("stroke") !== before, light);
    assert.match(await page.evaluate(() => location.hash), /theme=hc/);
    clean(seen, "graph");
    await context.close();
  });

  test("Agents and Influence", async () => {
    const { page, seen, context } = await open(report, "screen=agents&run=demo-seed0");
    await screenReady(page, "agents");
    assert.match(await page.locator(".matrix").innerText(), /input:vendor:portal\/notes\.md[\s\S]*\+0\.80/);
    assert.ok((await page.locator(".critical .step").count()) >= 3);
    await page.getByRole("tab", { name: "Influence" }).click();
    await page.waitForSelector(".influence-diagram");
    assert.ok((await page.locator(".influence-diagram .link.confirmed").count()) >= 2);
    const ranked = await page.locator(".screen table").last().locator("tbody tr").first().innerText();
    assert.match(ranked, /kb:refund_policy\.md/);
    clean(seen, "agents/influence");
    await context.close();
  });
});

describe("a big report", () => {
  test("draws the Graph screen from the run's graph part and inflates the gzipped rest when another screen needs it", async () => {
    // Eight agents passing work around, 160 inputs: the rest of its investigation is over the size
    // from which it is gzipped.
    const root = tempDir("causeway-big-");
    await recordBig(createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js")), root);
    const report = path.join(root, "report.html");
    cli("report", root, "-o", report);
    const html = fs.readFileSync(report, "utf8");
    // the graph part (gzipped: it is big) before the script, the rest gzipped after it
    const graphAt = html.search(/<script type="application\/octet-stream" id="causeway-graph-0" data-encoding="gzip\+base64">[A-Za-z0-9+/=]+<\/script>/);
    const scriptAt = html.indexOf("<script nonce=");
    const restAt = html.search(/<script type="application\/octet-stream" id="causeway-run-0" data-encoding="gzip\+base64">[A-Za-z0-9+/=]+<\/script>/);
    assert.ok(graphAt > 0 && graphAt < scriptAt && scriptAt < restAt, "gzipped graph part, script, gzipped rest, in that order");
    // Cytoscape last, as text the browser does not run (the investigator runs it when it needs it)
    assert.ok(html.indexOf('<script type="text/plain" id="causeway-cytoscape">') > restAt, "Cytoscape embedded inert after the data");
    const { page, seen, context } = await open(report, "screen=graph&run=big");
    await screenReady(page, "graph");
    const shape = /grouped: (\d+) groups, (\d+) nodes? drawn alone/.exec(await page.locator(".graph-toolbar").innerText());
    assert.ok(shape, "the big run opens grouped");
    // drawn as SVG: one element per group and per node drawn alone, labels as text
    await page.waitForFunction(() => typeof window.__causewayGraphReady === "number");
    const drawn = page.locator(".graph-svg .gnode");
    assert.equal(await drawn.count(), Number(shape[1]) + Number(shape[2]));
    assert.ok((await page.locator(".graph-svg .gnode.group-agent text").allTextContents()).some((t) => /agent-0/.test(t)));
    assert.equal(await page.evaluate(() => typeof window.__causewayCytoscape), "undefined", "the grouped view draws without loading Cytoscape");
    // a click on an agent's group expands it: its calls are drawn one by one
    const before = await drawn.count();
    await page.locator(".graph-svg .gnode.group-agent").first().click();
    await page.waitForFunction((n) => document.querySelectorAll(".graph-svg .gnode").length > n, before);
    assert.equal(await page.getByRole("button", { name: "Collapse groups" }).count(), 1);
    // keyboard: a node takes focus, Enter selects it and its panel opens
    const task = page.locator(".graph-svg .gnode.input.task");
    await task.focus();
    await page.keyboard.press("Enter");
    await page.locator(".graph-panel").getByText("Downstream").waitFor();
    // ungrouped, Cytoscape draws every node; grouped again, the toolbar zooms the SVG
    await page.getByText("Group", { exact: true }).click();
    await page.locator(".graph-canvas canvas").first().waitFor();
    assert.equal(await page.evaluate(() => typeof window.__causewayCytoscape), "function", "Cytoscape is loaded for the ungrouped graph");
    await page.getByText("Group", { exact: true }).click();
    await page.locator(".graph-svg").waitFor();
    const transform = () => page.locator(".graph-svg > g").getAttribute("transform");
    const unzoomed = await transform();
    await page.getByRole("button", { name: "Zoom in" }).click();
    assert.notEqual(await transform(), unzoomed, "Zoom in zooms the grouped view");
    // the rest is read only when a screen needs it: the Overview's alerts come from it
    await page.getByRole("tab", { name: "Overview" }).click();
    await page.waitForSelector(".alert.top");
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.waitForSelector(".screen table tbody tr");
    clean(seen, "big report");
    await context.close();
  });
});

describe("a hostile run", () => {
  let report;
  before(async () => {
    const root = tempDir("causeway-hostile-");
    const sdk = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
    await recordHostile(sdk, root);
    report = path.join(root, "report.html");
    cli("report", root, "-o", report);
  });

  test("renders as text on every screen and in every record, executing nothing", async () => {
    const { page, seen, context } = await open(report, "screen=runs");
    await screenReady(page, "runs");
    const title = await page.title();
    const shown = new Set();
    for (const screen of ["runs", "overview", "why", "timeline", "graph", "agents", "influence"]) {
      await page.getByRole("tab", { name: new RegExp(screen === "why" ? "Why" : screen, "i") }).click();
      if (screen === "overview") await page.waitForSelector(".toolflow");
      if (screen === "graph") await page.waitForFunction(() => typeof window.__causewayGraphReady === "number");
      else await screenReady(page, screen);
      const text = await page.locator("#root").innerText();
      for (const s of HOSTILE) if (text.includes(s)) shown.add(s);
    }
    // Every record in the drawer, with all details opened.
    await page.getByRole("tab", { name: "Timeline" }).click();
    const rows = await page.locator(".timeline tbody tr").count();
    assert.ok(rows > 8);
    for (let i = 0; i < rows; i++) {
      await page.locator(".timeline tbody tr").nth(i).click();
      await page.locator(".drawer").waitFor();
      await page.evaluate(() => document.querySelectorAll(".drawer details").forEach((d) => (d.open = true)));
    }
    assert.deepEqual([...shown].sort(), [...HOSTILE].sort(), "every hostile string is shown as text");
    const state = await page.evaluate(() => ({
      pwned: window.__pwned,
      injected: document.querySelectorAll("#root img, #root script, #root iframe, #root a[href], #root svg:not(.influence-diagram)").length,
      handlers: [...document.querySelectorAll("#root *")].flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => a.name)),
    }));
    assert.equal(state.pwned, undefined);
    assert.equal(state.injected, 0);
    assert.deepEqual(state.handlers, []);
    assert.equal(await page.title(), title);
    assert.equal(title, "Causeway report — 1 run");
    clean(seen, "hostile");
    await context.close();
  });
});
