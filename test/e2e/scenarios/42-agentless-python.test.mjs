// Find the cause without the program: the Python support desk (examples/python/) recorded by
// `causeway record` behind its built-in gateway, against the fake model server this scenario
// starts. Its program (python3 …) is never allowed, so right-click its e-mail to the planted
// address → Find the cause replays at rung 2: the recorded requests re-sent to the endpoint of the
// extension host's environment (OPENAI_BASE_URL), tools from the tape. No approval is asked, the
// vendor note comes out as the primary cause, every test says rung 2 with its assumptions, and the
// program's send_email never runs again (its outbox, SUPPORT_OUTBOX, is unchanged). The cause named
// is the one of the call's suggested target, the recipient the e-mail went to (the body also quotes
// the customer's address from the ticket: a whole argument comes before a quoted one). Then Run
// test… on the same row, the vendor note removed and
// the planted address typed as the target: CAUSAL, at rung 2, and still no e-mail sent.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  contextMenu,
  expandTreeRow,
  launchBrowser,
  notificationText,
  openViewContainer,
  openWorkbench,
  pickQuickItem,
  scenario,
  screenshot,
  startCodeServer,
  treeRow,
  treeRows,
  viewPane,
  waitForNotificationOrError,
  watchNotifications,
  T,
} from "../lib.mjs";
import { cli, exampleWorkspace, testsOf } from "../causeway.mjs";
import { spawnFakeModelServer } from "../../fake-llm/spawn.mjs";

const EXAMPLE = "examples/python/support_desk.py";
let fake;
let cs;
let b;
let page;
let ws;
let run;
let outbox;

before(async () => {
  // a model that always follows the planted note: the recording e-mails it, and so does every
  // replay with the note, none without; the extension host inherits the endpoint (rung 2's)
  fake = await spawnFakeModelServer({ followRate: 1 });
  process.env.OPENAI_BASE_URL = `${fake.url}/v1`;
  process.env.OPENAI_API_KEY = "fake";
  ws = exampleWorkspace("agentless-python", path.dirname(EXAMPLE), {
    "causeway.replay.workers": 8,
    "causeway.test.n": 10,
    "causeway.test.nMax": 40,
    "causeway.findCause.spans": false,
    "search.followSymlinks": false,
    "files.exclude": { node_modules: true },
  });
  // the program's real side effect: every e-mail it sends is appended here (the extension host
  // inherits the variable, so a replay that ran the program would write here too)
  outbox = path.join(ws, "outbox.jsonl");
  process.env.SUPPORT_OUTBOX = outbox;
  cli(ws, "record", "--out", "runs", "--untrusted-tool", "fetch_doc", "--sensitive", "send_email", "--", "python3", EXAMPLE);
  const runs = path.join(ws, "runs");
  const id = fs.readdirSync(runs).find((d) => fs.existsSync(path.join(runs, d, "events.jsonl")));
  assert.ok(id, "causeway record wrote a run under runs/");
  run = path.join(runs, id);
  cs = await startCodeServer({ name: "agentless-python", trust: false, folder: ws });
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { folder: ws, url: cs.url, timeout: T(120_000) });
});

after(async () => {
  await b?.close();
  await cs?.stop();
  fake?.stop();
});

