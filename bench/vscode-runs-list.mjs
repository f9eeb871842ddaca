// How soon a workspace of 1,000 runs shows its first rows in the Runs view, in a real VS Code
// (code-server, as the end-to-end tests). Runs under test/e2e/run.sh, which packages and installs
// the extension and starts code-server:
//
//   SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh        (LOADS=3 by default)
//
// Each load opens a new window on the workspace (a new extension host: activation, discovery,
// analysis from scratch) and opens the Causeway view at once. It measures, from that moment:
//   rows     the first 10 run rows on screen (waited for, not read: reading 1,000 rows scrolls the
//            whole list, which took seconds of its own), timed in the page from the click to the
//            frame that drew them (the driver's own timing, with its round trips, is kept too);
//   from the logs, when the extension host was launched, Causeway activated and the view's first
//            listing was served, to see whose time the rows waited for;
//   palette  a palette command answered while the runs are analysed;
//   analysed every run analysed (from the Causeway log, "analysed 1000 runs in … ms").
// It also reads activate()'s time and discovery's "found N runs in … ms" from the log. Then a second
// new window activates Causeway (a palette command) and opens the view once it is activated:
//   warm rows  the first 10 rows on screen from opening the view in a window whose extension is up.
// The control (bench/control-tree/package.mjs): a 40-line extension with the same view that lists
// the run folders as plain rows, to see how much of the time is VS Code's own.
// Writes bench/results/<date>-vscode-runs-list[-$SUFFIX].{json,md} with every load and the medians
// (SUFFIX=quiet: a name of its own, so that a run does not overwrite the day's other results).
import { after } from "node:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  env,
  expandViewPane,
  launchBrowser,
  makeWorkspace,
  openViewContainer,
  openWorkbench,
  runCommand,
  scenario,
  viewPane,
  waitUntil,
} from "../test/e2e/lib.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const REF = path.join(ROOT, "test/fixtures/causeway-py-demo");
const N = Number(process.env.RUNS ?? 1000);
const LOADS = Number(process.env.LOADS ?? 3);

/** The Causeway output-channel logs under the scratch folder that mention `text`, newest last. */
function causewayLogs(text) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && e.name !== "workspaces" && e.name !== "node_modules") walk(p);
      else if (e.name === "Causeway.log") found.push(p);
    }
  };
  walk(env.WORK_DIR);
  return found.map((f) => ({ f, t: fs.readFileSync(f, "utf8") })).filter((x) => x.t.includes(text));
}

/** Waits for the first 10 rows of the Runs view to be on screen (without reading them). */
async function firstRows(page) {
  const pane = await expandViewPane(page, "Runs", { timeout: 600_000 });
  await pane.locator(".monaco-list").first().locator(".monaco-list-row").nth(9).waitFor({ timeout: 600_000 });
}

/**
 * Starts a clock in the page: the wall-clock time (ms) of the first press on the activity bar
 * (the view opened, by the event's time stamp) and of the first frame after the Runs view holds 10 rows, read back by
 * `readPageClock`. The times the test driver measures add its own round trips to the browser
 * (each `waitFor` and click a message over the DevTools protocol, slow on a loaded machine):
 * these are what the window did, as a user would see it.
 */
async function startPageClock(page) {
  await page.evaluate(() => {
    const clock = { press: NaN, rows: NaN };
    window.__causewayRowsClock = clock;
    const now = () => performance.timeOrigin + performance.now();
    addEventListener(
      "pointerdown",
      (e) => {
        // the event's own time stamp: when the press was made, not when the busy page got to it
        if (Number.isNaN(clock.press) && e.target instanceof Element && e.target.closest(".part.activitybar"))
          clock.press = performance.timeOrigin + e.timeStamp;
      },
      true,
    );
    const seen = new MutationObserver(() => {
      const pane = document.querySelector('.pane > .pane-header[aria-label="Runs Section"]')?.parentElement;
      if ((pane?.querySelector(".monaco-list")?.querySelectorAll(".monaco-list-row").length ?? 0) < 10) return;
      seen.disconnect();
      // the frame that draws them: after the next animation frame's callbacks, layout and paint
      requestAnimationFrame(() =>
        setTimeout(() => {
          clock.rows = now();
        }, 0),
      );
    });
    seen.observe(document.body, { childList: true, subtree: true });
  });
}

/** The page clock's { press, rows } (wall-clock ms; press NaN when the view was already open). */
async function readPageClock(page) {
  return waitUntil(page, () => page.evaluate(() => (Number.isNaN(window.__causewayRowsClock.rows) ? undefined : { ...window.__causewayRowsClock })), {
    timeout: 60_000,
    interval: 50,
    what: "the page clock",
  });
}

/**
 * When, from `t0` (wall-clock ms), the extension host of a Causeway log `{ f, t }` had Causeway
 * activated and served the view's first listing. The log's times are stamped when a line is
 * written, seconds late while the host is busy: its lines carry the host's uptime, added to the
 * time the server launched that host (the logs' local times); older builds: the stamps.
 */
