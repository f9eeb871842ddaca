// Playwright helpers for the end-to-end scenarios: drive a real VS Code (code-server 4.100.3 =
// VS Code 1.100.3) in Debian's Chromium. Scenarios run under run.sh, which sets the env below.
// DOM selectors are those of VS Code 1.100; if code-server is upgraded, check them first.
//
// Conventions: every helper waits for a condition (never a fixed sleep) and takes an optional
// { timeout } (ms). Labels/titles are matched exactly when given as strings, or by a RegExp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const HERE = path.dirname(new URL(import.meta.url).pathname);

/** What run.sh passes to the scenarios. */
export const env = {
  CS_URL: process.env.CS_URL ?? 'http://127.0.0.1:8080', // the code-server run.sh started
  WS_DIR: process.env.WS_DIR, // the folder it was started on (prepared by run.sh prepare_workspace)
  WORK_DIR: process.env.WORK_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-')), // scratch, per run
  SHOTS_DIR: process.env.SHOTS_DIR ?? path.join(HERE, 'shots'),
  CHROMIUM: process.env.CHROMIUM ?? '/usr/bin/chromium',
  VSIX: process.env.VSIX ?? path.join(HERE, '../../build/causeway.vsix'),
  CS_BIN: process.env.CS_BIN ?? path.join(HERE, 'code-server/node_modules/.bin/code-server'),
  CS_PIDS_FILE: process.env.CS_PIDS_FILE, // run.sh kills every process group listed here on exit
  SETTINGS: process.env.E2E_SETTINGS ?? path.join(HERE, 'settings.json'),
  FIXTURES: process.env.E2E_FIXTURES ?? path.join(HERE, 'fixtures'),
  WORKSPACE_TRUST: process.env.WORKSPACE_TRUST === 'true',
};

const DEFAULT_TIMEOUT = 30_000;
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** String -> exact (whitespace-trimmed) RegExp; RegExp -> as is. */
const exact = (t) => (t instanceof RegExp ? t : new RegExp(`^\\s*${esc(t)}\\s*$`));
const slug = (s) => s.replace(/[^\w.-]+/g, '-').replace(/^-|-$/g, '').slice(0, 80);

// ---------------------------------------------------------------------------------------------
// Browser and workbench

let current; // the last launched browser, used by scenario() for failure screenshots

/**
 * Launch Debian's Chromium (no Playwright browser download). Returns { context, page, errors,
 * close }. `errors` collects uncaught page errors (useful in asserts/debugging).
 */
export async function launchBrowser({ viewport = { width: 1400, height: 900 }, headless = true } = {}) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-chromium-'));
  // Playwright refuses a --user-data-dir arg; a persistent context on a fresh dir is the same.
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: env.CHROMIUM,
    headless,
    viewport,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  context.setDefaultTimeout(DEFAULT_TIMEOUT);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  const b = {
    context, page, errors,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profileDir, { recursive: true, force: true });
    },
  };
  current = b;
  return b;
}

/**
 * node:test `test()` that saves a screenshot FAILED-<name>.png of the last launched browser's
 * page when the body throws.
 */
export function scenario(name, fn, options = {}) {
  return test(name, options, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      if (current) await screenshot(current.page, `FAILED-${slug(name)}`).catch(() => {});
      throw e;
    }
  });
}

/** Open the workbench on `folder` (default: the run's workspace) and wait until it is usable. */
export async function openWorkbench(page, { folder = env.WS_DIR, url = env.CS_URL, timeout = 60_000 } = {}) {
  assert.ok(folder, 'openWorkbench: no folder (WS_DIR unset?)');
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
  await waitForWorkbench(page, { timeout });
}

/** Wait for the workbench parts to be rendered and the folder to be opened. */
export async function waitForWorkbench(page, { timeout = 60_000 } = {}) {
  const wb = page.locator('.monaco-workbench');
  await wb.waitFor({ timeout });
  for (const part of ['.part.activitybar', '.part.statusbar', '.part.editor']) {
    await wb.locator(part).first().waitFor({ state: 'visible', timeout });
  }
  // the activity bar lists its view containers once the workbench has restored its layout
  await wb.locator('.part.activitybar li.action-item a.action-label').first().waitFor({ timeout });
}

