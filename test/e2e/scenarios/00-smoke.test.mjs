// Smoke test of the e2e pipeline: the .vsix is installed in code-server and VS Code shows the
// extension's "Causeway" view container with its "Runs" view.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as vs from '../lib.mjs';

let browser;
let page;

before(async () => {
  browser = await vs.launchBrowser();
  page = browser.page;
  await vs.openWorkbench(page); // the run's workspace (WS_DIR)
});

after(async () => {
  await browser?.close();
});

vs.scenario('the Causeway container shows the Runs view', async () => {
  await vs.openViewContainer(page, 'Causeway');
  const runs = vs.viewPane(page, 'Runs');
  await runs.waitFor({ state: 'visible' });
  // single view in the container: VS Code merges its header into the title "Causeway: Runs"
  await page.locator('.part.sidebar .composite.title h2', { hasText: /^Causeway/ }).waitFor();
  const shot = await vs.screenshot(page, '00-smoke-runs-view');
  assert.ok(fs.statSync(shot).size > 10_000, 'screenshot written');
  for (const e of browser.errors) console.log('[pageerror]', e.message);
});