function hostTimes({ f, t: log }, t0) {
  const host = path.dirname(path.dirname(f));
  const at = (re) => {
    const hits = [...log.matchAll(new RegExp(`^(\\d{4}-\\d\\d-\\d\\d) (\\d\\d:\\d\\d:\\d\\d\\.\\d+) .*${re}`, "gm"))];
    return hits.length ? new Date(`${hits.at(-1)[1]}T${hits.at(-1)[2]}`).getTime() - t0 : NaN;
  };
  const pid = /Extension host with pid (\d+) started/.exec(fs.readFileSync(path.join(host, "remoteexthost.log"), "utf8"))?.[1];
  const launchLine = fs
    .readFileSync(path.join(path.dirname(host), "remoteagent.log"), "utf8")
    .split("\n")
    .find((l) => l.includes(`<${pid}> Launched Extension Host Process`));
  const launched = launchLine ? new Date(launchLine.slice(0, 23).replace(" ", "T")).getTime() - t0 : NaN;
  const up = (re) => Number(new RegExp(`${re}.*extension host up (\\d+) ms`).exec(log)?.[1]);
  const when = (re) => (Number.isFinite(launched + up(re)) ? launched + up(re) : at(re));
  return { launched, activated: when("activated in"), listed: when("Runs view: first listing") };
}

