// A run whose every string — run id, task, agent names and roles, sources, contents, model name,
// purposes, tool names, argument keys and values, results, messages — is markup and script that
// would set window.__pwned or change document.title if it were ever parsed as HTML or run. Every
// screen of the investigator shows it, every tool call's Why and every event's full record are
// opened, a graph node is traced; afterwards, in both webview frames and in the workbench page,
// the title is unchanged, window.__pwned is undefined and no element a payload would create
// exists, and the payloads are on screen as text.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

let b;
let page;
let ws;
let f;
let frames;
let titles;

before(async () => {
  ws = vs.makeWorkspace("hostile-webview");
  cw.recordHostileRun(ws);
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
});

after(() => b?.close());

/** Nothing a payload would change, in the workbench page and both webview frames. */
async function assertUntouched(where) {
  const main = await cw.frameIntegrity(page.mainFrame());
  assert.deepEqual({ ...main, title: main.title.includes("pwned") }, { title: false, pwned: undefined, injected: 0, scripts: 0 }, `${where}: workbench page`);
  for (const [name, fr] of Object.entries(frames)) {
    const got = await cw.frameIntegrity(fr);
    assert.deepEqual(got, { title: titles[name], pwned: undefined, injected: 0, scripts: 0 }, `${where}: webview ${name} frame`);
  }
}

const SCRIPT = '<script>window.__pwned=2;document.title="pwned"</script>';
const IMG = "<img src=x onerror=\"window.__pwned=1;document.title='pwned'\">";

vs.scenario("the runs tree shows the hostile run and its agents as text", async () => {
  await vs.openViewContainer(page, "Causeway");
  const rows = await vs.treeRows(page, "Runs", { minRows: 1, timeout: vs.T(60_000) });
  assert.equal(rows[0].label, cw.HOSTILE_RUN);
  await page.locator(".pane .monaco-list-row .label-description", { hasText: /^\s*intact · 1 high · 1 review · agents\/hostile\.cjs:SYSTEM/ }).waitFor();
  // long labels are cut with "…" by the tree: compare the start
  const head = `${IMG} <script>wi`;
  const want = [`reader ${head}…`, `writer ${head}…`];
  let agents = [];
  // the run's children are fetched again whenever its row is refreshed (its analysis, its alerts):
  // wait until they are on screen rather than reading the rows once
  await vs
    .waitUntil(
      page,
      async () => {
        await vs.expandTreeRow(page, "Runs", [cw.HOSTILE_RUN]);
        agents = (await vs.treeRows(page, "Runs")).map((r) => r.label);
        return want.every((a) => agents.includes(a));
      },
      { timeout: vs.T(60_000), what: "the hostile run's agents under its row" },
    )
    .catch((err) => {
      throw new Error(`${err.message}: rows ${JSON.stringify(agents)}`);
    });
  await vs.screenshot(page, "32-hostile-tree");
});

vs.scenario("every investigator screen shows the payloads as text and runs none of them", async () => {
  await vs.runCommand(page, "View: Close All Editors");
  f = await cw.investigator(page);
  frames = await cw.investigatorFrames(page);
  titles = { outer: await frames.outer.title(), inner: await frames.inner.title() };
  assert.equal(titles.inner, "Causeway");
  await assertUntouched("opened");

  await cw.showScreen(f, "Runs");
  assert.ok((await cw.screenText(f)).includes(cw.HOSTILE_RUN), "the run id shows as text");
  await assertUntouched("Runs");

  await cw.showScreen(f, "Overview");
  const overview = await cw.screenText(f);
  assert.ok(overview.includes(`Task ${IMG}`), "the task shows as text");
  assert.ok(overview.includes(SCRIPT));
  await vs.screenshot(page, "32-hostile-overview");
  await assertUntouched("Overview");

  await cw.showScreen(f, "Why?");
  const calls = f.locator(".why-list .why-item");
  assert.equal(await calls.count(), 2);
  for (let i = 0; i < 2; i++) {
    await calls.nth(i).click();
    await f.locator(`.why-list .why-item.selected:nth-child(${i + 1})`).waitFor();
    const text = await cw.screenText(f);
    assert.ok(text.includes(i === 0 ? `tool ${IMG}` : "send_email by writer"), `tool call ${i}: ${text.slice(0, 200)}`);
    assert.ok(text.includes(SCRIPT), `tool call ${i}: payload on screen as text`);
    await assertUntouched(`Why? tool call ${i}`);
  }
  await vs.screenshot(page, "32-hostile-why");

  await cw.showScreen(f, "Timeline");
  const rows = f.locator("table.timeline tbody tr");
  const n = await rows.count();
  assert.equal(n, 12, "every event is listed");
  assert.ok((await cw.screenText(f)).includes(`web:${cw.PAYLOAD}`), "the source shows as text");
  // every event's full record, in the drawer, with all its recorded fields: the first from its
  // row, the others with "Next event"
  await rows.nth(0).click();
  const drawer = f.locator("aside.drawer");
  for (let i = 0; i < n; i++) {
    if (i > 0) await drawer.locator('button[aria-label="Next event"]').click();
    await drawer.locator("h2", { hasText: new RegExp(`^#${i} · `) }).waitFor();
    const raw = drawer.locator("details.raw");
    if ((await raw.getAttribute("open")) === null) await raw.locator("summary").click();
    await drawer.locator("details.raw[open] pre").waitFor();
    await assertUntouched(`Timeline record #${i}`);
    if (i === 7) await vs.screenshot(page, "32-hostile-record");
  }
  const close = f.locator('button[aria-label="Close record"]');
  if (await close.count()) await close.click();

  await cw.showScreen(f, "Graph");
  await f.locator('.graph-canvas[data-ready="true"]').waitFor();
  const search = f.locator('input[aria-label^="Find a node"]');
  await search.fill("web:<img");
  await search.press("Enter");
  const panel = f.locator('aside.graph-panel[aria-label="Selected node"]');
  await panel.waitFor();
  assert.ok((await panel.innerText()).replace(/\s+/g, " ").includes(`web:${IMG}`), "the traced node is described as text");
  const labels = await frames.inner.evaluate(() => window.__causewayGraphEdges().map((e) => e.sourceLabel));
  assert.ok(
    labels.some((l) => l.startsWith("web:<img")),
    "canvas labels are the raw text",
  );
  await vs.screenshot(page, "32-hostile-graph");
  await assertUntouched("Graph");

  await cw.showScreen(f, "Agents");
  const agents = await cw.screenText(f);
  assert.ok(agents.includes(`reader ${IMG}`) && agents.includes(`role ${IMG}`));
  await assertUntouched("Agents");

  await cw.showScreen(f, "Influence");
  assert.ok((await cw.screenText(f)).includes(`web:${IMG}`));
  await vs.screenshot(page, "32-hostile-influence");
  await assertUntouched("Influence");

  // the frames are the same ones (no navigation away and back), and the workbench did not error
  const again = await cw.investigatorFrames(page);
  assert.equal(await again.inner.evaluate(() => document.querySelector("#root") !== null), true);
  assert.deepEqual(
    b.errors.filter((e) => /pwned/.test(e.message)),
    [],
  );
});