/** Move the mouse to a neutral spot (blank title bar) so hovers/tooltips do not linger. */
export async function moveMouseAway(page) {
  const vp = page.viewportSize() ?? { width: 1400, height: 900 };
  await page.mouse.move(Math.round(vp.width * 0.2), 5);
}

/** Save SHOTS_DIR/<name>.png (full viewport). Returns the file path. */
export async function screenshot(page, name, { keepMouse = false, locator } = {}) {
  fs.mkdirSync(env.SHOTS_DIR, { recursive: true });
  const file = path.join(env.SHOTS_DIR, `${slug(name)}.png`);
  if (!keepMouse) await moveMouseAway(page);
  if (locator) await locator.screenshot({ path: file });
  else await page.screenshot({ path: file });
  return file;
}

// ---------------------------------------------------------------------------------------------
// Command palette, quick picks, notifications

/** Open the quick input with `key` (F1 = command palette, Control+P = quick open). */
async function openQuickInput(page, key, timeout) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      // focus may be inside a webview/iframe that swallowed the key: give it back to the workbench
      await page.locator('.part.statusbar').click({ position: { x: 2, y: 2 } }).catch(() => {});
    }
    await page.keyboard.press(key);
    try {
      await input.waitFor({ state: 'visible', timeout: attempt < 2 ? 3000 : timeout });
      return input;
    } catch (e) {
      if (attempt >= 2) throw e;
    }
  }
}

/** Rows of the open quick input list whose label is exactly `label` (string) or matches (RegExp). */
function quickRows(page, label) {
  return page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.quick-input-list-label .label-name', { hasText: exact(label) }) });
}

/**
 * Run a command from the command palette by its full title as shown there, e.g.
 * 'Causeway: Open Run' (category prefix included). Exact match, so similar titles are safe.
 */
export async function runCommand(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  const input = await openQuickInput(page, 'F1', timeout);
  await input.fill('>' + (title instanceof RegExp ? '' : title));
  const row = quickRows(page, title).first();
  await row.waitFor({ timeout });
  await row.click();
  await page.locator('.quick-input-widget .quick-input-list .monaco-list-row').first()
    .waitFor({ state: 'hidden', timeout }).catch(() => {}); // a command may open another quick pick
}

/**
 * Pick an entry in the currently open (or about to open) quick pick by its label. Types the
 * label into the filter box first unless { filter: false } (e.g. when labels have $(icons)).
 */
export async function pickQuickItem(page, label, { filter = true, timeout = DEFAULT_TIMEOUT } = {}) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout });
  if (filter && typeof label === 'string') await input.fill(label);
  const row = quickRows(page, label).first();
  await row.waitFor({ timeout });
  await row.click();
}

/** Labels (and descriptions/details) of the entries the open quick pick currently shows. */
export async function quickPickItems(page, { timeout = DEFAULT_TIMEOUT } = {}) {
  await page.locator('.quick-input-widget .quick-input-list .monaco-list-row').first().waitFor({ timeout });
  return page.locator('.quick-input-widget .quick-input-list .monaco-list-row').evaluateAll((rows) =>
    rows
      .sort((a, b) => +a.dataset.index - +b.dataset.index)
      .map((r) => ({
        label: r.querySelector('.quick-input-list-label .label-name')?.textContent.trim() ?? '',
        description: r.querySelector('.quick-input-list-label .label-description')?.textContent.trim() ?? '',
        detail: r.querySelector('.quick-input-list-label-meta .label-name')?.textContent.trim() ?? '',
      })));
}

/**
 * Wait for a notification toast containing `text` (string: substring, or RegExp); returns its
 * locator (e.g. for notificationButton). Waits for the slide-in animation to end.
 */
export async function waitForNotification(page, text, { timeout = DEFAULT_TIMEOUT } = {}) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).last();
  await toast.waitFor({ state: 'visible', timeout });
  await page.locator('.notifications-toasts .notification-toast.notification-fade-in-done', { hasText: text })
    .last().waitFor({ timeout }).catch(() => {});
  return toast;
}

/** Click a button ('Yes', 'Open', ...) of a notification toast returned by waitForNotification. */
export async function notificationButton(toast, label, { timeout = DEFAULT_TIMEOUT } = {}) {
  await toast.locator('.monaco-button', { hasText: exact(label) }).first().click({ timeout });
}