/** PROFILE=1: starts the window's CPU profile (sampled every ms); `stop(name)` writes it. */
async function startProfile(page) {
  if (process.env.PROFILE !== "1") return { stop: async () => {} };
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 1000 });
  await cdp.send("Profiler.start");
  return {
    stop: async (name) => {
      const { profile } = await cdp.send("Profiler.stop");
      fs.writeFileSync(path.join(env.WORK_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
      await cdp.detach();
    },
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

let b;
after(() => b?.close());

scenario(
  `bench: first rows of ${N} runs`,
  async () => {
    const ws = makeWorkspace(`bench-${N}-runs`);
    const names = fs.readdirSync(REF);
    for (let i = 0; i < N; i++) {
      const src = path.join(REF, names[i % names.length]);
      const d = path.join(ws, "runs", `run-${String(i).padStart(4, "0")}`);
      fs.mkdirSync(d, { recursive: true });
      fs.linkSync(path.join(src, "events.jsonl"), path.join(d, "events.jsonl"));
      fs.symlinkSync(path.join(src, "blobs"), path.join(d, "blobs"), "dir");
    }
    // WATCHER_EXCLUDE=1: the workspace excludes the runs' blobs from VS Code's file watcher (to
    // measure what the watcher's crawl of 1,000 run folders costs the window)
    if (process.env.WATCHER_EXCLUDE === "1") {
      fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
      fs.writeFileSync(path.join(ws, ".vscode/settings.json"), JSON.stringify({ "files.watcherExclude": { "**/runs/*/blobs/**": true } }));
    }
    const loads = [];
    for (let i = 0; i < LOADS; i++) {
      // 1. The view opened as soon as the window is up (the extension host is not started yet)
      b = await launchBrowser();
      let page = b.page;
      let seen = new Set(causewayLogs("activated in").map((x) => x.f));
      await openWorkbench(page, { folder: ws });
      // PROFILE=1: the window's CPU profile from opening the view to the rows on screen, written
      // next to the code-server logs (WORK_DIR/window-<load>.cpuprofile, warm-<load>.cpuprofile for
      // the second window), to see where its time goes
      let profile = await startProfile(page);
      await startPageClock(page);
      let t0 = Date.now();
      await openViewContainer(page, "Causeway");
      await firstRows(page);
      const rowsDriver = Date.now() - t0;
      let clock = await readPageClock(page);
      if (Number.isFinite(clock.press)) t0 = clock.press;
      const rows = Math.round(clock.rows - t0);
      await profile.stop(`window-${i + 1}`);
      const t1 = Date.now();
      await runCommand(page, "Causeway: Show output", { timeout: 600_000 });
      await page.locator('.part.panel .output-view, .part.panel [id="workbench.panel.output"]').first().waitFor({ timeout: 600_000 });
      const palette = Date.now() - t1;
      const cold = await waitUntil(page, () => causewayLogs(`analysed ${N} runs`).find((x) => !seen.has(x.f)), {
        timeout: 900_000,
        interval: 500,
        what: "the analysis",
      });
      const reading = viewPane(page, "Runs")
        .locator(".monaco-list-row")
        .filter({ has: page.locator(".label-description", { hasText: /^\s*reading/ }) });
      await waitUntil(page, async () => (await reading.count()) === 0, { timeout: 120_000, what: "the rows analysed" });
      const log = cold.t;
      const { launched, activated, listed } = hostTimes(cold, t0);
      await b.close();

      // 2. The view opened in a window whose extension host is up and has activated Causeway (by a
      // command: workspaceContains did not always fire on a loaded machine): what the extension's
      // own listing and the window's drawing cost
      b = await launchBrowser();
      page = b.page;
      seen = new Set(causewayLogs("activated in").map((x) => x.f));
      await openWorkbench(page, { folder: ws });
      await runCommand(page, "Causeway: Show output", { timeout: 600_000 });
      await waitUntil(page, () => causewayLogs("activated in").some((x) => !seen.has(x.f)), { timeout: 600_000, interval: 100, what: "Causeway activated" });
      profile = await startProfile(page);
      await startPageClock(page);
      t0 = Date.now();
      await openViewContainer(page, "Causeway");
      await firstRows(page);
      const warmRowsDriver = Date.now() - t0;
      clock = await readPageClock(page);
      await profile.stop(`warm-${i + 1}`);
      const warmRows = Math.round(clock.rows - (Number.isFinite(clock.press) ? clock.press : t0));
      // when the warm window's listing was served, from the click: the rest of warmRows is the
      // window's (the request on its way, the rows drawn)
      const warm = await waitUntil(page, () => causewayLogs("Runs view: first listing").find((x) => !seen.has(x.f)), {
        timeout: 60_000,
        interval: 200,
        what: "the warm listing in the log",
      });
      const warmListed = Math.round(hostTimes(warm, Number.isFinite(clock.press) ? clock.press : t0).listed);
      await b.close();
      b = undefined;
      const load = {
        rowsMs: rows,
        rowsAfterActivationMs: rows - activated,
        // the rows came from the run folders the last session found (not on a profile's first load)
        remembered: /found by the last session/.test(log),
        hostLaunchedMs: launched,
        activatedMs: activated,
        listedMs: listed,
        warmRowsMs: warmRows,
        warmListedMs: warmListed,
        // the same two spans as the test driver timed them, its round trips included
        rowsDriverMs: rowsDriver,
        warmRowsDriverMs: warmRowsDriver,
        paletteMs: palette,
        activateMs: Number(/activated in ([\d.]+) ms/.exec(log)[1]),
        foundMs: Number(/found \d+ runs in (\d+) ms/.exec(log)[1]),
        analysedMs: Number(/analysed \d+ runs in (\d+) ms/.exec(log)[1]),
        load: os.loadavg()[0],
      };
      console.log(`[bench] load ${i + 1}/${LOADS}: ${JSON.stringify(load)}`);
      loads.push(load);
    }
    const keys = [
      "rowsMs",
      "rowsAfterActivationMs",
      "hostLaunchedMs",
      "activatedMs",
      "listedMs",
      "warmRowsMs",
      "warmListedMs",
      "rowsDriverMs",
      "warmRowsDriverMs",
      "paletteMs",
      "activateMs",
      "foundMs",
      "analysedMs",
    ];
    const med = Object.fromEntries(keys.map((k) => [k, median(loads.map((l) => l[k]))]));
    const date = new Date().toISOString().slice(0, 10);
    const cpus = `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"})`;
    const result = { date, runs: N, loads, median: med, machine: cpus, command: "SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh" };
    const row = (l) =>
      `${l.rowsMs} ms | ${l.rowsAfterActivationMs} ms | ${l.remembered === undefined ? "" : l.remembered ? "yes" : "no"} | ${l.hostLaunchedMs} ms | ${l.activatedMs} ms | ${l.listedMs} ms | ${l.warmRowsMs} ms (listing served at ${l.warmListedMs} ms) | ${l.rowsDriverMs} / ${l.warmRowsDriverMs} ms | ${l.paletteMs} ms | ${l.foundMs} ms | ${l.analysedMs} ms`;
    const md =
      `# Runs view with ${N.toLocaleString("en")} runs, ${date}\n\n` +
      `Command: \`SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh\` (code-server 4.100.3, headless Chromium), ${cpus}.\n` +
      `Each load opens a new window (a new extension host) on a workspace of ${N} runs and opens the Causeway view at once; ` +
      `times from opening the view (the click on the activity bar, timed in the page): the frame that drew the first 10 rows, and from the logs the extension host launched, Causeway activated, the view's first listing served. ` +
      `Then a second new window activates Causeway (a palette command) and opens the view once it is activated.\n\n` +
      `| load | first 10 rows on screen | of which after activation | listed from the last session | host launched | activated | listing served | rows, view opened after activation | both rows as the test driver timed them | palette while analysing | runs found | all analysed | load average |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n` +
      loads.map((l, i) => `| ${i + 1} | ${row(l)} | ${l.load.toFixed(1)} |`).join("\n") +
      `\n| **median** | ${row(med)} | |\n\nTarget: first rows on screen ≤ 1 s. The rows are timed in the page, from the click's pointerdown to the first frame after the 10th row is in the DOM; ` +
      `"as the test driver timed them" adds the driver's own round trips (Playwright over the DevTools protocol).\n`;
    const dir = path.join(ROOT, "bench/results");
    fs.mkdirSync(dir, { recursive: true });
    const name = `${date}-vscode-runs-list${process.env.SUFFIX ? `-${process.env.SUFFIX.replace(/[^\w.-]+/g, "_")}` : ""}`;
    fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(result, null, 1) + "\n");
    fs.writeFileSync(path.join(dir, `${name}.md`), md);
    console.log(md);
  },
  { timeout: 3_600_000 },
);
