// Remote ingest, live (issue 8): `causeway serve` collects into the open workspace's remote/runs,
// and the remote agent of examples/remote-agent — the OpenAI support agent with an HttpSink, run
// in another process against the fake OpenAI server of test/fake-llm — ships its run step by step
// (--step: it waits for Enter before each model call). The run appears in the Runs view while it
// is being recorded ("running"), grows, and ends intact with the alerts `causeway alerts` finds.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import * as vs from "../lib.mjs";
import * as cw from "../causeway.mjs";

const RUN = "remote-desk-42";
const TOKEN = "e2e-token-3f9c";
let b;
let page;
let ws;
const children = [];

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });

/** Starts a node process of ours; `lines` collects its stdout+stderr lines; waitFor(re) awaits one. */
function start(args, { env = {}, name } = {}) {
  const child = spawn(process.execPath, args, { cwd: cw.ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  const lines = [];
  const waiters = [];
  let exited = null;
  const feed = (chunk) => {
    for (const l of chunk.toString().split("\n").filter(Boolean)) {
      lines.push(l);
      for (const w of [...waiters])
        if (w.re.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          clearTimeout(w.timer);
          w.resolve(l);
        }
    }
  };
  child.stdout.on("data", feed);
  child.stderr.on("data", feed);
  child.on("exit", (code) => {
    exited = code;
    for (const w of waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new Error(`${name} exited (${code}) before printing ${w.re}:\n${lines.join("\n")}`));
    }
  });
  return {
    child,
    lines,
    get exited() {
      return exited;
    },
    waitFor(re, timeout = vs.T(30_000)) {
      const hit = lines.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      if (exited !== null) return Promise.reject(new Error(`${name} exited (${exited}):\n${lines.join("\n")}`));
      return new Promise((resolve, reject) => {
        const w = { re, resolve, reject };
        waiters.push(w);
        w.timer = setTimeout(() => {
          if (waiters.includes(w)) {
            waiters.splice(waiters.indexOf(w), 1);
            reject(new Error(`${name}: no ${re} after ${timeout} ms:\n${lines.join("\n")}`));
          }
        }, timeout);
      });
    },
    exit: () => new Promise((resolve) => (exited !== null ? resolve(exited) : child.on("exit", resolve))),
  };
}

let collector;
let llm;

before(async () => {
  ws = vs.makeWorkspace("httpsink-live");
  fs.mkdirSync(path.join(ws, "remote/runs"), { recursive: true });
  const [cport, lport] = [await freePort(), await freePort()];
  collector = start([cw.CLI, "serve", path.join(ws, "remote/runs"), "--token-env", "CW_E2E_TOKEN", "--port", String(cport)], {
    name: "collector",
    env: { CW_E2E_TOKEN: TOKEN },
  });
  await collector.waitFor(/causeway collector on http:\/\/127\.0\.0\.1:\d+/);
  collector.url = `http://127.0.0.1:${cport}`;
  // the fake model always follows the instruction planted in the fetched page (follow rate 1)
  llm = start(["test/fake-llm/run-example.cjs", "test/fake-llm/server.ts", String(lport), "1"], { name: "fake-llm" });
  await llm.waitFor(/fake OpenAI \+ Anthropic on http/);
  llm.url = `http://127.0.0.1:${lport}/v1`;
  b = await vs.launchBrowser();
  page = b.page;
  await vs.openWorkbench(page, { folder: ws });
});

after(async () => {
  await b?.close();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(); // ours, by handle
});

vs.scenario("a run shipped by HttpSink from another process appears live, grows, and ends with its alerts", async () => {
  await vs.openViewContainer(page, "Causeway");
  await page
    .locator(".pane", { hasText: "No runs in this workspace yet" })
    .first()
    .waitFor({ timeout: vs.T(30_000) });

  const agent = start(["test/fake-llm/run-example.cjs", "examples/remote-agent/agent.ts", "--step", "--run-id", RUN], {
    name: "remote agent",
    env: { CAUSEWAY_TOKEN: TOKEN, CAUSEWAY_COLLECTOR: collector.url, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "test", CAUSEWAY_MODEL: "gpt-4.1-mini" },
  });
  const row = vs
    .viewPane(page, "Runs")
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^\\s*${RUN}\\s*$`) }) })
    .first();
  const desc = row.locator(".label-description");

  // before the first model call: the run's start reaches the collector (the sink sends after 1 s)
  await agent.waitFor(/^step 1: \d+ events delivered/);
  const t0 = Date.now();
  await row.waitFor({ timeout: vs.T(15_000) });
  await desc.filter({ hasText: /^\s*running/ }).waitFor({ timeout: vs.T(15_000) });
  const appeared = Date.now() - t0;
  assert.ok(fs.existsSync(path.join(ws, "remote/runs", RUN, ".causeway-ingest")), "the collector created the run");
  await vs.screenshot(page, "34-httpsink-running");
  const events = () =>
    fs
      .readFileSync(path.join(ws, "remote/runs", RUN, "events.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean).length;
  const early = events();

  // step on: each Enter lets the agent make its next model call (and its tool calls)
  let step = 1;
  for (;;) {
    agent.child.stdin.write("\n");
    // the next step's prompt, or the agent's exit once it has answered
    const next = await agent.waitFor(new RegExp(`^step ${step + 1}: `)).then(
      () => "step",
      (e) => (agent.exited !== null ? "done" : Promise.reject(e)),
    );
    if (next === "done") break;
    step++;
    if (step === 2) {
      // mid-run: the tool calls of the first turn arrived and the run is still recording
      for (let i = 0; i < 100 && events() <= early; i++) await new Promise((r) => setTimeout(r, 100)); // the sink sends after each tool call
      assert.ok(events() > early, "the run grew");
      await desc.filter({ hasText: /^\s*running/ }).waitFor();
      await vs.screenshot(page, "34-httpsink-growing");
    }
    assert.ok(step < 10, "the agent finishes within a few turns");
  }
  assert.equal(await agent.exit(), 0, agent.lines.join("\n"));
  assert.ok(
    agent.lines.some((l) => new RegExp(`^shipped ${RUN} to ${collector.url} \\(\\d+ events\\)$`).test(l)),
    agent.lines.join("\n"),
  );

  // run.end arrived: the row says intact, with the alerts the CLI finds in the collected run
  const t1 = Date.now();
  const counts = cw.cliAlertCounts(path.join(ws, "remote/runs", RUN));
  assert.match(counts, /^1 high/, "the planted address was emailed: a high alert");
  await desc.filter({ hasText: new RegExp(`^\\s*intact · ${counts} · no program`) }).waitFor({ timeout: vs.T(15_000) });
  const ended = Date.now() - t1;
  console.log(`[httpsink] run listed ${appeared} ms after the first step; the end shown ${ended} ms after the agent exited; ${step} steps, ${events()} events`);
  // the agent's row lists the e-mail with its high alert (re-expanded if the end's analysis redrew the tree)
  await vs.expandUntil(page, "Runs", [RUN, "support"], (r) => r.label === "send_email" && /1 high/.test(r.description), { timeout: vs.T(30_000) });
  await vs.screenshot(page, "34-httpsink-ended");
});