/** Dismiss all notifications. */
export async function clearNotifications(page) {
  await runCommand(page, 'Notifications: Clear All Notifications');
}

// ---------------------------------------------------------------------------------------------
// Views: activity bar containers, view panes, trees, context menus

/**
 * Show a view container by its activity-bar title (e.g. 'Causeway', 'Explorer'). Does not
 * toggle it closed when it is already shown. Returns the sidebar locator.
 */
export async function openViewContainer(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  // aria-label is 'Causeway' or 'Explorer (Ctrl+Shift+E)'
  const sel = `a.action-label[aria-label="${title}"], a.action-label[aria-label^="${title} ("]`;
  const item = page.locator('.part.activitybar li.action-item').filter({ has: page.locator(sel) }).first();
  await item.waitFor({ timeout });
  const sidebar = page.locator('.part.sidebar');
  const shown = (await item.getAttribute('aria-expanded')) === 'true' && (await sidebar.isVisible());
  if (!shown) await item.locator(sel).click();
  await page.locator('.part.activitybar li.action-item[aria-expanded="true"]').filter({ has: page.locator(sel) })
    .first().waitFor({ timeout });
  await sidebar.waitFor({ state: 'visible', timeout });
  await moveMouseAway(page); // the activity bar hover would cover the view
  return sidebar;
}

/**
 * Locator of a view pane by its view name (e.g. 'Runs'), in the sidebar, panel or secondary
 * side bar. Works when the pane header is merged into the container title (single view).
 */
export function viewPane(page, viewTitle) {
  return page.locator('.pane').filter({
    has: page.locator(`:scope > .pane-header[aria-label="${viewTitle} Section"]`),
  }).first();
}

/** Make sure the view pane is visible and expanded; returns its locator. */
export async function expandViewPane(page, viewTitle, { timeout = DEFAULT_TIMEOUT } = {}) {
  const pane = viewPane(page, viewTitle);
  await pane.waitFor({ state: 'visible', timeout });
  const header = pane.locator(':scope > .pane-header');
  if ((await header.getAttribute('aria-expanded')) === 'false') {
    await header.click();
    await pane.locator(':scope > .pane-header[aria-expanded="true"]').waitFor({ timeout });
  }
  return pane;
}

