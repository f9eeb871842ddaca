// How fast the investigator's graph becomes usable on a large run.
//
// Records synthetic multi-agent runs of about N events with the SDK, writes each one's static
// report with the CLI, opens the report's Graph screen in headless Chromium from a file:// URL
// several times, and reads window.__causewayGraphReady: performance.now() once the layout is
// computed and the graph's first frame is drawn (Cytoscape's; a big run's grouped view is SVG),
// i.e. milliseconds from navigation to a graph that answers clicks. Each load then finds a node (send_email) and selects it, and measures how
// long until its lineage is drawn ("select": a big run's graph is grouped, and selecting a node
// draws its lineage node by node). Workloads:
//   team   the run: 10 agents passing work around, 200 inputs from four source families in
//          1,473 events (the number of inputs scales with --events);
//   queue  a three-agent support system working through a queue of tickets in one run (each ticket
//          read, summarised, planned and acted on; a shared notes channel links the tickets);
//   mesh   the worst case: 12 agents in a ring, every model call seeing the last messages, so
//          every action is downstream of every earlier input.
// Targets: interactive within 1 s at 1,500 events, within 3 s at 20,000.
//
//   node bench/webview-graph.mjs [--events 1473,20000] [--workloads team,queue,mesh] [--runs 5] [--out FILE.md]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT, build, cli, fileUrl, launch, tempDir } from "../test/browser/lib.mjs";
import { workloads } from "./workloads.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SIZES = String(arg("--events", "1473,20000")).split(",").map(Number);
const WORKLOADS = String(arg("--workloads", "team,queue,mesh")).split(",");
const RUNS = Number(arg("--runs", 5));
const OUT = arg("--out", null);

build();
const sdk = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));

const SYSTEMS = workloads(sdk);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = [];
const browser = await launch();
console.log(
  `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
try {
  for (const workload of WORKLOADS) {
    for (const events of SIZES) {
      const root = tempDir("causeway-bench-graph-");
      const run = await SYSTEMS[workload](events).run({ seed: 0, outDir: root, runId: `${workload}-${events}` });
      const report = path.join(root, "report.html");
      const t0 = performance.now();
      cli("report", root, "-o", report);
      const reportMs = performance.now() - t0;
      const lines = fs.readFileSync(path.join(run.dir, "events.jsonl"), "utf8").trim().split("\n").length;
      const times = [];
      const builds = [];
      const selects = [];
      let shape = null;
      for (let i = 0; i < RUNS; i++) {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        const page = await context.newPage();
        const errors = [];
        page.on("pageerror", (e) => errors.push(String(e)));
        page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
        // not waiting for "load": the page draws before the browser has parsed the data after its script
        await page.goto(fileUrl(report, `screen=graph&run=${encodeURIComponent(run.runId)}`), { waitUntil: "commit" });
        await page.waitForFunction(() => typeof window.__causewayGraphReady === "number", null, { timeout: 120_000 });
        const t = await page.evaluate(() => ({
          ready: window.__causewayGraphReady,
          start: performance.getEntriesByName("causeway:graph-start")[0]?.startTime ?? 0,
          marks: Object.fromEntries(performance.getEntriesByType("mark").map((m) => [m.name.replace("causeway:", ""), Math.round(m.startTime)])),
        }));
        if (process.env.MARKS) console.log(JSON.stringify(t.marks));
        times.push(t.ready);
        builds.push(t.ready - t.start);
        // Interactive: a node search selects a node; its lineage is drawn (grouped: a new view).
        await page.getByPlaceholder("Find a node (Enter)").fill("send_email");
        const pressed = await page.evaluate(() => performance.now());
        await page.keyboard.press("Enter");
        await page.locator(".graph-panel").getByText("Downstream").waitFor({ timeout: 60_000 });
        const grouped = await page.locator(".graph-toolbar .muted", { hasText: "grouped" }).count();
        if (grouped) await page.waitForFunction((t) => window.__causewayGraphReady > t, pressed, { timeout: 60_000 });
        selects.push((await page.evaluate(() => performance.now())) - pressed);
        shape ??= await page.locator(".graph-toolbar .muted").first().innerText();
        if (errors.length) throw new Error(errors.join("\n"));
        await context.close();
      }
      const f = (x) => `${Math.round(x)} ms`;
      const mb = (fs.statSync(report).size / 1024 / 1024).toFixed(1);
      console.log(
        `${workload.padEnd(5)} ${lines} events, ${shape}; report ${mb} MB (written in ${f(reportMs)})\n` +
          `      graph interactive after min ${f(Math.min(...times))} / median ${f(median(times))} / max ${f(Math.max(...times))} from navigation` +
          ` (layout + drawing + first frame: median ${f(median(builds))}; select a node → lineage drawn: median ${f(median(selects))}; ${RUNS} loads)`,
      );
      rows.push(
        `| ${workload} | ${lines.toLocaleString("en")} | ${shape} | ${mb} MB | ${f(Math.min(...times))} / **${f(median(times))}** / ${f(Math.max(...times))} | ${f(median(builds))} | ${f(median(selects))} |`,
      );
    }
  }
} finally {
  await browser.close();
}
if (OUT) {
  const cmd = `node bench/webview-graph.mjs ${process.argv.slice(2).join(" ")}`.trim();
  fs.writeFileSync(
    OUT,
    `# Graph render benchmark, ${new Date().toISOString().slice(0, 10)}\n\n` +
      `Command: \`${cmd}\`, headless Debian Chromium, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average at the end ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}.\n\n` +
      `| workload | events | graph | report | interactive after (min / median / max) | layout + drawing + first frame (median) | select a node → lineage drawn (median) |\n|---|---|---|---|---|---|---|\n` +
      rows.join("\n") +
      `\n\n"Interactive" is measured from navigation to \`window.__causewayGraphReady\` (layout computed and the graph's first frame drawn: Cytoscape's, or the grouped view's SVG). ` +
      `Runs of more than 600 nodes open grouped (agents, message channels, input source families), drawn as SVG; selecting a node draws its lineage node by node. ` +
      `Targets: 1 s at 1,500 events, 3 s at 20,000.\n`,
  );
  console.log(`wrote ${OUT}`);
}
