// How soon a workspace of 1,000 runs shows its first rows in the Runs view, in a real VS Code
// (code-server, as the end-to-end tests). Runs under test/e2e/run.sh, which packages and installs
// the extension and starts code-server:
//
//   SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh        (LOADS=3 by default)
//
// Each load opens a new window on the workspace (a new extension host: activation, discovery,
// analysis from scratch) and measures, from the Causeway view being opened:
//   rows     the first 10 run rows on screen;
//   palette  a palette command answered while the runs are analysed;
//   analysed every run analysed (from the Causeway log, "analysed 1000 runs in … ms").
// It also reads activate()'s time and discovery's "found N runs in … ms" from the log.
// Writes bench/results/<date>-vscode-runs-list.{json,md} with every load and the medians.
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  env, launchBrowser, makeWorkspace, openViewContainer, openWorkbench, runCommand, scenario, treeRows, viewPane, waitUntil,
} from '../test/e2e/lib.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const REF = path.join(ROOT, 'test/fixtures/causeway-py-demo');
const N = Number(process.env.RUNS ?? 1000);
const LOADS = Number(process.env.LOADS ?? 3);

/** The Causeway output-channel logs under the scratch folder that mention `text`, newest last. */
function causewayLogs(text) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && e.name !== 'workspaces' && e.name !== 'node_modules') walk(p);
      else if (e.name === 'Causeway.log') found.push(p);
    }
  };
  walk(env.WORK_DIR);
  return found.map((f) => ({ f, t: fs.readFileSync(f, 'utf8') })).filter((x) => x.t.includes(text));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

let b;
after(() => b?.close());

scenario(`bench: first rows of ${N} runs`, async () => {
  const ws = makeWorkspace(`bench-${N}-runs`);
  const names = fs.readdirSync(REF);
  for (let i = 0; i < N; i++) {
    const src = path.join(REF, names[i % names.length]);
    const d = path.join(ws, 'runs', `run-${String(i).padStart(4, '0')}`);
    fs.mkdirSync(d, { recursive: true });
    fs.linkSync(path.join(src, 'events.jsonl'), path.join(d, 'events.jsonl'));
    fs.symlinkSync(path.join(src, 'blobs'), path.join(d, 'blobs'), 'dir');
  }
  // WATCHER_EXCLUDE=1: the workspace excludes the runs' blobs from VS Code's file watcher (to
  // measure what the watcher's crawl of 1,000 run folders costs the window)
  if (process.env.WATCHER_EXCLUDE === '1') {
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.vscode/settings.json'), JSON.stringify({ 'files.watcherExclude': { '**/runs/*/blobs/**': true } }));
  }
  const loads = [];
  for (let i = 0; i < LOADS; i++) {
    b = await launchBrowser();
    const page = b.page;
    const seen = new Set(causewayLogs(`analysed ${N} runs`).map((x) => x.f));
    await openWorkbench(page, { folder: ws });
    const t0 = Date.now();
    await openViewContainer(page, 'Causeway');
    await treeRows(page, 'Runs', { minRows: 10, timeout: 600_000 });
    const rows = Date.now() - t0;
    const t1 = Date.now();
    await runCommand(page, 'Causeway: Show output', { timeout: 600_000 });
    await page.locator('.part.panel .output-view, .part.panel [id="workbench.panel.output"]').first().waitFor({ timeout: 600_000 });
    const palette = Date.now() - t1;
    const log = await waitUntil(page, () => causewayLogs(`analysed ${N} runs`).find((x) => !seen.has(x.f))?.t, { timeout: 900_000, interval: 500, what: 'the analysis' });
    const reading = viewPane(page, 'Runs').locator('.monaco-list-row').filter({ has: page.locator('.label-description', { hasText: /^\s*reading/ }) });
    await waitUntil(page, async () => (await reading.count()) === 0, { timeout: 120_000, what: 'the rows analysed' });
    const load = {
      rowsMs: rows,
      paletteMs: palette,
      activateMs: Number(/activated in ([\d.]+) ms/.exec(log)[1]),
      foundMs: Number(/found \d+ runs in (\d+) ms/.exec(log)[1]),
      analysedMs: Number(/analysed \d+ runs in (\d+) ms/.exec(log)[1]),
      load: os.loadavg()[0],
    };
    console.log(`[bench] load ${i + 1}/${LOADS}: ${JSON.stringify(load)}`);
    loads.push(load);
    await b.close();
    b = undefined;
  }
  const med = Object.fromEntries(['rowsMs', 'paletteMs', 'activateMs', 'foundMs', 'analysedMs'].map((k) => [k, median(loads.map((l) => l[k]))]));
  const date = new Date().toISOString().slice(0, 10);
  const cpus = `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'})`;
  const result = { date, runs: N, loads, median: med, machine: cpus, command: 'SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh' };
  const md = `# Runs view with ${N.toLocaleString('en')} runs, ${date}\n\n` +
    `Command: \`SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh\` (code-server 4.100.3, headless Chromium), ${cpus}.\n` +
    `Each load opens a new window (a new extension host) on a workspace of ${N} runs; times from opening the Causeway view.\n\n` +
    `| load | first 10 rows on screen | palette command while analysing | activate() | runs found | all analysed | load average |\n|---|---|---|---|---|---|---|\n` +
    loads.map((l, i) => `| ${i + 1} | ${l.rowsMs} ms | ${l.paletteMs} ms | ${l.activateMs} ms | ${l.foundMs} ms | ${l.analysedMs} ms | ${l.load.toFixed(1)} |`).join('\n') +
    `\n| **median** | **${med.rowsMs} ms** | ${med.paletteMs} ms | ${med.activateMs} ms | ${med.foundMs} ms | ${med.analysedMs} ms | |\n\nTarget: first rows on screen ≤ 1 s.\n`;
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${date}-vscode-runs-list.json`), JSON.stringify(result, null, 1) + '\n');
  fs.writeFileSync(path.join(dir, `${date}-vscode-runs-list.md`), md);
  console.log(md);
}, { timeout: 3_600_000 });
