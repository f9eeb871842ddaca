// A big run's traced lineage in a real browser (the static report): tracing one of worker-3's calls
// in a 1,461-node run draws 240 nodes one by one, in rows that fill the panel instead of one band
// a few pixels high. Screenshots go to $SHOTS_DIR (default: a temp folder).
//   node --test test/browser/traced.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ROOT, build, cli, fileUrl, launch, screenReady, tempDir, watchedPage } from "./lib.mjs";
import { recordWorkers } from "./workers.mjs";

const SHOTS = process.env.SHOTS_DIR ?? tempDir("causeway-traced-");
let browser;
let report;
let picked;

before(async () => {
  build();
  const sdk = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
  const dir = tempDir("causeway-traced-run-");
  await recordWorkers(sdk, dir);
  const events = fs
    .readFileSync(path.join(dir, "workers", "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const calls = events.filter((e) => e.type === "action" && e.agent === "worker-3");
  picked = `ev:${calls[Math.floor(calls.length / 2)].id}`;
  report = path.join(dir, "report.html");
  cli("report", dir, "-o", report);
  browser = await launch();
});
after(async () => browser?.close());

describe("a traced lineage in a big run", () => {
  test("is drawn in rows that fill the panel, its nodes several pixels wide", async () => {
    const { page, seen, context } = await watchedPage(browser, { width: 1400, height: 900 });
    await page.goto(fileUrl(report, `screen=graph&run=workers&node=${encodeURIComponent(picked)}`));
    await screenReady(page, "graph");
    await page.waitForFunction(() => document.querySelectorAll(".graph-svg .gnode.traced").length >= 200, null, { timeout: 15000 });
    const m = await page.evaluate(() => {
      const canvas = document.querySelector(".graph-canvas").getBoundingClientRect();
      const shapes = [...document.querySelectorAll(".graph-svg .gnode.traced .shape")].map((s) => s.getBoundingClientRect());
      const x1 = Math.min(...shapes.map((r) => r.left));
      const x2 = Math.max(...shapes.map((r) => r.right));
      const y1 = Math.min(...shapes.map((r) => r.top));
      const y2 = Math.max(...shapes.map((r) => r.bottom));
      return {
        canvas: { w: canvas.width, h: canvas.height },
        box: { w: x2 - x1, h: y2 - y1 },
        smallest: Math.min(...shapes.map((r) => Math.min(r.width, r.height))),
        traced: shapes.length,
      };
    });
    await page.screenshot({ path: path.join(SHOTS, "graph-traced-big.png") });
    assert.ok(m.traced >= 200, JSON.stringify(m));
    // the traced nodes fill the panel in both directions: not a band
    assert.ok(m.box.w > m.canvas.w * 0.6 && m.box.h > m.canvas.h * 0.4, `the traced nodes fill the panel: ${JSON.stringify(m)}`);
    assert.ok(m.box.w <= m.canvas.w + 1 && m.box.h <= m.canvas.h + 1, `and fit in it: ${JSON.stringify(m)}`);
    assert.ok(m.smallest >= 4, `each node is several pixels: ${JSON.stringify(m)}`);
    assert.deepEqual(seen.errors, []);
    assert.deepEqual(seen.requests, []);
    await context.close();
  });
});
