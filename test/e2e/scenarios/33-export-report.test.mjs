// Export report… from the command palette writes one static HTML file (through VS Code's save
// dialog), and that file opens from disk in a browser with no network: the investigator with every
// run of the workspace, the demo's cause on its Why screen, and the hostile run's payloads as
// text on every screen (title unchanged, window.__pwned undefined).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

let b;
let page;
let ws;
let report;

before(async () => {
  ws = cw.demoWorkspace("export-report", { source: false });
  cw.recordHostileRun(ws);
  report = path.join(ws, "causeway-report.html");
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
});

after(() => b?.close());

vs.scenario("Export report… writes the HTML file through the save dialog", async () => {
  await vs.openViewContainer(page, "Causeway");
  await vs.treeRows(page, "Runs", { minRows: 9, timeout: vs.T(60_000) });
  await page.locator(".pane .monaco-list-row .label-description", { hasText: /^\s*intact · 1 high · 1 review · agents\/hostile/ }).waitFor();
  await vs.runCommand(page, "Causeway: Export report…");
  // VS Code's save dialog (in the browser: a quick input holding the path), proposing
  // causeway-report.html in the workspace folder
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible" });
  // the dialog fills in the folder, then the proposed name
  await page
    .waitForFunction((want) => document.querySelector(".quick-input-widget .quick-input-box input")?.value === want, `${ws}/causeway-report.html`, {
      timeout: vs.T(10_000),
    })
    .catch(async () => assert.fail(`the save dialog proposes ${await input.inputValue()}`));
  await vs.screenshot(page, "33-export-save-dialog");
  await input.press("Enter");
  const toast = await vs.waitForNotificationOrError(page, /report written to/, { timeout: vs.T(60_000) });
  assert.equal(await vs.notificationText(toast), "Causeway: report written to causeway-report.html (a static page: opens from disk, no network).");
  assert.deepEqual(
    await toast
      .locator(".monaco-button")
      .allInnerTexts()
      .then((t) => t.map((s) => s.trim()).filter(Boolean)),
    ["Open in Browser", "Reveal"],
  );
  await vs.screenshot(page, "33-export-written");
  assert.ok(fs.statSync(report).size > 100_000, "the report holds the webview and the runs");
});

vs.scenario(
  "the report opens from disk, offline, with every run, the cause, and no payload run",
  async () => {
    const rp = await b.context.newPage();
    const requests = [];
    rp.on("request", (r) => requests.push(r.url()));
    const errors = [];
    rp.on("pageerror", (e) => errors.push(e.message));
    await rp.goto(`file://${report}`);
    const title = await rp.title();
    await rp.locator("#root .app.mode-report").waitFor();
    assert.match(await rp.locator(".report-badge").innerText(), /static report/);
    // Runs: the 8 demo runs and the hostile one
    await rp.locator("#tab-runs").click();
    const rows = rp.locator(".runs-table tbody tr");
    await rows.nth(8).waitFor();
    assert.equal(await rows.count(), 9);
    await vs.screenshot(rp, "33-report-runs");
    // the demo's exfiltration email and its tested cause
    await rows.filter({ hasText: "demo-seed0" }).click();
    await rp.locator("#tab-why").click();
    await rp.locator(".why-item.selected", { hasText: "#18" }).waitFor();
    assert.match(
      (await rp.locator(".verdict").innerText()).replace(/\s+/g, " "),
      /^vendor:portal\/notes\.md is the primary cause: without it send_email happens in 0% of replays instead of 85% \(\+0\.85 /,
    );
    assert.ok(await rp.locator("button", { hasText: "Find the cause" }).isDisabled(), "a static file cannot replay");
    await vs.screenshot(rp, "33-report-why");
    // the hostile run, every screen
    const select = rp.locator('header select[aria-label="Run"]');
    const value = await select.locator("option").evaluateAll((o, id) => o.find((x) => x.textContent === id)?.value, cw.HOSTILE_RUN);
    await select.selectOption(value);
    for (const tab of ["overview", "why", "timeline", "graph", "agents", "influence", "runs"]) {
      await rp.locator(`#tab-${tab}`).click();
      await rp.locator(`#tab-${tab}[aria-selected="true"]`).waitFor();
      if (tab === "graph") await rp.locator('.graph-canvas[data-ready="true"]').waitFor();
      if (tab === "overview") assert.ok((await rp.locator("#screen").innerText()).includes('<script>window.__pwned=2;document.title="pwned"</script>'));
      assert.deepEqual(await cw.frameIntegrity(rp.mainFrame()), { title, pwned: undefined, injected: 0, scripts: 0 }, tab);
    }
    await vs.screenshot(rp, "33-report-hostile");
    const remote = requests.filter((u) => !/^(file|data|blob):/.test(u));
    assert.deepEqual(remote, [], "the report fetches nothing from the network");
    assert.deepEqual(errors, []);
    await rp.close();
  },
  { needs: "Export report… writes the HTML file through the save dialog" },
); // the file it wrote
