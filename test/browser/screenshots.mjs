// Screenshots of every screen in light, dark and high-contrast themes, from the static report of
// the demo's runs (demo-seed0): docs/images/<screen>-<theme>.png.
//   node test/browser/screenshots.mjs [--report FILE] [--out DIR] [--only SCREEN]
import fs from "node:fs";
import path from "node:path";
import { ROOT, demoReport, fileUrl, launch, screenReady, tempDir, watchedPage } from "./lib.mjs";

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

const SCREENS = ["runs", "overview", "why", "timeline", "graph", "agents", "influence"];
const THEMES = ["light", "dark", "hc"];
const THEME_NAME = { light: "light", dark: "dark", hc: "high-contrast" };

const report = arg("--report") ?? demoReport(tempDir("causeway-shots-"));
const out = arg("--out") ?? path.join(ROOT, "docs/images");
const only = arg("--only");
fs.mkdirSync(out, { recursive: true });

const browser = await launch();
try {
  for (const theme of THEMES) {
    for (const screen of SCREENS.filter((s) => !only || s === only)) {
      const { context, page, seen } = await watchedPage(browser, { width: 1360, height: 860 });
      await page.goto(fileUrl(report, `screen=${screen}&run=demo-seed0&theme=${theme}`));
      await screenReady(page, screen);
      // Timeline: show one full record, as people use it.
      if (screen === "timeline") {
        await page.locator("tr.row-link", { hasText: "send_email" }).last().click();
        await page.waitForSelector(".drawer");
      }
      await page.evaluate(() => document.fonts.ready);
      // The screen scrolls inside the app; grow the window to show all of it (graph: fixed size).
      if (screen !== "graph") {
        const height = await page.evaluate(() => {
          const s = document.querySelector(".screen");
          return s.offsetTop + s.scrollHeight;
        });
        if (height > 860) await page.setViewportSize({ width: 1360, height: Math.min(height, 4000) });
      }
      const file = path.join(out, `${screen}-${THEME_NAME[theme]}.png`);
      await page.screenshot({ path: file });
      if (seen.errors.length || seen.requests.length) throw new Error(`${screen}/${theme}: ${[...seen.errors, ...seen.requests].join("; ")}`);
      console.log(path.relative(ROOT, file));
      await context.close();
    }
  }
} finally {
  await browser.close();
}
