// How fast the investigator's graph becomes usable on a large run.
//
// Records synthetic multi-agent runs of about N events with the SDK, writes each one's static
// report with the CLI, opens the report's Graph screen in headless Chromium from a file:// URL
// several times, and reads window.__causewayGraphReady: performance.now() once the layered layout
// is computed and Cytoscape has drawn the first frame, i.e. milliseconds from navigation to a graph
// that answers clicks. Each load then finds a node (send_email) and selects it, and measures how
// long until its lineage is drawn ("select": a big run's graph is grouped, and selecting a node
// draws its lineage node by node). Workloads:
//   team   the issue's run: 10 agents passing work around, 200 inputs from four source families in
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

const model = (context, call) => ({ note: `${call.agent} ${call.purpose} ${call.seed % 1000}: ${context.length} items`, steps: call.seed % 3 });
const tools = {
  lookup_order: ({ id }) => ({ id, total: (id * 37) % 500 }),
  issue_refund: ({ id, amount }) => ({ refund: `rf_${id}`, amount }),
  send_email: ({ to }) => ({ queued: true, to }),
  escalate: ({ id }) => ({ ticket: `esc-${id}` }),
};

/** A support system working through a queue of tickets: about 10 events per ticket. */
function queue(events) {
  const tickets = Math.max(1, Math.round((events - 6) / 10.25));
  return new sdk.System({
    name: "bench:queue",
    task: "Work through the ticket queue and resolve each ticket per policy.",
    sensitiveTools: ["issue_refund", "send_email"],
    models: { sim: model },
    tools,
    program: async (rt) => {
      const researcher = rt.agent("researcher", { role: "reads tickets" });
      const planner = rt.agent("planner", { parent: "researcher", role: "plans" });
      const executor = rt.agent("executor", { parent: "planner", role: "acts" });
      const policy = researcher.observe("Refund policy: damaged items under $200 are refunded; notify the customer.", { source: "kb:refund_policy.md", trust: "trusted" });
      for (let t = 0; t < tickets; t++) {
        const ticket = researcher.observe(`Ticket ${t}: order ${1000 + t} arrived damaged; write to customer-${t}@example.com.`, { source: `inbox:ticket-${t}`, trust: "untrusted" });
        const page = researcher.observe(`Vendor note ${t % 9}: batch ${t % 5} had packaging problems.`, { source: `vendor:notes/${t % 9}`, trust: "untrusted" });
        const order = await researcher.act("lookup_order", { id: 1000 + t });
        const notes = researcher.inbox().slice(-1);
        const summary = await researcher.decide([rt.taskRef, ticket, policy, page, order, ...notes], { model: "sim", purpose: "summarize" });
        researcher.send("planner", summary);
        const plan = await planner.decide([rt.taskRef, ...planner.inbox().slice(-1)], { model: "sim", purpose: "plan" });
        planner.send("executor", plan);
        const calls = await executor.decide(executor.inbox().slice(-1), { model: "sim", purpose: "execute" });
        if (t % 7 === 3) await executor.act("escalate", { id: t }, { decision: calls });
        else await executor.act("issue_refund", { id: 1000 + t, amount: (t * 37) % 200 }, { decision: calls });
        await executor.act("send_email", { to: `customer-${t}@example.com` }, { decision: calls });
        if (t % 4 === 0) executor.send("researcher", calls); // shared notes across tickets
      }
      return { tickets };
    },
  });
}

