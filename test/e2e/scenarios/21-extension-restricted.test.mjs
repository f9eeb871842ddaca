// Restricted Mode (an untrusted workspace): every viewing feature works — the runs tree with its
// alerts, the Problems panel, the code lens, the investigator's screens — and no replay runs:
// Find the cause (tree menu), Run test… and Replay run… (palette) each explain why instead, the
// investigator's replay buttons are disabled with the same explanation, and tests.jsonl stays as
// it was.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  clearNotifications,
  codeLensAt,
  contextMenu,
  expandTreeRow,
  isRestrictedMode,
  launchBrowser,
  notificationText,
  openFile,
  openViewContainer,
  openWorkbench,
  problems,
  runCommand,
  scenario,
  screenshot,
  startCodeServer,
  treeRows,
  viewPane,
  waitForNotificationOrError,
  waitUntil,
  T,
} from "../lib.mjs";
import { demoWorkspace, investigator, pickRun, screenText, showScreen } from "../causeway.mjs";

const VIEW = "Runs";
const REASON =
  "Causeway: Replays run the agent program's code, so they are off in Restricted Mode. Trust this workspace to run Find the cause, Run test and Replay; everything else works.";
let cs;
let b;
let page;
let ws;

const testsOf = (run) => fs.readFileSync(path.join(ws, "runs", run, "tests.jsonl"), "utf8");
let testsBefore;

before(async () => {
  ws = demoWorkspace("causeway-restricted");
  testsBefore = testsOf("demo-seed0");
  cs = await startCodeServer({ name: "restricted", trust: true, folder: ws });
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { url: cs.url, folder: ws });
});

after(async () => {
  await b?.close();
  await cs?.stop();
});

scenario("an untrusted workspace opens in Restricted Mode and still lists the runs with their alerts", async () => {
  assert.ok(await isRestrictedMode(page), "the window is in Restricted Mode");
  await openViewContainer(page, "Causeway");
  await treeRows(page, VIEW, { minRows: 8, timeout: T(60_000) });
  // wait until the runs are analysed ("reading…" goes away), not for a time
  const rows = await waitUntil(
    page,
    async () => {
      const r = await treeRows(page, VIEW);
      return ["demo-seed0", "demo-seed2"].every((l) => r.some((x) => x.label === l && !/^\s*reading/.test(x.description ?? ""))) && r;
    },
    { timeout: T(120_000), what: "demo-seed0 and demo-seed2 analysed" },
  );
  assert.equal(rows.find((r) => r.label === "demo-seed0").description, "intact · 1 high · 3 review · causeway:demo");
  assert.equal(rows.find((r) => r.label === "demo-seed2").description, "intact · causeway:demo");
  await screenshot(page, "21-restricted-tree");
});

scenario("Problems and the code lens still show the alert on the email", async () => {
  const list = await problems(page, { minCount: 1, timeout: T(30_000) });
  const onSource = list.filter((p) => p.file === "examples/demo/agents.ts" && p.severity === "error" && /^Causeway/.test(p.source));
  assert.equal(onSource.length, 1, JSON.stringify(list.map((p) => [p.file, p.line, p.message])));
  assert.equal(onSource[0].line, 25);
  assert.ok(list.some((p) => p.file === "runs/demo-seed0/events.jsonl" && p.line === 19 && p.severity === "error"));
  await openFile(page, "examples/demo/agents.ts");
  const act = await codeLensAt(page, 25, "send_email ·"); // hides the Problems panel, brings line 25 into view
  assert.ok(act, "the send_email lens shows");
  assert.match(
    act.titles.find((t) => t.startsWith("send_email")),
    /^send_email · \d+ runs · 5 high · .*cause: vendor:portal\/notes\.md \+0\.85$/,
  );
  await screenshot(page, "21-restricted-problems-lens");
});

scenario("Find the cause does not replay: it says why, and tests.jsonl is unchanged", async () => {
  await openViewContainer(page, "Causeway");
  await expandTreeRow(page, VIEW, ["demo-seed0"]);
  await expandTreeRow(page, VIEW, ["demo-seed0", "executor"]);
  const email = viewPane(page, VIEW)
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator(".label-description", { hasText: /^\s*#18\b/ }) })
    .first();
  await contextMenu(page, email, "Find the cause");
  const toast = await waitForNotificationOrError(page, /Restricted Mode/);
  assert.equal(await notificationText(toast), REASON);
  assert.ok(await toast.locator(".monaco-button", { hasText: "Manage Workspace Trust" }).isVisible(), "it offers to manage trust");
  await screenshot(page, "21-restricted-find-the-cause");
  await clearNotifications(page);
});

scenario("Run test… and Replay run… from the palette refuse with the same explanation", async () => {
  for (const cmd of ["Causeway: Run test…", "Causeway: Replay run…"]) {
    await runCommand(page, cmd);
    const toast = await waitForNotificationOrError(page, /Restricted Mode/);
    assert.equal(await notificationText(toast), REASON, cmd);
    // no quick pick asks for a run: nothing goes ahead
    assert.equal(await page.locator(".quick-input-widget .quick-input-list .monaco-list-row").filter({ visible: true }).count(), 0, cmd);
    await clearNotifications(page);
  }
  assert.equal(testsOf("demo-seed0"), testsBefore, "tests.jsonl is unchanged");
});

scenario("the investigator shows every screen; its replay buttons are disabled with the reason", async () => {
  await runCommand(page, "View: Close All Editors"); // the investigator gets the whole editor area
  // the panel may be hidden already (the code lens scenario hides it): the command is offered only when it shows
  if (await page.locator(".part.panel").isVisible()) await runCommand(page, "View: Hide Panel");
  const f = await investigator(page);
  await pickRun(f, "demo-seed0"); // the default run is whichever run with a high alert is known first
  await showScreen(f, "Why?");
  await f.locator(".why-item.selected", { hasText: "#18" }).waitFor();
  assert.match(await screenText(f), /vendor:portal\/notes\.md is the primary cause/);
  assert.equal((await f.locator('.note[role="note"]').first().innerText()).trim(), REASON.replace(/^Causeway: /, ""));
  const find = f.locator("button", { hasText: "Find the cause" });
  assert.ok(await find.isDisabled(), "Find the cause is disabled");
  assert.equal(await find.getAttribute("title"), REASON.replace(/^Causeway: /, ""));
  const tests = f.locator("tr.cand button", { hasText: /^(Run test|Re-test)$/ });
  assert.ok((await tests.count()) > 0);
  for (const t of await tests.all()) assert.ok(await t.isDisabled(), "Run test is disabled");
  await f.locator('.note[role="note"]').first().scrollIntoViewIfNeeded();
  await screenshot(page, "21-restricted-investigator");
  for (const [tab, text] of [
    ["Overview", /What needs attention/i],
    ["Timeline", /^.*20 events/],
    ["Agents", /Channels between agents/i],
    ["Influence", /across 8 runs/i],
    ["Runs", /^8 runs/i],
  ]) {
    await showScreen(f, tab);
    assert.match(await screenText(f), text, tab);
  }
  await showScreen(f, "Graph");
  await f.locator('.graph-canvas[data-ready="true"]').waitFor();
  assert.equal(testsOf("demo-seed0"), testsBefore, "tests.jsonl is unchanged");
});
