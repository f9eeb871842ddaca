// The extension on a shared collector (issue 17): a collector (`causeway serve`) holds the demo's
// exfiltration run, pushed with `causeway push`; the workspace has the demo's agent sources but no
// runs. "Causeway: Connect to a collector…" (URL, then the token, kept in secret storage) lists the
// collector's runs in the Runs view from its runs table (nothing pulled yet: the row says "on the
// collector" with the table's alert counts); expanding the run opens it (pulled, cached, verified)
// with its high alert; Find the cause on its email runs locally, and the result is appended to the
// collector's copy.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

const TOKEN = "e2e-collector-7c1d";
const RUN = "demo-seed0";
const VIEW = "Runs";
let b;
let page;
let ws;
let collector;
let url;

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });

async function collectorTests() {
  const res = await fetch(`${url}/v1/runs/${RUN}/tests`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  return (await res.text()).split("\n").filter(Boolean).length;
}

before(async () => {
  const root = path.join(vs.env.WORK_DIR, "collector-runs");
  fs.rmSync(root, { recursive: true, force: true });
  const port = await freePort();
  collector = spawn(process.execPath, [cw.CLI, "serve", root, "--token-env", "CW_E2E_TOKEN", "--port", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CW_E2E_TOKEN: TOKEN },
  });
  await new Promise((resolve, reject) => {
    let out = "";
    collector.stdout.on("data", (d) => {
      out += d;
      if (out.includes("causeway collector on")) resolve();
    });
    collector.on("exit", (code) => reject(new Error(`collector exited ${code}: ${out}`)));
  });
  url = `http://127.0.0.1:${port}`;
  execFileSync(process.execPath, [cw.CLI, "push", path.join(cw.demoRuns(), RUN), url], { env: { ...process.env, CAUSEWAY_TOKEN: TOKEN }, stdio: "pipe" });
  ws = vs.makeWorkspace("collector");
  fs.cpSync(path.join(cw.ROOT, "examples/demo"), path.join(ws, "examples/demo"), { recursive: true });
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
});

after(async () => {
  await b?.close();
  if (collector && collector.exitCode === null) collector.kill(); // ours, by handle
});

async function quickInput(title) {
  const w = page.locator(".quick-input-widget");
  await w.locator(".quick-input-title", { hasText: title }).waitFor();
  return w.locator(".quick-input-box input");
}

vs.scenario("connect to a collector, open its run, see the high alert, Find the cause, the result reaches the collector", async () => {
  await vs.openViewContainer(page, "Causeway");
  await page
    .locator(".pane", { hasText: "No runs in this workspace yet" })
    .first()
    .waitFor({ timeout: vs.T(30_000) });
  await vs.runCommand(page, "Causeway: Connect to a collector…");
  const urlBox = await quickInput("Connect to a collector (1/2): URL");
  await urlBox.fill(url);
  await page.keyboard.press("Enter");
  const tokenBox = await quickInput("Connect to a collector (2/2): token");
  await tokenBox.fill(TOKEN);
  await page.keyboard.press("Enter");

  // listed from the runs table, not opened: the collector's own alert counts, with the CLI's figures
  const counts = cw.cliAlertCounts(path.join(cw.demoRuns(), RUN));
  assert.match(counts, /^1 high/);
  const row = vs
    .viewPane(page, VIEW)
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^\\s*${RUN}\\s*$`) }) })
    .first();
  await row
    .locator(".label-description")
    .filter({ hasText: new RegExp(`^\\s*on the collector · ended · ${counts}`) })
    .waitFor({ timeout: vs.T(60_000) });
  await vs.screenshot(page, "35-collector-listed");

  // expanding it opens it: pulled, verified and analysed like a local run
  await vs.expandTreeRow(page, VIEW, [RUN]);
  await row
    .locator(".label-description")
    .filter({ hasText: new RegExp(`^\\s*intact · ${counts}`) })
    .waitFor({ timeout: vs.T(60_000) });
  await vs.expandTreeRow(page, VIEW, [RUN, "executor"]);
  const email = vs
    .viewPane(page, VIEW)
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator(".monaco-icon-label .label-description", { hasText: /^\s*#18\b.*high/ }) })
    .first();
  await email.waitFor();

  const before = await collectorTests();
  await vs.contextMenu(page, email, "Find the cause");
  const toast = await vs.waitForNotificationOrError(page, new RegExp(`Find the cause of send_email \\(#18, ${RUN}\\) — `), { timeout: vs.T(180_000) });
  const text = await vs.notificationText(toast);
  assert.match(text, /primary cause input:vendor:portal\/notes\.md/, text);
  // the extension appends the new results to the collector's tests chain
  let after = before;
  for (let i = 0; i < 300 && after <= before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await collectorTests();
  }
  assert.ok(after > before, `the collector holds the new test results (${before} → ${after})`);
  await vs.screenshot(page, "35-collector-find-the-cause");
  // the collector's copy still verifies, pulled back
  const out = path.join(vs.env.WORK_DIR, "collector-pulled");
  fs.rmSync(out, { recursive: true, force: true });
  execFileSync(process.execPath, [cw.CLI, "pull", url, RUN, "--out", out], { env: { ...process.env, CAUSEWAY_TOKEN: TOKEN }, stdio: "pipe" });
  assert.equal(JSON.parse(cw.cli(out, "verify", path.join(out, RUN), "--json")).ok, true);
});
