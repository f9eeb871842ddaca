// Playwright helpers for the end-to-end scenarios: drive a real VS Code (code-server 4.100.3 =
// VS Code 1.100.3) in Debian's Chromium. Scenarios run under run.sh, which sets the env below.
// DOM selectors are those of VS Code 1.100; if code-server is upgraded, check them first.
//
// Conventions: every helper waits for a condition (never a fixed sleep) and takes an optional
// { timeout } (ms). Labels/titles are matched exactly when given as strings, or by a RegExp.
// Every timeout is scaled by E2E_TIMEOUT_SCALE (T(ms) below): it bounds how long a state may take
// to come on this machine, so a loaded one (CI sets the scale) is slower, not failing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const HERE = path.dirname(new URL(import.meta.url).pathname);

/** What run.sh passes to the scenarios. */
export const env = {
  CS_URL: process.env.CS_URL ?? "http://127.0.0.1:8080", // the code-server run.sh started
  WS_DIR: process.env.WS_DIR, // the folder it was started on (prepared by run.sh prepare_workspace)
  WORK_DIR: process.env.WORK_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), "e2e-")), // scratch, per run
  SHOTS_DIR: process.env.SHOTS_DIR ?? path.join(HERE, "shots"),
  CHROMIUM: process.env.CHROMIUM ?? "/usr/bin/chromium",
  VSIX: process.env.VSIX ?? path.join(HERE, "../../build/causeway.vsix"),
  CS_BIN: process.env.CS_BIN ?? path.join(HERE, "code-server/node_modules/.bin/code-server"),
  CS_PIDS_FILE: process.env.CS_PIDS_FILE, // run.sh kills every process group listed here on exit
  SETTINGS: process.env.E2E_SETTINGS ?? path.join(HERE, "settings.json"),
  FIXTURES: process.env.E2E_FIXTURES ?? path.join(HERE, "fixtures"),
  WORKSPACE_TRUST: process.env.WORKSPACE_TRUST === "true",
};

/**
 * How much longer than on an idle machine a state may take to come: E2E_TIMEOUT_SCALE (default 1;
 * .ci/run sets it, for a machine whose cores other work keeps busy). Every timeout of the suite
 * goes through T(), so one number sets them all.
 */
export const TIMEOUT_SCALE = (() => {
  const v = Number(process.env.E2E_TIMEOUT_SCALE ?? 1);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`E2E_TIMEOUT_SCALE must be a positive number, not ${process.env.E2E_TIMEOUT_SCALE}`);
  return v;
})();
/** A timeout of `ms` on an idle machine, scaled by E2E_TIMEOUT_SCALE. */
export const T = (ms) => Math.round(ms * TIMEOUT_SCALE);

const DEFAULT_TIMEOUT = T(30_000);
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** String -> exact (whitespace-trimmed) RegExp; RegExp -> as is. */
const exact = (t) => (t instanceof RegExp ? t : new RegExp(`^\\s*${esc(t)}\\s*$`));
const slug = (s) =>
  s
    .replace(/[^\w.-]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);

// ---------------------------------------------------------------------------------------------
// Browser and workbench

let current; // the last launched browser, used by scenario() for failure screenshots

/**
 * Launch Debian's Chromium (no Playwright browser download). Returns { context, page, errors,
 * close }. `errors` collects uncaught page errors (useful in asserts/debugging).
 */
export async function launchBrowser({ viewport = { width: 1400, height: 900 }, headless = true } = {}) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-chromium-"));
  // Playwright refuses a --user-data-dir arg; a persistent context on a fresh dir is the same.
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: env.CHROMIUM,
    headless,
    viewport,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context.setDefaultTimeout(DEFAULT_TIMEOUT);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  const b = {
    context,
    page,
    errors,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profileDir, { recursive: true, force: true });
    },
  };
  current = b;
  return b;
}

/** How each scenario of this file ended: 'passed', or the first line of why it did not. */
const outcomes = new Map();

/**
 * node:test `test()` that saves a screenshot FAILED-<name>.png of the last launched browser's
 * page when the body throws.
 *
 * { needs: 'earlier scenario' | [...] }: this scenario goes on from what those left (their frame,
 * a file, a setting). If one of them did not pass, this one fails at once with "skipped: setup
 * failed: …" and why, instead of failing on the state that is missing (a TypeError on an undefined
 * frame, a timeout).
 */
export function scenario(name, fn, options = {}) {
  const { needs = [], ...testOptions } = options;
  return test(name, testOptions, async (t) => {
    for (const n of [].concat(needs)) {
      const o = outcomes.get(n);
      if (o === "passed") continue;
      outcomes.set(name, `skipped: ${n} did not pass`);
      throw new Error(`skipped: setup failed: "${n}", which this scenario goes on from, ${o === undefined ? "did not run" : `did not pass: ${o}`}`);
    }
    try {
      await fn(t);
      outcomes.set(name, "passed");
    } catch (e) {
      outcomes.set(
        name,
        String(e?.message ?? e)
          .split("\n")[0]
          .slice(0, 300),
      );
      if (current) await screenshot(current.page, `FAILED-${slug(name)}`).catch(() => {});
      throw e;
    }
  });
}