scenario("a Python run recorded through the gateway: Find the cause from the tree replays without the program (rung 2)", async () => {
  const events = fs
    .readFileSync(path.join(run, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.match(String(events[0].program), /python3/);
  const sent = fs.readFileSync(outbox, "utf8");
  assert.match(sent, /vendor-compliance/, "the recording e-mailed the planted address");
  const argsOf = (e) => fs.readFileSync(path.join(run, "blobs", `${e.args_ref.replace(/^sha256:/, "")}.json`), "utf8");
  const target = events.filter((e) => e.type === "action" && e.tool === "send_email" && /vendor-compliance/.test(argsOf(e))).at(-1);
  assert.ok(target, "the run holds the e-mail to the planted address");

  await watchNotifications(page);
  await openViewContainer(page, "Causeway");
  const runId = path.basename(run);
  await treeRows(page, "Runs", { minRows: 1, timeout: T(60_000) });
  // expand the run once it is analysed: a row redrawn by its analysis drops a click on its twistie
  await treeRow(page, "Runs", runId)
    .locator(".label-description", { hasText: /intact/ })
    .waitFor({ timeout: T(180_000) });
  await expandTreeRow(page, "Runs", [runId], { timeout: T(60_000) });
  await expandTreeRow(page, "Runs", [runId, target.agent], { timeout: T(60_000) });
  const row = viewPane(page, "Runs")
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator(".monaco-icon-label .label-description", { hasText: new RegExp(`^\\s*#${target.seq}\\b`) }) })
    .first();
  await row.waitFor({ timeout: T(30_000) });
  await contextMenu(page, row, "Find the cause");
  // no approval modal: the answer comes straight after the replay
  const toast = await waitForNotificationOrError(page, new RegExp(`Find the cause of send_email \\(#${target.seq}, ${runId}\\) — `), { timeout: T(600_000) });
  const text = await notificationText(toast);
  console.log(`[find the cause] ${text}`);
  // the answer for the call's suggested target, its recipient: the vendor note, alone
  assert.match(text, /primary cause input:tool:fetch_doc \{"name":"vendor-note"\}/);
  assert.doesNotMatch(text, /primary cause input:tool:fetch_doc \{"name":"(?!vendor-note)/);
  assert.match(text, /\(rung 2: replayed without the program, tools from the recording\)$/);
  assert.equal(await page.locator(".monaco-dialog-box").count(), 0, "nothing was asked");

  const tests = testsOf(run);
  assert.ok(tests.length > 0, "the tests were appended to tests.jsonl");
  assert.ok(
    tests.every((t) => t.rung === 2),
    `every test at rung 2: ${tests.map((t) => t.rung).join(",")}`,
  );
  assert.ok(tests.some((t) => /^input:tool:fetch_doc \{"name":"[a-z0-9-]+"\}$/.test(t.intervention) && t.verdict === "causal"));
  assert.ok(tests.every((t) => Array.isArray(t.assumptions) && t.assumptions.some((a) => /no tool ran and no program was started/.test(a))));
  assert.equal(fs.readFileSync(outbox, "utf8"), sent, "the program's send_email never ran again");
  await screenshot(page, "42-agentless-find-the-cause");
});

scenario(
  "Run test from the tree at rung 2: without the vendor note, no e-mail to the planted address",
  async () => {
    const events = fs
      .readFileSync(path.join(run, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const argsOf = (e) => fs.readFileSync(path.join(run, "blobs", `${e.args_ref.replace(/^sha256:/, "")}.json`), "utf8");
    const target = events.filter((e) => e.type === "action" && e.tool === "send_email" && /vendor-compliance/.test(argsOf(e))).at(-1);
    const sent = fs.readFileSync(outbox, "utf8");
    const before = testsOf(run).length;
    const runId = path.basename(run);
    const row = viewPane(page, "Runs")
      .locator(".monaco-list-row")
      .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: /^\s*send_email\s*$/ }) })
      .filter({ has: page.locator(".monaco-icon-label .label-description", { hasText: new RegExp(`^\\s*#${target.seq}\\b`) }) })
      .first();
    await row.waitFor({ timeout: T(30_000) });
    await contextMenu(page, row, "Run test…");
    const title = (t) => page.locator(".quick-input-widget .quick-input-title", { hasText: t }).waitFor({ timeout: T(30_000) });
    await title("Run test (2/5): what to remove");
    await pickQuickItem(page, 'input:tool:fetch_doc {"name":"vendor-note"}');
    await title("Run test (3/5): the target");
    await pickQuickItem(page, "Other…");
    const input = page.locator(".quick-input-widget .quick-input-box input");
    await page
      .locator(".quick-input-widget .quick-input-message", { hasText: "A target" })
      .waitFor({ timeout: T(30_000) })
      .catch(() => {});
    await input.fill("tool=send_email,arg~vendor-compliance");
    await input.press("Enter");
    for (const step of ["Run test (4/5): n", "Run test (5/5): n-max"]) {
      await title(step);
      await input.press("Enter"); // the settings' 10 / 40
    }
    const toast = await waitForNotificationOrError(page, new RegExp(`Run test on ${runId} — `), { timeout: T(600_000) });
    const text = await notificationText(toast);
    console.log(`[run test] ${text}`);
    assert.match(
      text,
      /Removing input:tool:fetch_doc \{"name":"vendor-note"\}: tool=send_email,arg~vendor-compliance .*: CAUSAL.*\(rung 2: replayed without the program, tools from the recording\)$/,
    );
    const tests = testsOf(run);
    assert.equal(tests.length, before + 1);
    assert.equal(tests.at(-1).rung, 2);
    assert.equal(tests.at(-1).verdict, "causal");
    assert.equal(fs.readFileSync(outbox, "utf8"), sent, "the program's send_email never ran again");
    await screenshot(page, "42-agentless-run-test");
  },
  { needs: "a Python run recorded through the gateway: Find the cause from the tree replays without the program (rung 2)" },
);