// Runs in the page: data of the rendered rows of a monaco list (tree view or Problems).
function extractRows(list, kind) {
  const txt = (el, sel) => el.querySelector(sel)?.textContent.replace(/\s+/g, ' ').trim() ?? '';
  const rowsEl = list.querySelector('.monaco-list-rows');
  const scroller = rowsEl?.parentElement;
  const m = /translate3d\([^,]+,\s*(-?[\d.]+)px/.exec(rowsEl?.style.transform ?? '');
  const scrollTop = m ? -parseFloat(m[1]) : 0;
  const total = parseFloat(rowsEl?.style.height ?? '0') || 0;
  const viewH = scroller?.clientHeight ?? 0;
  const rows = [...list.querySelectorAll('.monaco-list-row')].map((r) => {
    const base = {
      index: +r.dataset.index,
      level: +(r.getAttribute('aria-level') ?? 1),
      expanded: r.hasAttribute('aria-expanded') ? r.getAttribute('aria-expanded') === 'true' : undefined,
      ariaLabel: r.getAttribute('aria-label') ?? '',
    };
    if (kind === 'problems') {
      const fileLabel = r.querySelector('.resource-label-container .monaco-icon-label');
      if (fileLabel) {
        const dir = txt(r, '.label-description');
        const name = txt(r, '.label-name');
        return { ...base, type: 'file', path: fileLabel.getAttribute('aria-label') ?? '', file: dir && dir !== '.' ? `${dir}/${name}` : name };
      }
      const icon = r.querySelector('.marker-icon');
      const pos = /Ln (\d+), Col (\d+)/.exec(txt(r, '.marker-line'));
      return {
        ...base, type: 'marker',
        severity: icon ? ['error', 'warning', 'info'].find((s) => icon.classList.contains(s)) ?? 'hint' : '',
        message: [...r.querySelectorAll('.marker-message')].map((e) => e.textContent.trim()).join('\n'),
        source: txt(r, '.marker-source'), code: txt(r, '.marker-code'),
        line: pos ? +pos[1] : undefined, col: pos ? +pos[2] : undefined,
      };
    }
    return {
      ...base,
      label: txt(r, '.monaco-icon-label .label-name') || txt(r, '.monaco-tl-contents'),
      description: txt(r, '.monaco-icon-label .label-description'),
      selected: r.getAttribute('aria-selected') === 'true',
    };
  });
  return { rows, scrollTop, total, viewH };
}

/** All rows of a (virtualized) monaco list, scrolling it when they do not fit. */
async function readList(page, list, kind) {
  const byIndex = new Map();
  let state = await list.evaluate(extractRows, kind);
  const scrolls = state.total > state.viewH + 1;
  if (scrolls) {
    await list.hover({ position: { x: 5, y: 5 } });
    for (let i = 0; i < 200 && state.scrollTop > 0; i++) { // back to the top
      await page.mouse.wheel(0, -state.viewH * 4);
      await waitScrollChange(list, state.scrollTop);
      state = await list.evaluate(extractRows, kind);
    }
  }
  for (let i = 0; i < 500; i++) {
    for (const r of state.rows) byIndex.set(r.index, r);
    if (!scrolls || state.scrollTop + state.viewH >= state.total - 1) break;
    const before = state.scrollTop;
    await page.mouse.wheel(0, Math.max(22, state.viewH * 0.8));
    await waitScrollChange(list, before);
    state = await list.evaluate(extractRows, kind);
    if (state.scrollTop === before) break;
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

async function waitScrollChange(list, before) {
  await list.evaluate((el, b) => new Promise((resolve) => {
    const t0 = performance.now();
    const tick = () => {
      const m = /translate3d\([^,]+,\s*(-?[\d.]+)px/.exec(el.querySelector('.monaco-list-rows')?.style.transform ?? '');
      const top = m ? -parseFloat(m[1]) : 0;
      if (top !== b || performance.now() - t0 > 2000) resolve();
      else requestAnimationFrame(tick);
    };
    tick();
  }), before);
}

/**
 * Rows of a tree view, in display order: [{ label, description, level, expanded, index,
 * ariaLabel (= tooltip or label), selected }]. Only expanded nodes' children are listed.
 * { minRows } waits until at least that many rows are there (trees load asynchronously).
 */
export async function treeRows(page, viewTitle, { minRows = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const pane = await expandViewPane(page, viewTitle, { timeout });
  const list = pane.locator('.monaco-list').first();
  if (minRows > 0) await list.locator('.monaco-list-row').nth(minRows - 1).waitFor({ timeout });
  else await list.waitFor({ state: 'attached', timeout }).catch(() => {});
  if ((await list.count()) === 0) return [];
  return readList(page, list, 'tree');
}

/** Locator of a rendered tree row by its label (exact string or RegExp). */
export function treeRow(page, viewTitle, label) {
  return viewPane(page, viewTitle).locator('.monaco-list-row')
    .filter({ has: page.locator('.monaco-icon-label .label-name', { hasText: exact(label) }) }).first();
}

/**
 * Expand a tree row (no-op when expanded). `labels` may be a path ['Parent', 'Child'] whose
 * items are expanded in turn. Waits for the twistie to stop loading. Returns the row locator.
 */
export async function expandTreeRow(page, viewTitle, labels, { timeout = DEFAULT_TIMEOUT } = {}) {
  let row;
  for (const label of [].concat(labels)) {
    row = treeRow(page, viewTitle, label);
    await row.waitFor({ timeout });
    if ((await row.getAttribute('aria-expanded')) === 'false') {
      await row.locator('.monaco-tl-twistie').click();
      await expectAttr(row, 'aria-expanded', 'true', timeout);
    }
    await row.locator('.monaco-tl-twistie.codicon-tree-item-loading').waitFor({ state: 'detached', timeout });
  }
  return row;
}

/** Collapse a tree row (no-op when collapsed or a leaf). */
export async function collapseTreeRow(page, viewTitle, label, { timeout = DEFAULT_TIMEOUT } = {}) {
  const row = treeRow(page, viewTitle, label);
  await row.waitFor({ timeout });
  if ((await row.getAttribute('aria-expanded')) === 'true') {
    await row.locator('.monaco-tl-twistie').click();
    await expectAttr(row, 'aria-expanded', 'false', timeout);
  }
  return row;
}

async function expectAttr(locator, name, value, timeout) {
  await locator.evaluate((el, [n, v, ms]) => new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      if (el.getAttribute(n) === v) resolve();
      else if (Date.now() - t0 > ms) reject(new Error(`${n} never became ${v}`));
      else requestAnimationFrame(tick);
    };
    tick();
  }), [name, value, timeout]);
}

/**
 * Right-click `target` (a locator) and pick a context-menu entry by its label. `entry` may be a
 * path ['Submenu', 'Item'] for submenus.
 */
export async function contextMenu(page, target, entry, { timeout = DEFAULT_TIMEOUT } = {}) {
  await target.click({ button: 'right', timeout });
  const path = [].concat(entry);
  let menu = page.locator('.context-view.monaco-menu-container .monaco-menu').first();
  for (let i = 0; i < path.length; i++) {
    const item = menu.locator('a.action-menu-item')
      .filter({ has: page.locator('.action-label', { hasText: exact(path[i]) }) }).first();
    await item.waitFor({ state: 'visible', timeout });
    if (i < path.length - 1) {
      await item.hover();
      menu = page.locator('.context-view.monaco-menu-container .monaco-submenu .monaco-menu').last();
    } else {
      await item.click();
    }
  }
  await page.locator('.context-view.monaco-menu-container').waitFor({ state: 'hidden', timeout }).catch(() => {});
}

/** Labels of the context menu of `target` (then closes it with Escape). */
export async function contextMenuEntries(page, target, { timeout = DEFAULT_TIMEOUT } = {}) {
  await target.click({ button: 'right', timeout });
  const items = page.locator('.context-view.monaco-menu-container .monaco-menu a.action-menu-item .action-label');
  await items.first().waitFor({ timeout });
  const labels = (await items.allTextContents()).map((s) => s.trim()).filter(Boolean);
  await page.keyboard.press('Escape');
  return labels;
}

/** Right-click a tree row by label (or path, see expandTreeRow) and pick a context-menu entry. */
export async function treeContextMenu(page, viewTitle, labels, entry, opts = {}) {
  const path = [].concat(labels);
  if (path.length > 1) await expandTreeRow(page, viewTitle, path.slice(0, -1), opts);
  const row = treeRow(page, viewTitle, path.at(-1));
  await contextMenu(page, row, entry, opts);
}

// ---------------------------------------------------------------------------------------------
// Problems panel

/** Show the Problems panel (focuses it). Returns its locator. */
export async function openProblems(page, { timeout = DEFAULT_TIMEOUT } = {}) {
  const panel = page.locator('.part.panel .markers-panel');
  if (!(await panel.isVisible())) await runCommand(page, 'Problems: Focus on Problems View', { timeout });
  await panel.waitFor({ state: 'visible', timeout });
  return panel;
}

/**
 * Entries of the Problems panel: [{ severity ('error'|'warning'|'info'|'hint'), message, file
 * (workspace-relative as shown, e.g. 'src/a.ts'), path (absolute), line, col, source, code }].
 * { minCount } waits until at least that many entries are listed.
 */
export async function problems(page, { minCount = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const panel = await openProblems(page, { timeout });
  const list = panel.locator('.monaco-list').first();
  if (minCount > 0) {
    // each file row is followed by its markers: minCount markers => at least minCount + 1 rows
    await panel.locator('.monaco-list-row .marker-icon').nth(0).waitFor({ timeout });
  }
  const t0 = Date.now();
  for (;;) {
    if ((await list.count()) === 0 || !(await list.isVisible())) {
      if (minCount === 0) return [];
    } else {
      const rows = await readList(page, list, 'problems');
      const out = [];
      let file;
      for (const r of rows) {
        if (r.type === 'file') file = r;
        else out.push({ severity: r.severity, message: r.message, file: file?.file ?? '', path: file?.path ?? '', line: r.line, col: r.col, source: r.source, code: r.code });
      }
      if (out.length >= minCount) return out;
    }
    if (Date.now() - t0 > timeout) throw new Error(`Problems: fewer than ${minCount} entries after ${timeout} ms`);
    await page.waitForTimeout(200); // polling the virtualized list; no DOM event to await
  }
}

// ---------------------------------------------------------------------------------------------
// Editors: open a file, code lenses, webviews

/** Open a workspace file by its relative path via Quick Open; waits for its tab to be active. */
export async function openFile(page, relPath, { timeout = DEFAULT_TIMEOUT } = {}) {
  const input = await openQuickInput(page, 'Control+P', timeout);
  await input.fill(relPath);
  const base = path.basename(relPath);
  const dir = path.dirname(relPath);
  let row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exact(base) }) });
  if (dir !== '.') row = row.filter({ has: page.locator('.label-description', { hasText: dir }) });
  await row.first().waitFor({ timeout });
  await row.first().click();
  await page.locator('.part.editor .tab.active').filter({ has: page.locator('.label-name', { hasText: exact(base) }) })
    .first().waitFor({ timeout });
  await page.locator('.part.editor .editor-instance .monaco-editor').first().waitFor({ timeout });
}