/** Open the workbench on `folder` (default: the run's workspace) and wait until it is usable. */
export async function openWorkbench(page, { folder = env.WS_DIR, url = env.CS_URL, timeout = T(60_000) } = {}) {
  assert.ok(folder, "openWorkbench: no folder (WS_DIR unset?)");
  // the page load is bounded by the same timeout as the workbench (a loaded machine serves it slowly)
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`, { timeout });
  await waitForWorkbench(page, { timeout });
}

/** Wait for the workbench parts to be rendered and the folder to be opened. */
export async function waitForWorkbench(page, { timeout = T(60_000) } = {}) {
  const wb = page.locator(".monaco-workbench");
  await wb.waitFor({ timeout });
  for (const part of [".part.activitybar", ".part.statusbar", ".part.editor"]) {
    await wb.locator(part).first().waitFor({ state: "visible", timeout });
  }
  // the activity bar lists its view containers once the workbench has restored its layout
  await wb.locator(".part.activitybar li.action-item a.action-label").first().waitFor({ timeout });
}

/**
 * Wait until the status bar no longer shows "Activating Extensions..." (it shows while the
 * extension host starts extensions). Returns at once if it has not appeared yet, so call it
 * after something that triggers activation, or wait for a visible effect of the extension.
 */
export async function waitForExtensionsActivated(page, { timeout = T(60_000) } = {}) {
  await page.locator(".part.statusbar .statusbar-item", { hasText: "Activating Extensions" }).first().waitFor({ state: "hidden", timeout });
}

/** Move the mouse to a neutral spot (blank title bar) so hovers/tooltips do not linger. */
export async function moveMouseAway(page) {
  const vp = page.viewportSize() ?? { width: 1400, height: 900 };
  await page.mouse.move(Math.round(vp.width * 0.2), 5);
}

/**
 * Close an open workbench hover (a tooltip). A tree row's tooltip that opened just before the
 * tree redrew its row no longer sees the pointer leave, and stays over the rows below it, taking
 * the clicks meant for them. The pointer enters it and leaves it, which closes it; if it stays,
 * Escape. Waits (bounded) until it has gone.
 */
export async function dismissHover(page) {
  const hover = page.locator(".context-view .workbench-hover").first();
  if (!(await hover.isVisible())) return;
  const box = await hover.boundingBox().catch(() => null);
  if (box) await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await moveMouseAway(page);
  const gone = () =>
    hover.waitFor({ state: "hidden", timeout: 2000 }).then(
      () => true,
      () => false,
    );
  if (await gone()) return;
  await page.keyboard.press("Escape");
  await gone();
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

/**
 * Open the quick input (F1 = command palette, Control+P = quick open) and type `text`. When
 * focus is inside a webview the key may be lost or the input may lose focus and close: then
 * retry through the title bar's command center, which works whatever has focus.
 */
async function openQuickInput(page, key, text, timeout) {
  const input = page.locator(".quick-input-widget .quick-input-box input");
  const focused = page.locator(".quick-input-widget .quick-input-box input:focus");
  const t0 = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      if (attempt % 2 === 0) await page.keyboard.press(key);
      else
        await page
          .locator(".part.titlebar .command-center .command-center-center")
          .first()
          .click({ timeout: T(3000) });
      await focused.waitFor({ state: "visible", timeout: T(3000) });
      await input.fill(text, { timeout: T(3000) });
      return input;
    } catch (e) {
      // retried until the caller's timeout (a loaded machine may miss several tries), at least 6 times
      if (Date.now() - t0 > timeout && attempt >= 5) throw e;
      if (await input.isVisible()) await page.keyboard.press("Escape");
    }
  }
}

/** Rows of the open quick input list whose label is exactly `label` (string) or matches (RegExp). */
function quickRows(page, label) {
  return page
    .locator(".quick-input-widget .quick-input-list .monaco-list-row")
    .filter({ has: page.locator(".quick-input-list-label .label-name", { hasText: exact(label) }) });
}

/**
 * Run a command from the command palette by its full title as shown there, e.g.
 * 'Causeway: Open Run' (category prefix included). Exact match, so similar titles are safe.
 */
export async function runCommand(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  const t0 = Date.now();
  // The palette lists the commands known when it opens: right after the workbench loads, the
  // extensions' contributions may not be registered yet, so reopen it until the entry shows.
  for (;;) {
    await openQuickInput(page, "F1", ">" + (title instanceof RegExp ? "" : title), timeout);
    const row = quickRows(page, title).first();
    const left = timeout - (Date.now() - t0);
    try {
      await row.waitFor({ timeout: Math.max(1000, Math.min(T(5000), left)) });
      await row.click();
      break;
    } catch (e) {
      if (left <= T(5000)) throw new Error(`runCommand: no command titled ${title} in the palette`, { cause: e });
      await page.keyboard.press("Escape");
    }
  }
  // the palette is gone (or replaced by a quick pick the command opened)
  await page
    .waitForFunction(
      () => {
        const input = document.querySelector(".quick-input-widget .quick-input-box input");
        return !input || !input.checkVisibility() || !input.value.startsWith(">");
      },
      null,
      { timeout: T(5000) },
    )
    .catch(() => {});
}

/**
 * Pick an entry in the currently open (or about to open) quick pick by its label. Types the
 * label into the filter box first unless { filter: false } (e.g. when labels have $(icons)).
 */
export async function pickQuickItem(page, label, { filter = true, timeout = DEFAULT_TIMEOUT } = {}) {
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible", timeout });
  if (filter && typeof label === "string") await input.fill(label);
  const row = quickRows(page, label).first();
  await row.waitFor({ timeout });
  await row.click();
}

/** Labels (and descriptions/details) of the entries the open quick pick currently shows. */
export async function quickPickItems(page, { timeout = DEFAULT_TIMEOUT } = {}) {
  await page.locator(".quick-input-widget .quick-input-list .monaco-list-row").first().waitFor({ timeout });
  return page.locator(".quick-input-widget .quick-input-list .monaco-list-row").evaluateAll((rows) =>
    rows
      .sort((a, b) => +a.dataset.index - +b.dataset.index)
      .map((r) => ({
        label: r.querySelector(".quick-input-list-label .label-name")?.textContent.trim() ?? "",
        description: r.querySelector(".quick-input-list-label .label-description")?.textContent.trim() ?? "",
        detail: r.querySelector(".quick-input-list-label-meta .label-name")?.textContent.trim() ?? "",
      })),
  );
}

/**
 * Wait for a notification toast containing `text` (string: substring, or RegExp); returns its
 * locator (e.g. for notificationButton). Waits for the slide-in animation to end.
 */
export async function waitForNotification(page, text, { timeout = DEFAULT_TIMEOUT } = {}) {
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: text }).last();
  await toast.waitFor({ state: "visible", timeout });
  await page
    .locator(".notifications-toasts .notification-toast.notification-fade-in-done", { hasText: text })
    .last()
    .waitFor({ timeout: 2000 })
    .catch(() => {});
  return toast;
}

/**
 * Like waitForNotification, but fails at once, with its message, when an error notification
 * matching `errorText` (default: Causeway's own errors and "command 'causeway.…' not found")
 * shows first: a command that breaks fails the scenario clearly instead of by a timeout.
 */
export async function waitForNotificationOrError(page, text, { errorText = /Causeway|causeway\./, timeout = DEFAULT_TIMEOUT } = {}) {
  const toasts = page.locator(".notifications-toasts .notification-toast");
  const wanted = toasts.filter({ hasText: text }).last();
  const error = toasts
    .filter({ has: page.locator(".notification-list-item-icon.codicon-error") })
    .filter({ hasText: errorText })
    .last();
  const which = await Promise.race([
    wanted.waitFor({ state: "visible", timeout }).then(() => "wanted"),
    error.waitFor({ state: "visible", timeout }).then(
      () => "error",
      () => new Promise(() => {}),
    ),
  ]);
  if (which === "error") throw new Error(`an error notification showed instead of ${text}: "${await notificationText(error)}"`);
  return waitForNotification(page, text, { timeout: T(5000) });
}

/**
 * The message of a notification toast (its visible text: no button labels, no style sheets that
 * textContent would include).
 */
export async function notificationText(toast) {
  return (await toast.locator(".notification-list-item-message").first().innerText()).replace(/\s+/g, " ").trim();
}

/**
 * Start recording every notification toast the window shows from now on, with whether it showed
 * a running progress bar. A progress notification may come and go within a second: this sees it
 * even then (a MutationObserver in the page). Read with notificationsSeen().
 */
export async function watchNotifications(page) {
  await page.evaluate(() => {
    window.__e2eToasts?.observer.disconnect();
    const seen = new Map();
    const look = () => {
      for (const t of document.querySelectorAll(".notifications-toasts .notification-toast")) {
        const text = t.querySelector(".notification-list-item-message")?.textContent.replace(/\s+/g, " ").trim();
        if (!text) continue;
        const bar = t.querySelector(".monaco-progress-container");
        const progress =
          !!bar &&
          (bar.classList.contains("active") || bar.classList.contains("infinite") || bar.classList.contains("discrete")) &&
          !bar.classList.contains("done");
        const prev = seen.get(text) ?? { text, progress: false, at: Date.now() };
        prev.progress ||= progress;
        seen.set(text, prev);
      }
    };
    const observer = new MutationObserver(look);
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    window.__e2eToasts = { observer, seen };
    look();
  });
}

/** The toasts seen since watchNotifications(): [{ text, progress, at }] in order of appearance. */
export async function notificationsSeen(page) {
  return page.evaluate(() => [...(window.__e2eToasts?.seen.values() ?? [])].sort((a, b) => a.at - b.at));
}

/** Click a button ('Yes', 'Open', ...) of a notification toast returned by waitForNotification. */
export async function notificationButton(toast, label, { timeout = DEFAULT_TIMEOUT } = {}) {
  await toast
    .locator(".monaco-button", { hasText: exact(label) })
    .first()
    .click({ timeout });
}

/** Dismiss all notifications. */
export async function clearNotifications(page) {
  await runCommand(page, "Notifications: Clear All Notifications");
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
  const item = page
    .locator(".part.activitybar li.action-item")
    .filter({ has: page.locator(sel) })
    .first();
  await item.waitFor({ timeout });
  const sidebar = page.locator(".part.sidebar");
  const shown = (await item.getAttribute("aria-expanded")) === "true" && (await sidebar.isVisible());
  if (!shown) await item.locator(sel).click();
  await page
    .locator('.part.activitybar li.action-item[aria-expanded="true"]')
    .filter({ has: page.locator(sel) })
    .first()
    .waitFor({ timeout });
  await sidebar.waitFor({ state: "visible", timeout });
  await moveMouseAway(page); // the activity bar hover would cover the view
  return sidebar;
}

/**
 * Locator of a view pane by its view name (e.g. 'Runs'), in the sidebar, panel or secondary
 * side bar. Works when the pane header is merged into the container title (single view).
 */
export function viewPane(page, viewTitle) {
  return page
    .locator(".pane")
    .filter({
      has: page.locator(`:scope > .pane-header[aria-label="${viewTitle} Section"]`),
    })
    .first();
}

/** Make sure the view pane is visible and expanded; returns its locator. */
export async function expandViewPane(page, viewTitle, { timeout = DEFAULT_TIMEOUT } = {}) {
  const pane = viewPane(page, viewTitle);
  await pane.waitFor({ state: "visible", timeout });
  const header = pane.locator(":scope > .pane-header");
  if ((await header.getAttribute("aria-expanded")) === "false") {
    await header.click();
    await pane.locator(':scope > .pane-header[aria-expanded="true"]').waitFor({ timeout });
  }
  return pane;
}

// Runs in the page. All rows of a monaco list (a tree view or Problems). The list is
// virtualized (only rows in view are in the DOM): when the rows do not fit, scroll it from top
// to bottom with wheel events on its scrollable element, collecting rows by index, then put
// the scroll position back. With { reveal: index }, instead scroll that row into the middle of
// the view and leave it there. One evaluate, no round trips: fast, no race with re-renders.
async function collectRows(list, { kind, reveal }) {
  const txt = (el, sel) => el.querySelector(sel)?.textContent.replace(/\s+/g, " ").trim() ?? "";
  const pos = (el) => /Ln (\d+), Col (\d+)/.exec(txt(el, ".marker-line"));
  const rowsEl = list.querySelector(".monaco-list-rows");
  if (!rowsEl) return [];
  const scroller = rowsEl.parentElement;
  const scrollTop = () => {
    const m = /translate3d\([^,]+,\s*(-?[\d.]+)px/.exec(rowsEl.style.transform ?? "");
    return -((parseFloat(rowsEl.style.top || "0") || 0) + (m ? parseFloat(m[1]) : 0));
  };
  const total = () => parseFloat(rowsEl.style.height || "0") || 0;
  const viewH = scroller.clientHeight;
  const rendered = () => [...rowsEl.children].filter((r) => r.classList.contains("monaco-list-row")); // not sticky copies
  const rowH = rendered()[0]?.offsetHeight || 22;
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  // How VS Code maps a synthetic wheel event's delta to pixels (even its sign) is its own
  // business: measure it on the first move and steer towards the target.
  let ratio = 0; // pixels per delta unit
  const scrollTo = async (target) => {
    target = Math.max(0, Math.min(target, total() - viewH));
    for (let i = 0, guess = -1; i < 40; i++) {
      const gap = target - scrollTop();
      if (Math.abs(gap) < 1) return;
      const delta = ratio ? gap / ratio : gap * guess;
      const before = scrollTop();
      scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: delta, deltaMode: 0, bubbles: true, cancelable: true }));
      await frame();
      const moved = scrollTop() - before;
      if (moved !== 0 && Math.abs(moved) < Math.abs(gap) + 1)
        ratio = moved / delta; // not clamped: a true measure
      else if (moved === 0) {
        ratio = 0;
        guess = -guess * 2;
      }
    }
  };
  const row = (r) => {
    const base = {
      index: +r.dataset.index,
      level: +(r.getAttribute("aria-level") ?? 1),
      expanded: r.hasAttribute("aria-expanded") ? r.getAttribute("aria-expanded") === "true" : undefined,
      ariaLabel: r.getAttribute("aria-label") ?? "",
    };
    if (kind === "problems") {
      const fileLabel = r.querySelector(".resource-label-container .monaco-icon-label");
      if (fileLabel) {
        const dir = txt(r, ".label-description");
        const name = txt(r, ".label-name");
        return { ...base, type: "file", path: fileLabel.getAttribute("aria-label") ?? "", file: dir && dir !== "." ? `${dir}/${name}` : name };
      }
      const p = pos(r);
      const at = { line: p ? +p[1] : undefined, col: p ? +p[2] : undefined };
      if (r.querySelector(".related-info-resource")) {
        return { ...base, type: "related", file: txt(r, ".related-info-resource"), ...at, message: txt(r, ".marker-description") };
      }
      const icon = r.querySelector(".marker-icon");
      return {
        ...base,
        type: "marker",
        ...at,
        severity: icon ? (["error", "warning", "info"].find((s) => icon.classList.contains(s)) ?? "hint") : "",
        message: [...r.querySelectorAll(".marker-message")].map((e) => e.textContent.trim()).join("\n"),
        source: txt(r, ".marker-source"),
        code: txt(r, ".marker-code"),
      };
    }
    return {
      ...base,
      label: txt(r, ".monaco-icon-label .label-name") || txt(r, ".monaco-tl-contents"),
      description: txt(r, ".monaco-icon-label .label-description"),
      selected: r.getAttribute("aria-selected") === "true",
    };
  };
  const byIndex = new Map();
  const take = () => {
    for (const r of rendered()) byIndex.set(+r.dataset.index, row(r));
  };
  if (reveal !== undefined) {
    const inView = () => {
      const r = rendered().find((x) => +x.dataset.index === reveal);
      if (!r) return false;
      const a = r.getBoundingClientRect();
      const v = scroller.getBoundingClientRect();
      return a.top >= v.top - 1 && a.bottom <= v.bottom + 1;
    };
    if (!inView()) await scrollTo(reveal * rowH - (viewH - rowH) / 2);
    take();
  } else if (total() <= viewH + 1) {
    take();
  } else {
    const start = scrollTop();
    await scrollTo(0);
    for (let i = 0; i < 5000; i++) {
      take();
      if (scrollTop() + viewH >= total() - 1) break;
      const before = scrollTop();
      await scrollTo(before + viewH - rowH); // a view minus a row: no row skipped
      if (scrollTop() <= before) break;
    }
    await scrollTo(start);
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/**
 * Rows of a tree view, in display order: [{ label, description, level, expanded, index,
 * ariaLabel (= tooltip or label), selected }]. Only expanded nodes' children are listed.
 * { minRows } waits until at least that many rows are there (trees load asynchronously).
 */
export async function treeRows(page, viewTitle, { minRows = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const pane = await expandViewPane(page, viewTitle, { timeout });
  const list = pane.locator(".monaco-list").first();
  if (minRows > 0)
    await list
      .locator(".monaco-list-row")
      .nth(minRows - 1)
      .waitFor({ timeout });
  else await list.waitFor({ state: "attached", timeout }).catch(() => {});
  if ((await list.count()) === 0) return [];
  return list.evaluate(collectRows, { kind: "tree" });
}

/**
 * Locator of a tree row by its label (exact string or RegExp), among the rows rendered now
 * (see findTreeRow for rows scrolled out of view or labels that repeat).
 */
export function treeRow(page, viewTitle, label) {
  return viewPane(page, viewTitle)
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".monaco-icon-label .label-name", { hasText: exact(label) }) })
    .first();
}

/**
 * Find a tree row by its label path: ['Parent', 'Child'] is the row 'Child' right under the
 * first row 'Parent' (the parents must be expanded: see expandTreeRow); a single label is the
 * first row with it. Scrolls the row into view and returns a locator pinned to it (by index,
 * valid until rows above it are expanded/collapsed). Waits until the row exists.
 */
export async function findTreeRow(page, viewTitle, labels, { timeout = DEFAULT_TIMEOUT } = {}) {
  const path = [].concat(labels).map((l) => exact(l));
  const pane = await expandViewPane(page, viewTitle, { timeout });
  const list = pane.locator(".monaco-list").first();
  const t0 = Date.now();
  for (;;) {
    const rows = (await list.count()) ? await list.evaluate(collectRows, { kind: "tree" }) : [];
    let index;
    let from = 0;
    let level;
    for (const re of path) {
      index = undefined;
      for (let i = from; i < rows.length; i++) {
        if (level !== undefined && rows[i].level <= level) break; // left the parent's subtree
        if ((level === undefined || rows[i].level === level + 1) && re.test(rows[i].label)) {
          index = i;
          break;
        }
      }
      if (index === undefined) break;
      from = index + 1;
      level = rows[index].level;
    }
    if (index !== undefined) {
      const rowIndex = rows[index].index;
      await list.evaluate(collectRows, { kind: "tree", reveal: rowIndex });
      const row = list.locator(`.monaco-list-rows > .monaco-list-row[data-index="${rowIndex}"]`);
      await row.waitFor({ timeout: T(5000) });
      return row;
    }
    if (Date.now() - t0 > timeout) throw new Error(`findTreeRow: no row ${[].concat(labels).join(" > ")} in view ${viewTitle}`);
    await page.waitForTimeout(200); // trees load asynchronously: poll
  }
}

/**
 * Expand a tree row (no-op when expanded). `labels` may be a path ['Parent', 'Child'] whose
 * items are expanded in turn (see findTreeRow). Waits for the children to have loaded.
 * Returns the row locator.
 */
export async function expandTreeRow(page, viewTitle, labels, { timeout = DEFAULT_TIMEOUT } = {}) {
  const path = [].concat(labels);
  let row;
  for (let i = 1; i <= path.length; i++) {
    row = await findTreeRow(page, viewTitle, path.slice(0, i), { timeout });
    if ((await row.getAttribute("aria-expanded")) === "false") {
      await dismissHover(page);
      await row.locator(".monaco-tl-twistie").click();
      await expectAttr(row, "aria-expanded", "true", timeout);
    }
    await row.locator(".monaco-tl-twistie.codicon-tree-item-loading").waitFor({ state: "detached", timeout });
  }
  return row;
}

/**
 * Expand the rows of `labels` until a row under them satisfies `wanted` (given the view's rows),
 * and return those rows. A tree refresh (a run's analysis landing, a tail growing it) replaces its
 * rows collapsed: then the path is expanded again, until `timeout`.
 */
export async function expandUntil(page, viewTitle, labels, wanted, { timeout = DEFAULT_TIMEOUT } = {}) {
  const t0 = Date.now();
  for (;;) {
    await expandTreeRow(page, viewTitle, labels, { timeout });
    const rows = await treeRows(page, viewTitle);
    if (rows.some(wanted)) return rows;
    if (Date.now() - t0 > timeout)
      throw new Error(`expandUntil: no wanted row under ${[].concat(labels).join(" > ")}: ${JSON.stringify(rows.map((r) => [r.label, r.description]))}`);
    await page.waitForTimeout(200); // the tree redraws asynchronously: poll
  }
}

/** Collapse a tree row by label or path (no-op when collapsed or a leaf). */
export async function collapseTreeRow(page, viewTitle, labels, { timeout = DEFAULT_TIMEOUT } = {}) {
  const row = await findTreeRow(page, viewTitle, labels, { timeout });
  if ((await row.getAttribute("aria-expanded")) === "true") {
    await dismissHover(page);
    await row.locator(".monaco-tl-twistie").click();
    await expectAttr(row, "aria-expanded", "false", timeout);
  }
  return row;
}

async function expectClass(locator, cls, timeout) {
  await locator.evaluate(
    (el, [c, ms]) =>
      new Promise((resolve, reject) => {
        const t0 = Date.now();
        const tick = () => {
          if (el.classList.contains(c)) resolve();
          else if (Date.now() - t0 > ms) reject(new Error(`class ${c} never set`));
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    [cls, timeout],
  );
}

async function expectAttr(locator, name, value, timeout) {
  await locator.evaluate(
    (el, [n, v, ms]) =>
      new Promise((resolve, reject) => {
        const t0 = Date.now();
        const tick = () => {
          if (el.getAttribute(n) === v) resolve();
          else if (Date.now() - t0 > ms) reject(new Error(`${n} never became ${v}`));
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    [name, value, timeout],
  );
}

/**
 * Right-click `target` (a locator) and pick a context-menu entry by its label. `entry` may be a
 * path ['Submenu', 'Item'] for submenus.
 *
 * A tree refresh can replace the row between the right-click and the menu (the menu then never
 * opens, or closes again): until the entry is clicked, the whole gesture is retried on the row as
 * it is now, within `timeout`.
 */
export async function contextMenu(page, target, entry, { timeout = DEFAULT_TIMEOUT } = {}) {
  const path = [].concat(entry);
  const deadline = Date.now() + timeout;
  const left = (cap) => Math.max(1000, Math.min(cap, deadline - Date.now()));
  const container = page.locator(".context-view.monaco-menu-container");
  for (let attempt = 1; ; attempt++) {
    try {
      // an open tooltip would take the click (Playwright, waiting for it to move, keeps it open)
      await dismissHover(page);
      await target.click({ button: "right", timeout: left(10_000) });
      let menu = container.locator(".monaco-menu").first();
      for (let i = 0; i < path.length; i++) {
        const item = menu
          .locator(":scope > .monaco-action-bar > .actions-container > li.action-item")
          .filter({ has: page.locator("a.action-menu-item .action-label", { hasText: exact(path[i]) }) })
          .first();
        await item.waitFor({ state: "visible", timeout: left(10_000) });
        // A click right after the menu opened is ignored by VS Code: hover until the item has
        // focus, then click (or, for a submenu, wait for it to open).
        await item.hover({ timeout: left(10_000) });
        await expectClass(item, "focused", left(10_000));
        if (i < path.length - 1) {
          menu = item.locator(".monaco-submenu .monaco-menu").first();
          await menu.waitFor({ state: "visible", timeout: left(10_000) });
        } else {
          await item.locator("a.action-menu-item").click({ timeout: left(10_000) });
        }
      }
      break;
    } catch (err) {
      if (Date.now() >= deadline) throw new Error(`context menu entry ${path.join(" > ")}: ${attempt} attempts: ${err.message}`);
      // close whatever menu is open (a refreshed row's, or a half-opened one) and try again
      if (await container.isVisible()) await page.keyboard.press("Escape");
      await container.waitFor({ state: "hidden", timeout: left(5000) }).catch(() => {});
    }
  }
  await container.waitFor({ state: "hidden", timeout });
}

/** Labels of the context menu of `target` (then closes it with Escape). */
export async function contextMenuEntries(page, target, { timeout = DEFAULT_TIMEOUT } = {}) {
  await target.click({ button: "right", timeout });
  const items = page.locator(".context-view.monaco-menu-container .monaco-menu a.action-menu-item .action-label");
  await items.first().waitFor({ timeout });
  const labels = (await items.allTextContents()).map((s) => s.trim()).filter(Boolean);
  await page.keyboard.press("Escape");
  await page.locator(".context-view.monaco-menu-container").waitFor({ state: "hidden", timeout });
  return labels;
}

/** Right-click a tree row by label or path (see findTreeRow) and pick a context-menu entry. */
export async function treeContextMenu(page, viewTitle, labels, entry, opts = {}) {
  const path = [].concat(labels);
  if (path.length > 1) await expandTreeRow(page, viewTitle, path.slice(0, -1), opts);
  const row = await findTreeRow(page, viewTitle, path, opts);
  await contextMenu(page, row, entry, opts);
}

// ---------------------------------------------------------------------------------------------
// Problems panel

/** Show the Problems panel (focuses it). Returns its locator. */
export async function openProblems(page, { timeout = DEFAULT_TIMEOUT } = {}) {
  const panel = page.locator(".part.panel .markers-panel");
  if (!(await panel.isVisible())) await runCommand(page, "Problems: Focus on Problems View", { timeout });
  await panel.waitFor({ state: "visible", timeout });
  return panel;
}

/**
 * Entries of the Problems panel: [{ severity ('error'|'warning'|'info'|'hint'), message, file
 * (workspace-relative as shown, e.g. 'src/a.ts'), path (absolute), line, col, source, code,
 * related: [{ file (base name as shown), line, col, message }] }], in display order; reads the
 * whole (virtualized) list, scrolling it. Only what the panel's filter box lets through.
 * { minCount } waits until at least that many entries are listed.
 */
export async function problems(page, { minCount = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const panel = await openProblems(page, { timeout });
  const list = panel.locator(".monaco-list").first();
  if (minCount > 0) {
    // each file row is followed by its markers: minCount markers => at least minCount + 1 rows
    await panel.locator(".monaco-list-row .marker-icon").nth(0).waitFor({ timeout });
  }
  const t0 = Date.now();
  for (;;) {
    if ((await list.count()) === 0 || !(await list.isVisible())) {
      if (minCount === 0) return [];
    } else {
      const rows = await list.evaluate(collectRows, { kind: "problems" });
      const out = [];
      let file;
      for (const r of rows) {
        if (r.type === "file") file = r;
        else if (r.type === "related") out.at(-1)?.related.push({ file: r.file, line: r.line, col: r.col, message: r.message });
        else
          out.push({
            severity: r.severity,
            message: r.message,
            file: file?.file ?? "",
            path: file?.path ?? "",
            line: r.line,
            col: r.col,
            source: r.source,
            code: r.code,
            related: [],
          });
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
  await openQuickInput(page, "Control+P", relPath, timeout);
  const base = path.basename(relPath);
  const dir = path.dirname(relPath);
  let row = page.locator(".quick-input-widget .quick-input-list .monaco-list-row").filter({ has: page.locator(".label-name", { hasText: exact(base) }) });
  if (dir !== ".") row = row.filter({ has: page.locator(".label-description", { hasText: dir }) });
  await row.first().waitFor({ timeout });
  await row.first().click();
  await page
    .locator(".part.editor .tab.active")
    .filter({ has: page.locator(".label-name", { hasText: exact(base) }) })
    .first()
    .waitFor({ timeout });
  await page.locator(".part.editor .editor-instance .monaco-editor").first().waitFor({ timeout });
}

/**
 * Code lenses shown in the active text editor: [{ line, titles: ['Run', 'Debug'], text }],
 * `line` being the 1-based line the lens sits above (undefined if line numbers are off).
 * { minCount } waits until at least that many lens lines are rendered.
 */
export async function codeLenses(page, { minCount = 0, timeout = DEFAULT_TIMEOUT } = {}) {
  const editor = page.locator(".part.editor .editor-group-container.active .monaco-editor").first();
  await editor.waitFor({ timeout });
  const lenses = editor.locator(".contentWidgets .codelens-decoration");
  if (minCount > 0) await lenses.nth(minCount - 1).waitFor({ state: "attached", timeout });
  return editor.evaluate((ed) => {
    const nums = [...ed.querySelectorAll(".margin-view-overlays .line-numbers")]
      .map((n) => ({ top: n.getBoundingClientRect().top, line: +n.textContent.trim() }))
      .filter((n) => n.line > 0)
      .sort((a, b) => a.top - b.top);
    return [...ed.querySelectorAll(".contentWidgets .codelens-decoration")]
      .map((el) => {
        const bottom = el.getBoundingClientRect().bottom;
        const below = nums.find((n) => n.top >= bottom - 2);
        return {
          line: below?.line,
          titles: [...el.children]
            .filter((c) => c.textContent.trim() !== "|" && c.textContent.replace(/\u00a0/g, " ").trim() !== "|")
            .map((c) => c.textContent.trim())
            .filter(Boolean),
          text: el.textContent.replace(/\u00a0/g, " ").trim(),
          _top: el.getBoundingClientRect().top,
        };
      })
      .filter((l) => l.text)
      .sort((a, b) => a._top - b._top)
      .map(({ _top, ...l }) => l);
  });
}

/**
 * Poll `fn` until it returns something truthy, and return that; throw `what` after `timeout` ms.
 * For state with no DOM event to await (a log line, a virtualized list's rows).
 */
export async function waitUntil(page, fn, { timeout = DEFAULT_TIMEOUT, interval = 200, what = "the condition" } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached after ${timeout} ms`);
    await page.waitForTimeout(interval);
  }
}

