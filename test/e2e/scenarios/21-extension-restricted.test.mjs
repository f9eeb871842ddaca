// Restricted Mode (an untrusted workspace): every viewing feature works — the runs tree, the
// Problems panel, the investigator — and no replay runs: Find the cause explains why instead,
// and tests.jsonl stays as it was.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  contextMenu, expandTreeRow, isRestrictedMode, launchBrowser, makeWorkspace, openViewContainer, openWorkbench,
  scenario, screenshot, startCodeServer, treeRows, viewPane, waitForNotification,
} from '../lib.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const VIEW = 'Runs';
let cs;
let b;
let page;
let ws;

const testsOf = (run) => fs.readFileSync(path.join(ws, 'runs', run, 'tests.jsonl'), 'utf8');

before(async () => {
  ws = makeWorkspace('causeway-restricted');
  execFileSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), 'demo', '--out', path.join(ws, 'runs'), '--n', '10'], { cwd: ws, stdio: 'pipe' });
  cs = await startCodeServer({ name: 'restricted', trust: true, folder: ws });
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { url: cs.url, folder: ws });
});

after(async () => {
  await b?.close();
  await cs?.stop();
});

scenario('an untrusted workspace opens in Restricted Mode and still lists the runs', async () => {
  assert.ok(await isRestrictedMode(page), 'the window is in Restricted Mode');
  await openViewContainer(page, 'Causeway');
  await treeRows(page, VIEW, { minRows: 8, timeout: 60_000 });
  const row = viewPane(page, VIEW).locator('.monaco-list-row').filter({ has: page.locator('.label-description', { hasText: /^\s*intact · 1 high/ }) }).first();
  await row.waitFor({ timeout: 30_000 });
  await screenshot(page, '30-restricted-tree');
});

scenario('Find the cause does not replay: it says why, and tests.jsonl is unchanged', async () => {
  const before = testsOf('demo-seed0');
  await expandTreeRow(page, VIEW, ['demo-seed0']);
  await expandTreeRow(page, VIEW, ['demo-seed0', 'executor']);
  const email = viewPane(page, VIEW).locator('.monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: /^\s*send_email\s*$/ }) })
    .filter({ has: page.locator('.label-description', { hasText: /^\s*#18\b/ }) }).first();
  await contextMenu(page, email, 'Find the cause');
  const toast = await waitForNotification(page, /Restricted Mode/);
  assert.match(await toast.textContent(), /Replays run the agent program's code, so they are off in Restricted Mode/);
  await screenshot(page, '31-restricted-find-the-cause');
  await page.waitForTimeout(1500); // a replay, had one started, would have written by now
  assert.equal(testsOf('demo-seed0'), before);
});
