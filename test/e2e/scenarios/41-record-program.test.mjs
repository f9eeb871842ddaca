// Recording from the editor: the AI SDK example open, "Causeway: Record this program with Causeway"
// asks for its sensitive tools, then its untrusted tools (the defaults read from the file are
// accepted), records it against the fake model server, and the new run shows in the tree and in
// the investigator. Right-click its e-mail to the planted address → Find the cause names the
// vendor note. The program is not pre-allowed: recording it from the editor allows its replays.
// Then the launch configuration: added by its command (the tools remembered, no picks), started
// from Run and Debug under js-debug, and the run the session wrote opens when it ends.
// The fake server is a child of this scenario; code-server is started here so that the extension
// host (and so the recorded and replayed program) sees OPENAI_BASE_URL.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  contextMenu,
  expandTreeRow,
  launchBrowser,
  notificationText,
  openFile,
  openViewContainer,
  openWorkbench,
  pickQuickItem,
  runCommand,
  scenario,
  screenshot,
  startCodeServer,
  treeRows,
  viewPane,
  waitForNotificationOrError,
  waitUntil,
  watchNotifications,
  T,
} from "../lib.mjs";
import { exampleWorkspace, investigator, startFakeModelServer, testsOf } from "../causeway.mjs";

const EXAMPLE = "examples/ai-sdk/support-agents.mjs";
const SOURCE = "tool:fetch_doc";
let fake;
let cs;
let b;
let page;
let ws;

before(async () => {
  fake = await startFakeModelServer();
  // the fewest pairs that still decide: Find the cause without the span narrowing;
  // quick open lists the example without walking the linked node_modules
  ws = exampleWorkspace("record-program", path.dirname(EXAMPLE), {
    "causeway.replay.workers": 8,
    "causeway.test.n": 10,
    "causeway.test.nMax": 40,
    "causeway.findCause.spans": false,
    "search.followSymlinks": false,
    "files.exclude": { node_modules: true },
  });
  cs = await startCodeServer({ name: "record-program", trust: false, folder: ws });
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { folder: ws, url: cs.url, timeout: T(120_000) });
});

after(async () => {
  await b?.close();
  await cs?.stop();
  fake?.stop();
});

/** The open multi-select quick pick: [{ label, checked }]. */
async function checkedItems() {
  await page.locator(".quick-input-widget .quick-input-list .monaco-list-row").first().waitFor();
  return page.locator(".quick-input-widget .quick-input-list .monaco-list-row").evaluateAll((rows) =>
    rows.map((r) => ({
      label: r.querySelector(".label-name")?.textContent.trim() ?? "",
      checked: r.getAttribute("aria-checked") === "true" || !!r.querySelector("input[type=checkbox]:checked, .monaco-custom-toggle.checked[role=checkbox]"),
    })),
  );
}

/** Waits for the quick pick titled `title`, checks its preselected tools, accepts them. */
async function acceptPicks(title, expected) {
  await page.locator(".quick-input-widget .quick-input-title", { hasText: title }).waitFor({ timeout: T(30_000) });
  const items = await checkedItems();
  console.log(`[${title}] ${items.map((i) => `${i.checked ? "[x]" : "[ ]"} ${i.label}`).join(", ")}`);
  assert.deepEqual(
    items
      .filter((i) => i.checked)
      .map((i) => i.label)
      .sort(),
    [...expected].sort(),
  );
  await page.locator(".quick-input-widget .quick-input-box input").press("Enter");
}