/**
 * The code lens above `line` of the active editor whose titles include one matching `title`.
 * Lenses are rendered only for lines in view, so the panel is hidden first (the Problems panel
 * can push the line out of view) and the line is brought into view again while waiting.
 */
export async function codeLensAt(page, line, title, { timeout = T(60_000) } = {}) {
  if (await page.locator(".part.panel").isVisible()) await runCommand(page, "View: Hide Panel");
  await page.locator(".part.panel").waitFor({ state: "hidden", timeout });
  let last = [];
  let polls = 0;
  const goTo = async () => {
    await openQuickInput(page, "Control+G", `:${line}`, timeout);
    await page.keyboard.press("Enter");
    await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout });
  };
  await goTo();
  return waitUntil(
    page,
    async () => {
      if (++polls % 25 === 0) await goTo(); // something scrolled the editor: reveal the line again
      last = await codeLenses(page);
      return last.find((l) => l.line === line && l.titles.some((t) => (title instanceof RegExp ? title.test(t) : t.startsWith(title))));
    },
    { timeout, what: "the code lens" },
  ).catch((e) => {
    throw new Error(`no code lens ${title} above line ${line}; lenses in view: ${JSON.stringify(last)} (${e.message})`);
  });
}

/** Click a code lens by its title (exact string or RegExp) in the active editor. */
export async function clickCodeLens(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  await page
    .locator(".part.editor .editor-group-container.active .contentWidgets .codelens-decoration a")
    .filter({ hasText: exact(title) })
    .first()
    .click({ timeout });
}

