// Layout in a real browser, on a run whose values are long strings: in Why?, the "Where each
// argument came from" table fits its panel (no column a character wide, Sources inside the
// panel), at a wide and a narrow width. Screenshots go to $SHOTS_DIR (default: a temp folder).
//   node --test test/browser/layout.test.mjs
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ROOT, build, cli, fileUrl, launch, screenReady, tempDir, watchedPage } from "./lib.mjs";

const SHOTS = process.env.SHOTS_DIR ?? tempDir("causeway-layout-");
const LONG =
  "Dear customer, ".repeat(3) +
  "your refund for order 1042 has been issued; ".repeat(6) +
  "regards, the support team of example.com and its partners worldwide.";
const SOURCE = "web:https://partners.example.com/very/long/path/to/a/vendor-requirements-page-that-goes-on-and-on.html";
let browser;
let report;

before(async () => {
  build();
  const sdk = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
  const dir = tempDir("causeway-layout-run-");
  const system = new sdk.System({
    name: "layout",
    task: "Answer the customer.",
    sensitiveTools: ["send_email"],
    models: { m: () => ({ to: "c.rao@example.com", body: LONG }) },
    tools: { send_email: (a) => ({ queued: a.to }) },
    program: async (rt) => {
      const a = rt.agent("support-agent-with-a-long-name");
      const mail = a.observe(`From: c.rao@example.com. ${LONG}`, { source: "inbox:ticket-881-from-a-customer-with-a-long-subject-line", trust: "untrusted" });
      const page = a.observe(`Vendor requirement: write to c.rao@example.com. ${LONG}`, { source: SOURCE, trust: "untrusted" });
      const d = await a.decide([rt.taskRef, mail, page], { model: "m", purpose: "reply" });
      await a.act("send_email", { to: "c.rao@example.com", body: LONG }, { decision: d });
    },
  });
  await system.run({ seed: 0, outDir: dir, runId: "layout" });
  report = path.join(dir, "report.html");
  cli("report", dir, "-o", report);
  browser = await launch();
});
after(async () => browser?.close());

describe("Why? with long values", () => {
  for (const width of [1360, 900]) {
    test(`the argument table fits the panel at ${width} px`, async () => {
      const { page, seen, context } = await watchedPage(browser, { width, height: 900 });
      await page.goto(fileUrl(report, "screen=why&run=layout"));
      await screenReady(page, "why");
      const table = page.locator(".section", { hasText: "Where each argument came from" }).locator("table");
      await table.waitFor();
      const m = await table.evaluate((t) => {
        const panel = t.closest(".section").getBoundingClientRect();
        const box = t.getBoundingClientRect();
        const cells = [...t.querySelectorAll("tbody tr:first-child td")].map((c) => c.getBoundingClientRect());
        const value = [...t.querySelectorAll("tbody td code.value")].map((c) => c.closest("td").getBoundingClientRect().width);
        const chips = [...t.querySelectorAll(".srcchip")].map((c) => c.getBoundingClientRect().right);
        return {
          panelRight: panel.right,
          tableRight: box.right,
          rightmost: Math.max(...cells.map((c) => c.right)),
          value,
          chips,
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        };
      });
      await page.screenshot({ path: path.join(SHOTS, `why-long-values-${width}.png`), fullPage: true });
      assert.ok(m.tableRight <= m.panelRight + 1, `the table ends inside its panel: ${JSON.stringify(m)}`);
      assert.ok(m.rightmost <= m.panelRight + 1, `every cell ends inside the panel: ${JSON.stringify(m)}`);
      assert.ok(m.chips.length > 0 && m.chips.every((r) => r <= m.panelRight + 1), `the Sources chips end inside the panel: ${JSON.stringify(m)}`);
      assert.ok(Math.min(...m.value) >= 160, `a long value gets a readable column (at least 160 px): ${JSON.stringify(m.value)}`);
      assert.ok(m.overflow <= 0, `no horizontal scroll of the page: ${m.overflow}`);
      assert.deepEqual(seen.errors, []);
      await context.close();
    });
  }
});
