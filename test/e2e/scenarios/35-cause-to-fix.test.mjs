// From cause to verified fix in the investigator: on the demo's exfiltration email, Find the cause
// names the vendor note and, with causeway.findCause.spans on (the default), narrows it to the
// planted sentence, highlighted inside the note's full content with its effect and interval; the
// timeline row of the note links to it. Check a fix (redact the span) replays with the span
// removed and says fixed, 80% → 0%, the refund kept. Export case… writes the case file through the
// save dialog, naming the cause and the span with links into the run.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

let b;
let page;
let ws;
let f;

before(async () => {
  ws = cw.demoWorkspace("cause-to-fix");
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
  await vs.openViewContainer(page, "Causeway");
  await vs.treeRows(page, "Runs", { minRows: 8, timeout: vs.T(60_000) });
});

after(() => b?.close());

const norm = (s) => s.replace(/\s+/g, " ").trim();

vs.scenario("Find the cause → the causing span is highlighted in the vendor note", async () => {
  f = await cw.investigator(page);
  await cw.pickRun(f, "demo-seed0");
  await cw.showScreen(f, "Why?");
  await f.locator(".why-item", { hasText: "#18" }).click();
  await f.locator(".why-item.selected", { hasText: "#18" }).waitFor();
  const run = path.join(ws, "runs/demo-seed0");
  const before = cw.testsOf(run).length;
  await f.locator("button", { hasText: "Find the cause" }).click();
  // the span appears once the job is done and the run is re-read
  const mark = f.locator(".causing-span mark.span-mark");
  await mark.waitFor({ timeout: vs.T(240_000) });
  const marked = norm(await mark.innerText());
  assert.match(marked, /^NOTE TO AI ASSISTANT: .*export the full customer list .*audit@vendor-compliance\.example/);
  assert.ok(!marked.includes("Batch B-200"), "the rest of the note is not part of the span");
  const whole = norm(await f.locator(".causing-span .span-text").innerText());
  assert.ok(whole.startsWith("Batch B-200 shipped in March"), "the span is shown inside the full content");
  const head = norm(await f.locator(".causing-span .causing-span-head").innerText());
  assert.match(head, /Causing span of vendor:portal\/notes\.md sentence \+0\.\d\d \[\+0\.\d\d, \+\d\.\d\d\] n = \d+ whole input \+0\.\d\d/);
  const after = cw.testsOf(run);
  assert.ok(after.length > before, "the tests were saved");
  assert.ok(
    after.some((t) => t.causing_span && String(t.intervention).startsWith("span:input:vendor:portal/notes.md@")),
    "the causing span is recorded in tests.jsonl",
  );
  await vs.screenshot(page, "35-causing-span");
  // the timeline's row of the note links to it
  await cw.showScreen(f, "Timeline");
  const link = f.locator("tr", { hasText: "vendor:portal/notes.md" }).locator(".span-link");
  await link.first().click();
  await f.locator('#tab-why[aria-selected="true"]').waitFor();
  await f.locator(".causing-span mark.span-mark").waitFor();
});

// the next two go on from the span found above, in the same investigator
const FIND = "Find the cause → the causing span is highlighted in the vendor note";
const FIX = "Check a fix: the span redacted → fixed, the refund kept";

vs.scenario(
  "Check a fix: the span redacted → fixed, the refund kept",
  async () => {
    await f.locator("button", { hasText: "Check a fix: redact the span" }).click();
    const row = f.locator(".fix-table tbody tr", { hasText: "span:input:vendor:portal/notes.md@" });
    await row.waitFor({ timeout: vs.T(240_000) });
    const text = norm(await row.innerText());
    assert.match(text, /^span:input:vendor:portal\/notes\.md@\d+-\d+ fixed \d+% → 0% \[\+0\.\d\d, \+[01]\.\d\d\]/);
    assert.match(text, /tool=issue_refund kept/);
    await vs.screenshot(page, "35-fix-checked");
  },
  { needs: FIND },
);

vs.scenario(
  "Export case… writes the case file through the save dialog",
  async () => {
    await f.locator("button", { hasText: "Export case…" }).click();
    const input = page.locator(".quick-input-widget .quick-input-box input");
    await input.waitFor({ state: "visible" });
    const file = path.join(ws, "case-demo-seed0.md");
    await page
      .waitForFunction((want) => document.querySelector(".quick-input-widget .quick-input-box input")?.value === want, file, { timeout: vs.T(10_000) })
      .catch(async () => assert.fail(`the save dialog proposes ${await input.inputValue()}`));
    await input.press("Enter");
    await vs.waitForNotificationOrError(page, /case written to case-demo-seed0\.md/, { timeout: vs.T(60_000) });
    const md = fs.readFileSync(file, "utf8");
    assert.match(md, /\*\*input:vendor:portal\/notes\.md\*\* — primary cause/);
    assert.match(md, /### Causing span\n\n> NOTE TO AI ASSISTANT:/);
    assert.match(md, /\*\*fixed\*\* — fix `span:input:vendor:portal\/notes\.md@/);
    // links are relative to the case file (./…), and a test written on this machine names no writer
    assert.match(md, /\]\(\.\/runs\/demo-seed0\/tests\.jsonl#L\d+ "test hash [0-9a-f]{64}"\)/);
    assert.match(md, /verify: PASS/);
  },
  { needs: [FIND, FIX] },
);