/**
 * Frame locator for the content of a webview by the title of its editor tab (webview panel) or
 * of its view pane (webview view). Activates the tab / expands the pane first; only visible
 * webviews have an iframe. VS Code nests: iframe.webview.ready -> iframe#active-frame.
 */
export async function webviewFrame(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  const re = exact(title);
  const tab = page
    .locator(".part.editor .tab")
    .filter({ has: page.locator(".tab-label .label-name", { hasText: re }) })
    .first();
  const t0 = Date.now();
  for (;;) {
    if (await tab.count()) {
      // (re)activate the tab; a click landing while another editor opens can be ignored
      if ((await tab.getAttribute("aria-selected")) !== "true") {
        await tab.click({ timeout: 5000 }).catch(() => {});
        await expectAttr(tab, "aria-selected", "true", 2000).catch(() => {});
      }
    } else if (await viewPane(page, title).count()) {
      await expandViewPane(page, title, { timeout });
    }
    const name = await page.evaluate(findWebviewIframe, { source: re.source, flags: re.flags });
    if (name) {
      const inner = page.locator(`iframe.webview.ready[name="${name}"]`).contentFrame().locator("iframe#active-frame");
      try {
        await inner.waitFor({ timeout: T(5000) });
        return inner.contentFrame();
      } catch {
        /* replaced meanwhile: look again */
      }
    }
    if (Date.now() - t0 > timeout) throw new Error(`webviewFrame: no visible webview for an editor tab or view named ${title}`);
    await page.waitForTimeout(100); // polling: no DOM event tells when the iframe is ready
  }
}

