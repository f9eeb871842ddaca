// Helpers for the browser tests, the screenshots and the graph benchmark: build demo runs and
// their static report with the real CLI, and drive Debian's Chromium with playwright-core.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
export const CLI = path.join(ROOT, "dist/cli.js");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Builds every bundle once per process (the report inlines dist/webview/). */
let built = false;
export function build() {
  if (built) return;
  execFileSync(process.execPath, [path.join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "pipe" });
  built = true;
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function cli(...args) {
  return execFileSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Records the demo's 8 runs (with its tests) under dir and writes dir/report.html. */
export function demoReport(dir) {
  build();
  cli("demo", "--out", dir, "--method", "newcombe"); // the report is checked against the reference's figures
  const file = path.join(dir, "report.html");
  cli("report", dir, "-o", file);
  return file;
}

export function fileUrl(file, hash = "") {
  return pathToFileURL(file).href + (hash ? `#${hash}` : "");
}

export async function launch() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
}

/**
 * A page that records what must not happen: console errors, uncaught exceptions, dialogs, and any
 * request other than file: and data:.
 */
export async function watchedPage(browser, viewport = { width: 1400, height: 900 }) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const seen = { errors: [], requests: [], dialogs: [] };
  page.on("console", (m) => {
    if (m.type() === "error") seen.errors.push(m.text());
  });
  page.on("pageerror", (e) => seen.errors.push(String(e)));
  page.on("dialog", async (d) => {
    seen.dialogs.push(d.message());
    await d.dismiss();
  });
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith("file:") && !u.startsWith("data:")) seen.requests.push(u);
  });
  return { context, page, seen };
}

/** Waits until the screen has rendered (the graph: until it is laid out and drawn). */
export async function screenReady(page, screen) {
  if (screen === "graph") await page.waitForFunction(() => typeof window.__causewayGraphReady === "number", null, { timeout: 15000 });
  else await page.waitForSelector(".screen > *:not(.empty)", { timeout: 15000 });
}