/**
 * Code lenses shown in the active text editor: [{ line, titles: ['Run', 'Debug'], text }],
 * `line` being the 1-based line the lens sits above (undefined if line numbers are off).
 * { minCount } waits until at least that many lens lines are rendered.
 */
export async function codeLenses(page, { minCount = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const editor = page.locator('.part.editor .editor-group-container.active .monaco-editor').first();
  await editor.waitFor({ timeout });
  const lenses = editor.locator('.contentWidgets .codelens-decoration');
  if (minCount > 0) await lenses.nth(minCount - 1).waitFor({ state: 'attached', timeout });
  return editor.evaluate((ed) => {
    const nums = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')]
      .map((n) => ({ top: n.getBoundingClientRect().top, line: +n.textContent.trim() }))
      .filter((n) => n.line > 0)
      .sort((a, b) => a.top - b.top);
    return [...ed.querySelectorAll('.contentWidgets .codelens-decoration')]
      .map((el) => {
        const bottom = el.getBoundingClientRect().bottom;
        const below = nums.find((n) => n.top >= bottom - 2);
        return {
          line: below?.line,
          titles: [...el.children].filter((c) => c.textContent.trim() !== '|' && c.textContent.replace(/\u00a0/g, ' ').trim() !== '|')
            .map((c) => c.textContent.trim()).filter(Boolean),
          text: el.textContent.replace(/\u00a0/g, ' ').trim(),
          _top: el.getBoundingClientRect().top,
        };
      })
      .filter((l) => l.text)
      .sort((a, b) => a._top - b._top)
      .map(({ _top, ...l }) => l);
  });
}

/** Click a code lens by its title (exact string or RegExp) in the active editor. */
export async function clickCodeLens(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  await page.locator('.part.editor .editor-group-container.active .contentWidgets .codelens-decoration a')
    .filter({ hasText: exact(title) }).first().click({ timeout });
}

/**
 * Frame locator for the content of a webview by the title of its editor tab (webview panel) or
 * of its view pane (webview view). Activates the tab / expands the pane first; only visible
 * webviews have an iframe. VS Code nests: iframe.webview.ready -> iframe#active-frame.
 */
export async function webviewFrame(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  const tab = page.locator('.part.editor .tab').filter({ has: page.locator('.tab-label .label-name', { hasText: exact(title) }) }).first();
  let container;
  const t0 = Date.now();
  // wait for either a tab or a view pane with that title
  for (;;) {
    if (await tab.count()) {
      if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
      await page.locator('.part.editor .tab[aria-selected="true"]').filter({ has: page.locator('.tab-label .label-name', { hasText: exact(title) }) })
        .first().waitFor({ timeout });
      container = page.locator('.part.editor .editor-group-container').filter({ has: tab }).locator('.editor-container').first();
      break;
    }
    if (typeof title === 'string' && (await viewPane(page, title).count())) {
      container = (await expandViewPane(page, title, { timeout })).locator(':scope > .pane-body');
      break;
    }
    if (Date.now() - t0 > timeout) throw new Error(`webviewFrame: no editor tab or view named ${title}`);
    await page.waitForTimeout(100);
  }
  const box = async () => (await container.boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 };
  for (;;) {
    const target = await box();
    const name = await page.evaluate((t) => {
      let best = null;
      let bestArea = 0;
      for (const f of document.querySelectorAll('iframe.webview.ready')) {
        const r = f.getBoundingClientRect();
        const w = Math.min(r.right, t.x + t.width) - Math.max(r.left, t.x);
        const h = Math.min(r.bottom, t.y + t.height) - Math.max(r.top, t.y);
        const area = w > 0 && h > 0 ? w * h : 0;
        if (area > bestArea && getComputedStyle(f.parentElement).visibility !== 'hidden') { bestArea = area; best = f.name; }
      }
      return bestArea > 0.5 * t.width * t.height ? best : null;
    }, target);
    if (name) {
      const inner = page.locator(`iframe.webview.ready[name="${name}"]`).contentFrame().locator('iframe#active-frame');
      await inner.waitFor({ timeout: Math.max(1000, timeout - (Date.now() - t0)) });
      return inner.contentFrame();
    }
    if (Date.now() - t0 > timeout) throw new Error(`webviewFrame: no webview iframe over "${title}"`);
    await page.waitForTimeout(100);
  }
}

// ---------------------------------------------------------------------------------------------
// Workspaces and extra code-server instances

/**
 * Create a scratch workspace folder WORK_DIR/workspaces/<name>: copies fixtures/<fixture>/ if
 * given, then writes `files` ({ 'rel/path': 'content' }). Returns the absolute path, to pass
 * to openWorkbench({ folder }).
 */
export function makeWorkspace(name, { fixture, files = {} } = {}) {
  const dir = path.join(env.WORK_DIR, 'workspaces', slug(name));
  fs.mkdirSync(dir, { recursive: true });
  if (fixture) fs.cpSync(path.join(env.FIXTURES, fixture), dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  s.on('error', reject);
});

/**
 * Start another code-server with its own scratch profile and the .vsix installed, e.g. with
 * workspace trust enabled so `folder` opens in Restricted Mode (untrusted: the fresh profile
 * trusts nothing and the startup prompt is off). Returns { url, folder, pid, stop() }; call
 * stop() in after(). run.sh also kills it on exit (its PID is appended to CS_PIDS_FILE).
 */
export async function startCodeServer({ name = 'extra', trust = true, folder, settings = {}, timeout = 60_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(env.WORK_DIR, `cs-${slug(name)}-`));
  const folderPath = folder ?? makeWorkspace(`${name}-ws`);
  fs.mkdirSync(path.join(dir, 'ud/User'), { recursive: true });
  const s = JSON.parse(fs.readFileSync(env.SETTINGS, 'utf8'));
  Object.assign(s, { 'security.workspace.trust.enabled': trust }, settings);
  fs.writeFileSync(path.join(dir, 'ud/User/settings.json'), JSON.stringify(s, null, 2));
  const procEnv = { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'xdg'), XDG_DATA_HOME: path.join(dir, 'xdg') };
  const profile = ['--config', path.join(dir, 'xdg/config.yaml'), '--user-data-dir', path.join(dir, 'ud'), '--extensions-dir', path.join(dir, 'ext')];
  execFileSync(env.CS_BIN, [...profile, '--install-extension', env.VSIX], { env: procEnv, stdio: 'pipe' });
  const port = await freePort();
  const log = fs.openSync(path.join(dir, 'code-server.log'), 'a');
  const child = spawn(env.CS_BIN, [...profile, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', folderPath],
  { env: procEnv, stdio: ['ignore', log, log], detached: true }); // detached: own process group
  if (env.CS_PIDS_FILE) fs.appendFileSync(env.CS_PIDS_FILE, `${child.pid}\n`);
  let exited = false;
  child.on('exit', () => { exited = true; });
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (exited) throw new Error(`code-server '${name}' exited; see ${dir}/code-server.log`);
    try { if ((await fetch(`${url}/healthz`)).ok) break; } catch { /* not up yet */ }
    if (Date.now() - t0 > timeout) throw new Error(`code-server '${name}' not healthy after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url, folder: folderPath, pid: child.pid, dir,
    async stop() {
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      try { process.kill(-child.pid, 'SIGTERM'); } catch { return; }
      const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** True when the window shows the Restricted Mode indicator (workspace not trusted). */
export async function isRestrictedMode(page, { timeout = 10_000 } = {}) {
  const indicator = page.locator('.part.statusbar .statusbar-item', { hasText: 'Restricted Mode' }).first();
  return indicator.waitFor({ timeout }).then(() => true, () => false);
}
