// An unmodified program on the raw OpenAI client and MCP, recorded with `causeway record --
// node examples/support-agents/openai-agent.mjs` against the fake model server: the run is in the
// tree like any other, and right-clicking its e-mail to the planted address → Find the cause
// replays the command (allowed in the workspace settings) and names the vendor note. The fake
// server is a child of this scenario; code-server is started here so that the extension host (and
// so the replayed program) sees OPENAI_BASE_URL.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {
  contextMenu,
  expandTreeRow,
  launchBrowser,
  notificationText,
  openViewContainer,
  openWorkbench,
  scenario,
  screenshot,
  startCodeServer,
  treeRows,
  viewPane,
  waitForNotificationOrError,
  watchNotifications,
  T,
} from "../lib.mjs";
import { CLI, exampleWorkspace, startFakeModelServer, testsOf } from "../causeway.mjs";

const PROGRAM = "node examples/support-agents/openai-agent.mjs";
let fake;
let cs;
let b;
let page;
let ws;

before(async () => {
  fake = await startFakeModelServer();
  ws = exampleWorkspace("unmodified-openai", "examples/support-agents", { "causeway.replay.workers": 8, "causeway.test.n": 10, "causeway.test.nMax": 40 });
  // seed 2: this recording e-mails the customer list to the vendor note's address
  execFileSync(
    process.execPath,
    [
      CLI,
      "record",
      "--out",
      "runs",
      "--seed",
      "2",
      "--sensitive",
      "send_email",
      "--trusted-tool",
      "send_email",
      "--trusted-tool",
      "issue_refund",
      "--run-id",
      "support-openai",
      "--",
      ...PROGRAM.split(" "),
    ],
    { cwd: ws, stdio: "pipe" },
  );
  cs = await startCodeServer({ name: "unmodified", trust: false, folder: ws });
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { folder: ws, url: cs.url });
});

after(async () => {
  await b?.close();
  await cs?.stop();
  fake?.stop();
});

scenario("a recorded run of the unmodified OpenAI example: right-click its e-mail → Find the cause shows the vendor note", async () => {
  await openViewContainer(page, "Causeway");
  await treeRows(page, "Runs", { minRows: 1, timeout: T(60_000) });
  await expandTreeRow(page, "Runs", ["support-openai"]);
  await expandTreeRow(page, "Runs", ["support-openai", "executor"]);
  const run = path.join(ws, "runs/support-openai");
  const events = fs
    .readFileSync(path.join(run, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const sends = events.filter((e) => e.type === "action" && e.tool === "send_email");
  const target = sends.at(-1);
  const row = viewPane(page, "Runs")
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator(".monaco-icon-label .label-description", { hasText: new RegExp(`^\\s*#${target.seq}\\b`) }) })
    .first();
  await row.waitFor({ timeout: T(30_000) });
  await watchNotifications(page);
  await contextMenu(page, row, "Find the cause");
  // the first replay of the command asks, naming the command and the script's absolute path
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: T(15_000) });
  const asked = await dialog.textContent();
  assert.match(asked, new RegExp(`Allow Causeway to run ${PROGRAM.replaceAll(".", "\\.")}`));
  assert.ok(asked.includes(path.join(ws, "examples/support-agents/openai-agent.mjs")), asked);
  await dialog.locator(".monaco-button", { hasText: "Allow and replay" }).click();
  const toast = await waitForNotificationOrError(page, new RegExp(`Find the cause of send_email \\(#${target.seq}, support-openai\\) — `), {
    timeout: T(600_000),
  });
  const text = await notificationText(toast);
  console.log(`[find the cause] ${text}`);
  assert.match(text, /— primary cause input:mcp:support-desk\/fetch_doc \{"name":"vendor-note"\} \(\+0\.\d\d\)/);
  assert.doesNotMatch(text, /shipping-faq|ticket-881/);
  const tests = testsOf(run);
  assert.ok(
    tests.some((t) => t.intervention === 'input:mcp:support-desk/fetch_doc {"name":"vendor-note"}' && t.verdict === "causal"),
    "the tests were appended to tests.jsonl",
  );
  await screenshot(page, "40-unmodified-find-the-cause");
});