/** The worst case: 12 agents in a ring; 6 events per agent per round. */
function mesh(events) {
  const AGENTS = 12;
  const rounds = Math.max(1, Math.round((events - 4 - AGENTS) / 6 / AGENTS));
  return new sdk.System({
    name: "bench:mesh",
    task: "Reconcile the accounts of every region and report discrepancies.",
    sensitiveTools: ["issue_refund", "send_email"],
    models: { sim: model },
    tools,
    program: async (rt) => {
      const agents = Array.from({ length: AGENTS }, (_, i) => rt.agent(`agent-${String(i).padStart(2, "0")}`, { role: `region ${i}`, parent: i ? `agent-${String(i - 1).padStart(2, "0")}` : undefined }));
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < AGENTS; i++) {
          const a = agents[i];
          const doc = a.observe(`Ledger ${r}/${i}: balances for region ${i}, batch ${r}.`, { source: `ledger:${i}/${r}`, trust: "trusted" });
          const web = a.observe(`Forum post ${r}/${i}; contact ops-${(r * 7 + i) % 13}@example.com.`, { source: `web:forum/${i}-${r}`, trust: "untrusted" });
          const found = await a.act("lookup_order", { id: r * AGENTS + i });
          const out = await a.decide([rt.taskRef, doc, web, found, ...a.inbox().slice(-2)], { model: "sim", purpose: "reconcile" });
          a.send(agents[(i + 1) % AGENTS].name, out);
          const tool = ["send_email", "issue_refund", "escalate"][(r + i) % 3];
          await a.act(tool, tool === "send_email" ? { to: `ops-${(r * 7 + i) % 13}@example.com` } : { id: r * AGENTS + i, amount: r }, { decision: out });
        }
      }
      return { rounds };
    },
  });
}

/** The issue's run: 10 agents, work passed from one to the next, ~7.3 events per input. */
function team(events) {
  const AGENTS = 10;
  const inputs = Math.max(1, Math.round((events - 13) / 7.3));
  const families = [["inbox", "untrusted"], ["web", "untrusted"], ["vendor", "untrusted"], ["kb", "trusted"]];
  return new sdk.System({
    name: "bench:team",
    task: "Handle every request in the queue per policy, passing work to the agent that owns it.",
    sensitiveTools: ["issue_refund", "send_email"],
    models: { sim: model },
    tools: { ...tools, log_note: ({ id }) => ({ noted: id }) },
    program: async (rt) => {
      const agents = Array.from({ length: AGENTS }, (_, i) => rt.agent(`agent-${String(i).padStart(2, "0")}`, { role: `desk ${i}`, parent: i ? "agent-00" : undefined }));
      for (let i = 0; i < inputs; i++) {
        const a = agents[i % AGENTS];
        const b = agents[(i + 1) % AGENTS];
        const [family, trust] = families[i % families.length];
        const input = a.observe(`Request ${i}: order ${2000 + i}; reply to user-${i}@example.com.`, { source: `${family}:item-${i}`, trust });
        const found = await a.act("lookup_order", { id: 2000 + i });
        const d1 = await a.decide([rt.taskRef, input, found, ...a.inbox().slice(-1)], { model: "sim", purpose: "triage" });
        a.send(b.name, d1);
        const d2 = await b.decide([rt.taskRef, ...b.inbox().slice(-1)], { model: "sim", purpose: "act" });
        await b.act(i % 5 === 2 ? "escalate" : "issue_refund", { id: 2000 + i, amount: (i * 37) % 200 }, { decision: d2 });
        await b.act("log_note", { id: i }, { decision: d2 });
        if (i % 10 < 3) await b.act("send_email", { to: `user-${i}@example.com` }, { decision: d2 });
      }
      return { inputs };
    },
  });
}

const SYSTEMS = { team, queue, mesh };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = [];
const browser = await launch();
console.log(`${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
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
          ` (layout + Cytoscape + first frame: median ${f(median(builds))}; select a node → lineage drawn: median ${f(median(selects))}; ${RUNS} loads)`,
      );
      rows.push(`| ${workload} | ${lines.toLocaleString("en")} | ${shape} | ${mb} MB | ${f(Math.min(...times))} / **${f(median(times))}** / ${f(Math.max(...times))} | ${f(median(builds))} | ${f(median(selects))} |`);
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
      `Command: \`${cmd}\`, headless Debian Chromium, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load average at the end ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}.\n\n` +
      `| workload | events | graph | report | interactive after (min / median / max) | layout + Cytoscape + first frame (median) | select a node → lineage drawn (median) |\n|---|---|---|---|---|---|---|\n` +
      rows.join("\n") +
      `\n\n"Interactive" is measured from navigation to \`window.__causewayGraphReady\` (layout computed and Cytoscape's first frame drawn). ` +
      `Runs of more than 600 nodes open grouped (agents, message channels, input source families); selecting a node draws its lineage node by node. ` +
      `Targets: 1 s at 1,500 events, 3 s at 20,000.\n`,
  );
  console.log(`wrote ${OUT}`);
}
