// Smoke test of the e2e pipeline: the .vsix is installed in code-server and VS Code shows the
// extension's "Causeway" view container with its "Runs" view; the .vsix is what the READMEs say.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as vs from "../lib.mjs";

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

vs.scenario("the Causeway container shows the Runs view", async () => {
  await vs.openViewContainer(page, "Causeway");
  const runs = vs.viewPane(page, "Runs");
  await runs.waitFor({ state: "visible" });
  // single view in the container: VS Code merges its header into the title "Causeway: Runs"
  await page.locator(".part.sidebar .composite.title h2", { hasText: /^Causeway/ }).waitFor();
  const shot = await vs.screenshot(page, "00-smoke-runs-view");
  assert.ok(fs.statSync(shot).size > 10_000, "screenshot written");
  for (const e of browser.errors) console.log("[pageerror]", e.message);
});

/** The number of files in a zip archive (its end-of-central-directory record). */
function zipEntries(file) {
  const buf = fs.readFileSync(file);
  for (let i = buf.length - 22; i >= 0; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) return buf.readUInt16LE(i + 10);
  }
  throw new Error(`${file}: not a zip archive`);
}

vs.scenario("the .vsix installed is what the READMEs say: its file count, and its size to within 10%", async () => {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../..");
  const files = zipEntries(vs.env.VSIX);
  const mb = fs.statSync(vs.env.VSIX).size / 1024 / 1024;
  for (const [readme, re] of [
    ["bench/README.md", /^\| Extension package \| `\.vsix` about ([\d.]+) MB \((\d+) files\b/m],
    ["extension/README.md", /^- `\.vsix`: about ([\d.]+) MB \((\d+) files\b/m],
  ]) {
    const row = re.exec(fs.readFileSync(path.join(root, readme), "utf8"));
    assert.ok(row, `${readme} gives the .vsix's size and files`);
    assert.equal(files, Number(row[2]), `${readme}: files`);
    assert.ok(Math.abs(mb - Number(row[1])) / Number(row[1]) < 0.1, `${readme}: ${row[1]} MB, the .vsix is ${mb.toFixed(2)} MB`);
  }
});
