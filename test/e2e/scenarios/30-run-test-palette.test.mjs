// Run test… from the command palette, answered with its quick picks only: the run, the tool call
// (the exfiltration email), what to remove (the shipping FAQ, among the call's candidate causes),
// the suggested target, n = n-max = 40 typed into the last two (the README's figures). The test runs in the worker
// with a progress notification, says RULED-OUT, appends to tests.jsonl, and the investigator's Why
// screen shows the FAQ as ruled out.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

let b;
let page;
let ws;

before(async () => {
  ws = cw.demoWorkspace("run-test-palette");
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
});

after(() => b?.close());

/** Picks the quick-pick row whose label and description match (labels repeat: send_email #16, #18). */
async function pickRow(label, description) {
  const rows = page
    .locator(".quick-input-widget .quick-input-list .monaco-list-row")
    .filter({ has: page.locator(".quick-input-list-label .label-name", { hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`) }) })
    .filter({ has: page.locator(".quick-input-list-label .label-description", { hasText: description }) });
  await rows.first().click();
}

/** The open quick input's title and its input box's value, once the title is `title`. */
async function quickInput(title) {
  const w = page.locator(".quick-input-widget");
  await w.locator(".quick-input-title", { hasText: title }).waitFor();
  return { input: w.locator(".quick-input-box input"), value: await w.locator(".quick-input-box input").inputValue() };
}

vs.scenario("Run test… from the palette: the shipping FAQ is ruled out for the exfiltration email", async () => {
  await vs.openViewContainer(page, "Causeway");
  await vs.treeRows(page, "Runs", { minRows: 8, timeout: vs.T(60_000) });
  // the run pick describes each run as analysed when it opens: wait for demo-seed0's analysis
  await vs
    .treeRow(page, "Runs", "demo-seed0")
    .locator(".label-description", { hasText: /^\s*intact · 1 high/ })
    .waitFor({ timeout: vs.T(120_000) });
  const run = path.join(ws, "runs/demo-seed0");
  const before = cw.testsOf(run).length;

  await vs.runCommand(page, "Causeway: Run test…");
  // 1/5: the run, then the tool call
  await quickInput("Run test (1/5): the tool call");
  const runs = await vs.quickPickItems(page);
  assert.ok(
    runs.some((r) => r.label === "demo-seed0" && /intact · 1 high · 3 review · causeway:demo/.test(r.description)),
    JSON.stringify(runs),
  );
  await vs.pickQuickItem(page, "demo-seed0");
  await page.locator('.quick-input-widget .quick-input-box input[placeholder="Pick a tool call"]').waitFor();
  const calls = await vs.quickPickItems(page);
  assert.match(`${calls[0].label} ${calls[0].description}`, /^send_email #18 · executor · high/, "the high-alert call is offered first");
  await pickRow("send_email", /#18/);
  // 2/5: what to remove, from the call's candidate causes
  await quickInput("Run test (2/5): what to remove");
  const what = await vs.quickPickItems(page);
  assert.ok(
    what.some((w) => w.label === "input:web:shipping_faq" && /untrusted input/.test(w.description)),
    JSON.stringify(what),
  );
  assert.ok(
    what.some((w) => w.label === "input:vendor:portal/notes.md"),
    "the vendor note is a candidate too",
  );
  await vs.screenshot(page, "30-run-test-what-to-remove");
  await vs.pickQuickItem(page, "input:web:shipping_faq");
  // 3/5: the target, suggested from the call
  await quickInput("Run test (3/5): the target");
  const targets = await vs.quickPickItems(page);
  const target = targets[0].label;
  assert.match(target, /^tool=send_email,arg~\S*vendor-compliance/, "the suggested target is this call: the email to the planted address");
  assert.equal(targets[0].description, "this call (suggested)");
  await vs.pickQuickItem(page, target);
  // 4/5 and 5/5: n and n-max, offered with the settings' defaults (20, 160). A fixed n = 40, one
  // look, as the README's demo figures: with the defaults' sequential looks the test stops for
  // futility at n = 40, inconclusive (Bonferroni-widened interval), which is not what we test here.
  await vs.watchNotifications(page);
  const n = await quickInput("Run test (4/5): n");
  assert.equal(n.value, "20");
  await n.input.fill("40");
  await n.input.press("Enter");
  const nMax = await quickInput("Run test (5/5): n-max");
  assert.equal(nMax.value, "160");
  await nMax.input.fill("40");
  await nMax.input.press("Enter");

  const toast = await vs.waitForNotificationOrError(page, /Run test on demo-seed0 — /, { timeout: vs.T(180_000) });
  const text = await vs.notificationText(toast);
  console.log(`[run test] ${text}`);
  assert.match(
    text,
    /^Causeway: Run test on demo-seed0 — Removing input:web:shipping_faq: tool=send_email,arg~\S*vendor-compliance\S* happens in \d+% of replays instead of \d+% — effect \+0\.00 \[-0\.(?:1\d|20), \+0\.(?:1\d|20)\], n = \d+: RULED-OUT\.$/,
  );
  const seen = await vs.notificationsSeen(page);
  assert.ok(
    seen.some((t) => t.progress && /^Causeway: Run test on demo-seed0/.test(t.text)),
    `a progress notification showed: ${JSON.stringify(seen)}`,
  );
  await vs.screenshot(page, "30-run-test-ruled-out");

  const tests = cw.testsOf(run);
  assert.equal(tests.length, before + 1, "one test appended to tests.jsonl");
  const t = tests.at(-1);
  assert.equal(t.intervention, "input:web:shipping_faq");
  assert.equal(t.target, target);
  assert.equal(t.verdict, "ruled-out");
  assert.ok(Math.abs(t.ci[0]) < 0.2 && Math.abs(t.ci[1]) < 0.2, `the interval is within ±0.20: ${t.ci}`);

  // the investigator opened on the call; its candidate row says ruled out (the table reloads
  // with the new tests.jsonl line)
  const f = await cw.investigator(page, { open: false });
  await f.locator('#tab-why[aria-selected="true"]').waitFor();
  await f.locator(".action-head", { hasText: "event #18" }).waitFor();
  const row = f.locator("tr.cand", { has: f.locator(".cell-sub", { hasText: /^input:web:shipping_faq$/ }) });
  await row
    .locator("td", { hasText: /^Ruled out/ })
    .first()
    .waitFor({ timeout: vs.T(15_000) });
  assert.match(
    (await row.innerText()).replace(/\s+/g, " "),
    new RegExp(`Ruled out (?:rung \\d: .*? )?[+−]0\\.\\d\\d \\[[+−]0\\.\\d\\d, \\+0\\.\\d\\d\\] \\d+% → \\d+% ${t.n} `),
  );
  // close the call's full record (the drawer covers the table) and show the row
  const close = f.locator('button[aria-label="Close record"]');
  if (await close.count()) await close.click();
  await row.scrollIntoViewIfNeeded();
  await vs.clearNotifications(page);
  await vs.screenshot(page, "30-run-test-investigator");
});
