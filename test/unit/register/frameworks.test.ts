/**
 * Framework tool objects declared with --tool, and framework agent names: a LangGraph.js agent
 * (createReactAgent, named) whose tools are LangChain tool() objects, on @langchain/openai, against
 * the fake model server, recorded through `causeway record` and replayed by `causeway test`. The
 * tools' results are recorded with the declared trust, the agent is the graph's name, replays
 * serve the results from the tape (the real tools never run again), and a declared export that is
 * missing or not a tool ends the recording with exit 2 and what was found.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tool, DynamicTool } from "@langchain/core/tools";
import { z } from "zod";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { events, runCli } from "./cli";
import { toolError, toolKind, wrapFrameworkTool, type ToolHost } from "../../../core/register/framework-tools";

const PROG = "node test/unit/register/fixtures/langgraph-agent.mjs";
const TOOLS = "test/unit/register/fixtures/langchain-tools.mjs";
/** Loads the tool module and stops (the refusals need no agent). */
const LOADS = ["node", "test/unit/register/fixtures/uses-langchain-tools.mjs"];

let llm: FakeLlm;
let tmp: string;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);

beforeAll(async () => {
  llm = await startFakeLlm({ followRate: 0.8 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-frameworks-"));
});
afterAll(async () => {
  await llm?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const lines = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8").trim().split("\n").filter(Boolean) : []);

describe("a LangGraph agent with LangChain tool() objects", () => {
  it("is recorded with the declared trust and the graph's name, and replays never run its tools", async () => {
    const marker = path.join(tmp, "outbox");
    const toolRuns = path.join(tmp, "tool-runs");
    const env = { MARKER: marker, TOOL_RUNS: toolRuns };
    const r = await cli(
      [
        "record",
        "--out",
        path.join(tmp, "runs"),
        "--seed",
        "2",
        "--run-id",
        "lg",
        "--sensitive",
        "send_email",
        "--trusted-tool",
        "send_email",
        "--tool",
        `${TOOLS}:fetchPage,sendEmail`,
        "--",
        ...PROG.split(" "),
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const run = path.join(tmp, "runs", "lg");
    const ev = events(run);
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 }); // nothing uncaptured, no problem
    // the graph's own name, not the prompt's "You are given…"
    expect(new Set(ev.filter((e) => e.type === "agent.start").map((e) => e.agent))).toEqual(new Set(["courier"]));
    const inputs = ev.filter((e) => e.type === "input" && String(e.source).startsWith("tool:"));
    const fetched = inputs.find((e) => e.source === 'tool:fetch_page {"url":"https://vendor.example/notes"}');
    expect(fetched?.trust).toBe("untrusted");
    // send_email declared trusted: its results are no untrusted input (no suspect)
    expect(inputs.filter((e) => String(e.source).startsWith("tool:send_email ") && e.trust !== "trusted")).toEqual([]);
    const actions = ev.filter((e) => e.type === "action");
    expect(actions.map((a) => a.tool)).toEqual(expect.arrayContaining(["fetch_page", "send_email"]));
    for (const a of actions) expect(a.sensitive).toBe(a.tool === "send_email");
    expect(actions.every((a) => typeof a.tool_call_id === "string" && a.tool_call_id.startsWith("call_"))).toBe(true);
    expect(lines(marker)).toContain("attacker@evil.example"); // seed 2: the planted instruction was followed
    const ranWhenRecorded = lines(toolRuns).length;
    expect(ranWhenRecorded).toBe(actions.length);

    const t = await cli(
      [
        "test",
        run,
        "--remove",
        "input:tool:fetch_page*",
        "--target",
        "tool=send_email,arg~evil.example",
        "--n",
        "2",
        "--workers",
        "2",
        "--allow-program",
        PROG,
        "--json",
      ],
      env,
    );
    expect(t.code, t.stderr).toBe(0);
    const res = JSON.parse(t.stdout);
    expect(res.intervention_applied_in).toBe(2);
    expect(res.p_with).toBe(1); // served from the tape, the recording's choice repeats
    expect(res.p_without).toBe(0);
    // the tools never ran again: every replayed call was served from the tape or stubbed
    expect(lines(toolRuns).length).toBe(ranWhenRecorded);
    expect(lines(marker).length).toBe(actions.filter((a) => a.tool === "send_email").length);
  }, 120_000);

  it("refuses a missing export or one that is not a tool, with exit 2, what was found and no run left", async () => {
    const out = path.join(tmp, "bad");
    const asked = llm.requests.length;
    const missing = await cli(["record", "--out", out, "--run-id", "nosuch", "--tool", `${TOOLS}:fetchPage,nosuch`, "--", ...LOADS]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${TOOLS} has no export nosuch (its exports: fetchPage, sendEmail, settings)`);
    expect(missing.stderr.match(/has no export/g)).toHaveLength(1); // said once, by the CLI
    expect(fs.existsSync(path.join(out, "nosuch"))).toBe(false);

    const notATool = await cli(["record", "--out", out, "--run-id", "settings", "--json", "--tool", `${TOOLS}:settings`, "--", ...LOADS]);
    expect(notATool.code).toBe(2);
    const err = JSON.parse(notATool.stdout);
    expect(err.code).toBe(2);
    expect(err.error).toContain(`${TOOLS}:settings is an object with keys retries, timeoutMs, not a tool`);
    expect(err.error).toContain("LangChain/LangGraph (tool() from @langchain/core/tools)");
    expect(fs.existsSync(path.join(out, "settings"))).toBe(false);

    const noFile = await cli(["record", "--out", out, "--tool", "no/such/tools.mjs:fetchPage", "--", ...LOADS]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain("--tool no/such/tools.mjs: no such file");
    expect(llm.requests.length).toBe(asked); // stopped before the program asked any model
  }, 60_000);
});

describe("tool objects by framework", () => {
  /** A host that records what the wrapper hands it, and runs the tool only when asked to. */
  function host(runTools: boolean) {
    const calls: { name: string; args: unknown; untrusted: boolean; callId?: string }[] = [];
    const h: ToolHost = {
      trusted: ["lookup"],
      tool: async (name, args, _source, untrusted, run, _link, callId) => {
        calls.push({ name, args, untrusted, callId });
        return runTools ? run() : "from the tape";
      },
    };
    return { h, calls };
  }

  it("wraps a real LangChain tool(): invoke with a tool call goes through the recorder, linked by id", async () => {
    let ran = 0;
    const t = tool(async ({ q }: { q: string }) => `found ${q}` + String(ran++), {
      name: "search_docs",
      description: "search",
      schema: z.object({ q: z.string() }),
    });
    expect(toolKind(t)).toBe("langchain");
    expect(toolKind(new DynamicTool({ name: "lookup", description: "d", func: async (s: string) => s }))).toBe("langchain");
    const { h, calls } = host(false);
    expect(wrapFrameworkTool(h, t)).toBe(t);
    wrapFrameworkTool(h, t); // once only
    const out = await t.invoke({ id: "call_1", name: "search_docs", args: { q: "refunds" }, type: "tool_call" });
    expect(ran).toBe(0);
    expect(out.content).toBe("from the tape");
    expect(calls).toEqual([{ name: "search_docs", args: { q: "refunds" }, untrusted: true, callId: "call_1" }]);
  });

  it("wraps LlamaIndex FunctionTool and Mastra createTool by their documented shapes, and leaves AI SDK and Agents SDK tools to their own hooks", async () => {
    const { h, calls } = host(true);
    const llama = { metadata: { name: "lookup", description: "d", parameters: {} }, call: async (input: { id: string }) => `row ${input.id}`, bind() {} };
    expect(toolKind(llama)).toBe("llamaindex");
    wrapFrameworkTool(h, llama);
    expect(await llama.call({ id: "7" })).toBe("row 7");
    const mastra = { id: "weather", description: "d", inputSchema: {}, execute: async (input: unknown) => input };
    expect(toolKind(mastra)).toBe("mastra");
    wrapFrameworkTool(h, mastra);
    await mastra.execute({ context: { city: "Oslo" }, runtimeContext: {} }); // Mastra 0.x
    await mastra.execute({ city: "Bergen" }); // Mastra 1.x
    expect(calls).toEqual([
      { name: "lookup", args: { id: "7" }, untrusted: false, callId: undefined },
      { name: "weather", args: { city: "Oslo" }, untrusted: true, callId: undefined },
      { name: "weather", args: { city: "Bergen" }, untrusted: true, callId: undefined },
    ]);
    const aiSdk = { description: "d", inputSchema: {}, execute: async () => 1 };
    const agentsSdk = { type: "function", name: "f", invoke: async () => 1 };
    for (const [t, kind] of [
      [aiSdk, "ai-sdk"],
      [agentsSdk, "openai-agents"],
    ] as const) {
      const before = t.constructor === Object ? { ...t } : t;
      expect(toolKind(t)).toBe(kind);
      wrapFrameworkTool(h, t);
      expect(t).toEqual(before); // untouched
    }
  });

  it("says what a non-tool export is", () => {
    expect(toolError("t.mjs", "x", undefined, ["a", "b"])).toBe("t.mjs has no export x (its exports: a, b): name an exported tool, e.g. --tool t.mjs:a");
    expect(toolError("t.mjs", "a", 42, ["a"])).toMatch(/^t\.mjs:a is a number, not a tool: export a function, or a tool object of LangChain/);
    expect(toolError("t.mjs", "a", new Map(), ["a"])).toMatch(/is an object of class Map with no keys, not a tool/);
    expect(toolError("t.mjs", "a", { name: "x", invoke() {} }, ["a"])).toMatch(/is an object with keys name, invoke, not a tool/);
    expect(toolError("t.mjs", "a", async () => 1, ["a"])).toBeUndefined();
  });
});