/**
 * The webview's two frames as Playwright Frames, for evaluate(): `outer` (VS Code's webview host
 * page, iframe.webview) and `inner` (the extension's content, #active-frame). Activates the tab
 * first, like webviewFrame.
 */
export async function webviewFrames(page, title, { timeout = DEFAULT_TIMEOUT } = {}) {
  const re = exact(title);
  const t0 = Date.now();
  for (;;) {
    await webviewFrame(page, title, { timeout });
    const name = await page.evaluate(findWebviewIframe, { source: re.source, flags: re.flags });
    const outerEl = name
      ? await page
          .locator(`iframe.webview.ready[name="${name}"]`)
          .elementHandle({ timeout: 5000 })
          .catch(() => null)
      : null;
    const outer = await outerEl?.contentFrame();
    const innerEl = outer
      ? await outer
          .locator("iframe#active-frame")
          .elementHandle({ timeout: 5000 })
          .catch(() => null)
      : null;
    const inner = await innerEl?.contentFrame();
    if (outer && inner) return { outer, inner };
    if (Date.now() - t0 > timeout) throw new Error(`webviewFrames: no frames for the webview ${title}`);
  }
}

// Runs in the page (one atomic look, no race with editors switching): the `name` of the ready
// webview iframe shown for the selected editor tab, or over the view pane, titled /source/.
function findWebviewIframe({ source, flags }) {
  const re = new RegExp(source, flags);
  const norm = (s) => (s ?? "").replace(/\s+/g, " ").trim();
  // Webview iframes live in overlay divs outside the editor; each overlay names the element it
  // covers in data-parent-flow-to-element-id (webview editors: #webview-editor-element-<uuid>).
  // An inactive webview (not retainContextWhenHidden) has no iframe at all.
  for (const tab of document.querySelectorAll('.part.editor .tab[aria-selected="true"]')) {
    if (!re.test(norm(tab.querySelector(".tab-label .label-name")?.textContent))) continue;
    // the group keeps the elements of its hidden editors: take the one that is displayed
    const hosts = tab.closest(".editor-group-container")?.querySelectorAll('.editor-container [id^="webview-editor-element-"]') ?? [];
    for (const host of hosts) {
      if (!host.checkVisibility()) continue;
      // the editor element is reused by the group's webview editors: several overlays may
      // name it, only the one of the shown editor is visible
      for (const overlay of document.querySelectorAll(`[data-parent-flow-to-element-id="${host.id}"]`)) {
        const frame = overlay.querySelector("iframe.webview.ready");
        if (frame && overlay.style.visibility !== "hidden") return frame.name;
      }
    }
  }
  // Webview views: the iframe whose overlay covers the pane body.
  for (const pane of document.querySelectorAll(".pane")) {
    const label = pane.querySelector(":scope > .pane-header")?.getAttribute("aria-label") ?? "";
    if (!label.endsWith(" Section") || !re.test(label.slice(0, -" Section".length))) continue;
    const t = pane.querySelector(":scope > .pane-body")?.getBoundingClientRect();
    if (!t || !t.width || !t.height) continue;
    let best = null;
    let bestArea = 0;
    for (const f of document.querySelectorAll("iframe.webview.ready")) {
      if (getComputedStyle(f.parentElement).visibility === "hidden") continue;
      const r = f.getBoundingClientRect();
      const w = Math.min(r.right, t.right) - Math.max(r.left, t.left);
      const h = Math.min(r.bottom, t.bottom) - Math.max(r.top, t.top);
      if (w > 0 && h > 0 && w * h > bestArea) {
        bestArea = w * h;
        best = f.name;
      }
    }
    if (bestArea > 0.5 * t.width * t.height) return best;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Workspaces and extra code-server instances

/**
 * Create a scratch workspace folder WORK_DIR/workspaces/<name>: copies fixtures/<fixture>/ if
 * given, then writes `files` ({ 'rel/path': 'content' }). Returns the absolute path, to pass
 * to openWorkbench({ folder }).
 */
export function makeWorkspace(name, { fixture, files = {} } = {}) {
  const dir = path.join(env.WORK_DIR, "workspaces", slug(name));
  fs.mkdirSync(dir, { recursive: true });
  if (fixture) fs.cpSync(path.join(env.FIXTURES, fixture), dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });

/**
 * Start another code-server with its own scratch profile and the .vsix installed, e.g. with
 * workspace trust enabled so `folder` opens in Restricted Mode (untrusted: the fresh profile
 * trusts nothing and the startup prompt is off). Returns { url, folder, pid, stop() }; call
 * stop() in after(). run.sh also kills it on exit (its PID is appended to CS_PIDS_FILE).
 */
export async function startCodeServer({ name = "extra", trust = true, folder, settings = {}, timeout = T(60_000) } = {}) {
  const dir = fs.mkdtempSync(path.join(env.WORK_DIR, `cs-${slug(name)}-`));
  const folderPath = folder ?? makeWorkspace(`${name}-ws`);
  fs.mkdirSync(path.join(dir, "ud/User"), { recursive: true });
  const s = JSON.parse(fs.readFileSync(env.SETTINGS, "utf8"));
  Object.assign(s, { "security.workspace.trust.enabled": trust }, settings);
  fs.writeFileSync(path.join(dir, "ud/User/settings.json"), JSON.stringify(s, null, 2));
  const procEnv = { ...process.env, XDG_CONFIG_HOME: path.join(dir, "xdg"), XDG_DATA_HOME: path.join(dir, "xdg") };
  const profile = ["--config", path.join(dir, "xdg/config.yaml"), "--user-data-dir", path.join(dir, "ud"), "--extensions-dir", path.join(dir, "ext")];
  execFileSync(env.CS_BIN, [...profile, "--install-extension", env.VSIX], { env: procEnv, stdio: "pipe" });
  const port = await freePort();
  const log = fs.openSync(path.join(dir, "code-server.log"), "a");
  const child = spawn(
    env.CS_BIN,
    [
      ...profile,
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--auth",
      "none",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-getting-started-override",
      folderPath,
    ],
    { env: procEnv, stdio: ["ignore", log, log], detached: true },
  ); // detached: own process group
  if (env.CS_PIDS_FILE) fs.appendFileSync(env.CS_PIDS_FILE, `${child.pid}\n`);
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (exited) throw new Error(`code-server '${name}' exited; see ${dir}/code-server.log`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() - t0 > timeout) throw new Error(`code-server '${name}' not healthy after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    folder: folderPath,
    pid: child.pid,
    dir,
    async stop() {
      // SIGTERM the process group; the extension host may outlive code-server: SIGKILL what is
      // left of the group after 3 s
      const alive = () => {
        try {
          process.kill(-child.pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        return;
      }
      const t1 = Date.now();
      while (alive() && Date.now() - t1 < 3000) await new Promise((r) => setTimeout(r, 50));
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* all gone */
      }
    },
  };
}

/** True when the window shows the Restricted Mode indicator (workspace not trusted). */
export async function isRestrictedMode(page, { timeout = T(10_000) } = {}) {
  const indicator = page.locator(".part.statusbar .statusbar-item", { hasText: "Restricted Mode" }).first();
  return indicator.waitFor({ timeout }).then(
    () => true,
    () => false,
  );
}