scenario("Record this program with Causeway on the example, then right-click its e-mail → Find the cause names the vendor note", async () => {
  await openFile(page, EXAMPLE, { timeout: T(120_000) });
  await watchNotifications(page);
  await runCommand(page, "Causeway: Record this program with Causeway", { timeout: T(120_000) });
  await acceptPicks("sensitive tools", ["send_email", "issue_refund"]);
  await acceptPicks("untrusted tools", ["fetch_doc"]);
  const done = await waitForNotificationOrError(page, new RegExp(`recorded ${EXAMPLE.replaceAll(".", "\\.")} into runs`), { timeout: T(180_000) });
  console.log(`[record] ${await notificationText(done)}`);

  // the run on disk, allowed for replays, in the tree and in the investigator
  const runs = path.join(ws, "runs");
  const runId = fs.readdirSync(runs).find((d) => fs.existsSync(path.join(runs, d, "events.jsonl")));
  assert.ok(runId, "a run was recorded under runs/");
  const run = path.join(runs, runId);
  const events = fs
    .readFileSync(path.join(run, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(events[0].program, `node ${EXAMPLE}`);
  assert.deepEqual(events[0].sensitive_tools.sort(), ["issue_refund", "send_email"]);
  // approved in the extension's state with the file's hash (Find the cause below asks nothing), not in a settings file
  const settingsFile = path.join(ws, ".vscode/settings.json");
  assert.ok(!fs.existsSync(settingsFile) || !("causeway.allowedPrograms" in JSON.parse(fs.readFileSync(settingsFile, "utf8"))));
  const frame = await investigator(page, { open: false });
  await waitUntil(page, async () => (await frame.locator('header select[aria-label="Run"] option:checked').textContent()) === runId, {
    what: `the investigator on ${runId}`,
  });
  await openViewContainer(page, "Causeway");
  await treeRows(page, "Runs", { minRows: 1, timeout: T(60_000) });
  await screenshot(page, "41-recorded-from-the-editor");

  const argsOf = (e) => fs.readFileSync(path.join(run, "blobs", `${e.args_ref.replace(/^sha256:/, "")}.json`), "utf8");
  const target = events.filter((e) => e.type === "action" && e.tool === "send_email" && /vendor-compliance/.test(argsOf(e))).at(-1);
  assert.ok(target, "the recording e-mails the planted address (the fake model followed the vendor note)");
  await expandTreeRow(page, "Runs", [runId]);
  await expandTreeRow(page, "Runs", [runId, target.agent]);
  const row = viewPane(page, "Runs")
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator(".monaco-icon-label .label-description", { hasText: new RegExp(`^\\s*#${target.seq}\\b`) }) })
    .first();
  await row.waitFor({ timeout: T(30_000) });
  await contextMenu(page, row, "Find the cause");
  const toast = await waitForNotificationOrError(page, new RegExp(`Find the cause of send_email \\(#${target.seq}, ${runId}\\) — `), { timeout: T(600_000) });
  const text = await notificationText(toast);
  console.log(`[find the cause] ${text}`);
  assert.match(text, new RegExp(`— primary cause input:${SOURCE.replaceAll("/", "\\/")} \\{"name":"vendor-note"\\} \\(\\+0\\.\\d\\d\\)`));
  assert.doesNotMatch(text, /shipping-faq|ticket-881/);
  assert.ok(
    testsOf(run).some((t) => t.intervention === `input:${SOURCE} {"name":"vendor-note"}` && t.verdict === "causal"),
    "the tests were appended to tests.jsonl",
  );
  await screenshot(page, "41-record-program-find-the-cause");
});

scenario(
  "the launch configuration: a debug session of the example records a run, which opens when the session ends",
  async () => {
    const runs = path.join(ws, "runs");
    const before = new Set(fs.readdirSync(runs));
    await openFile(page, EXAMPLE, { timeout: T(120_000) });
    // the tools were answered for this program in the first scenario: no picks this time
    await runCommand(page, "Causeway: Add a launch configuration that records this program", { timeout: T(120_000) });
    await waitForNotificationOrError(page, /added "Record with Causeway: support-agents\.mjs" to launch\.json/, { timeout: T(60_000) });
    const launch = JSON.parse(fs.readFileSync(path.join(ws, ".vscode/launch.json"), "utf8").replace(/^\s*\/\/.*$/gm, ""));
    const config = launch.configurations.find((c) => c.name === "Record with Causeway: support-agents.mjs");
    assert.deepEqual(config.runtimeArgs, ["--import", "${command:causeway.preloadPath}"]);
    assert.equal(config.env.CAUSEWAY_SENSITIVE, "send_email,issue_refund");
    await runCommand(page, "Debug: Select and Start Debugging", { timeout: T(120_000) });
    // the pick's input holds the "debug " prefix of its quick access: pick the row without typing
    await pickQuickItem(page, "Record with Causeway: support-agents.mjs", { filter: false });
    const toast = await waitForNotificationOrError(page, /the debug session recorded support-agents-/, { timeout: T(180_000) });
    const runId = /recorded (\S+?)\.?$/.exec(await notificationText(toast))[1];
    assert.ok(!before.has(runId), `${runId} is a new run`);
    const start = JSON.parse(fs.readFileSync(path.join(runs, runId, "events.jsonl"), "utf8").split("\n")[0]);
    assert.equal(start.program, `node ${EXAMPLE}`);
    assert.deepEqual(start.sensitive_tools.sort(), ["issue_refund", "send_email"]);
    const frame = await investigator(page, { open: false });
    await waitUntil(page, async () => (await frame.locator('header select[aria-label="Run"] option:checked').textContent()) === runId, {
      what: `the investigator on ${runId}`,
    });
    await screenshot(page, "41-recorded-by-a-debug-session");
  },
  { needs: "Record this program with Causeway on the example, then right-click its e-mail → Find the cause names the vendor note" },
); // the tools answered there
