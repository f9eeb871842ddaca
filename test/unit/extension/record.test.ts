/**
 * Recording from the editor, without VS Code: the tool names the picks offer (read from the
 * examples), their defaults, the remembered answers (malformed state dropped), and both routes
 * run for real against the fake model server: the `causeway record` arguments of "Record this
 * program with Causeway", and the launch.json configuration's runtime arguments and environment
 * under plain Node (what js-debug runs), each recording the run where the extension looks for it.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import {
  defaultTools,
  launchConfiguration,
  programCommand,
  recordArgs,
  rememberedTools,
  runIdFor,
  sessionOut,
  toolNamesIn,
  withUntrusted,
  PRELOAD_COMMAND,
} from "../../../extension/logic/record";
import { ROOT, tmpDir } from "./helpers";

const OPENAI_EXAMPLE = "examples/support-agents/openai-agent.mjs";
const PYTHON_EXAMPLE = "examples/python/support_desk.py";

describe("the tools a program mentions", () => {
  it("finds the tools of the examples (MCP, AI SDK) and nothing else", () => {
    for (const f of [OPENAI_EXAMPLE, "examples/support-agents/anthropic-agent.cjs", "examples/ai-sdk/support-agents.mjs"]) {
      expect(new Set(toolNamesIn(fs.readFileSync(path.join(ROOT, f), "utf8"))), f).toEqual(new Set(["fetch_doc", "send_email", "issue_refund"]));
    }
  });

  it("reads AI SDK tool keys, Agents SDK tool names and MCP registrations", () => {
    const aiSdk = `const r = await generateText({ model, tools: { fetchDoc: tool({ inputSchema: z.object({}), execute }), "send_email": tool({ execute: send }) } });`;
    expect(toolNamesIn(aiSdk)).toEqual(["fetchDoc", "send_email"]);
    const aiSdkConsts = `const fetch_doc = tool({ description: "Read", execute }); let issue_refund = tool({ execute }); await generateText({ tools: { fetch_doc, issue_refund } });`;
    expect(toolNamesIn(aiSdkConsts)).toEqual(["fetch_doc", "issue_refund"]);
    const agents = `const t = tool({ description: "reads", name: 'fetch_doc', parameters, execute }); new Agent({ name: 'researcher', tools: [t] });`;
    expect(toolNamesIn(agents)).toEqual(["fetch_doc"]);
    // a name further on belongs to what follows, not to a tool without one
    expect(toolNamesIn(`const lookup = tool({ inputSchema: z.object({ name: z.string() }), execute });\nconst a = new Agent({ name: 'planner' });`)).toEqual([
      "lookup",
    ]);
    expect(toolNamesIn(`server.registerTool("lookup", {}, fn); server.tool('refund', fn);`)).toEqual(["lookup", "refund"]);
    expect(toolNamesIn("const x = 1; // no tools")).toEqual([]);
  });

  it("guesses sensitive and untrusted tools; a remembered answer wins", () => {
    const names = ["fetch_doc", "send_email", "issue_refund", "lookup_order", "summarise"];
    expect(defaultTools(names)).toEqual({
      sensitive: ["send_email", "issue_refund"],
      untrusted: ["fetch_doc", "lookup_order"],
      trusted: ["send_email", "issue_refund", "summarise"],
    });
    const mine = { sensitive: ["summarise"], untrusted: [], trusted: names };
    expect(defaultTools(names, mine)).toBe(mine);
    // what is not picked as untrusted is trusted, including names typed in the picks
    expect(withUntrusted(["a", "b"], ["c"], ["b"])).toEqual({ sensitive: ["c"], untrusted: ["b"], trusted: ["a", "c"] });
  });

  it("drops malformed remembered state instead of failing", () => {
    expect(rememberedTools(undefined, "p")).toBeUndefined();
    expect(rememberedTools([], "p")).toBeUndefined();
    expect(rememberedTools({}, "__proto__")).toBeUndefined();
    expect(rememberedTools({ p: "x" }, "p")).toBeUndefined();
    expect(rememberedTools({ p: { sensitive: ["a", 3, null], untrusted: "b" } }, "p")).toEqual({ sensitive: ["a"], untrusted: [], trusted: [] });
  });

  it("runs JavaScript with node and TypeScript through tsx only when the project has it", () => {
    expect(programCommand("a/b.mjs", { tsx: false })).toEqual({ command: ["node", "a/b.mjs"] });
    expect(programCommand("b.ts", { tsx: true })).toEqual({ command: ["node", "--import", "tsx", "b.ts"] });
    expect(programCommand("b.ts", { tsx: false })).toMatchObject({ error: expect.stringContaining("npm install --save-dev tsx") });
    expect(programCommand("b.rb", { tsx: true })).toMatchObject({ error: expect.stringContaining("not a JavaScript, TypeScript or Python") });
  });

  it("runs Python with python3 (python on Windows) behind the built-in gateway, and reads its tools", () => {
    expect(programCommand(path.join("a", "b.py"), { tsx: false, platform: "linux" })).toEqual({ command: ["python3", "a/b.py"], via: "gateway" });
    expect(programCommand("b.py", { tsx: false, platform: "win32" })).toEqual({ command: ["python", "b.py"], via: "gateway" });
    expect(recordArgs({ out: "runs", runId: "r", tools: { sensitive: [], untrusted: [], trusted: [] }, command: ["python3", "b.py"], via: "gateway" })).toEqual(
      ["record", "--out", "runs", "--run-id", "r", "--via", "gateway", "--", "python3", "b.py"],
    );
    expect(toolNamesIn(fs.readFileSync(path.join(ROOT, PYTHON_EXAMPLE), "utf8"))).toEqual(["fetch_doc", "lookup_order", "send_email"]);
  });
});

describe("both routes record the example against the fake model server", () => {
  let llm: FakeLlm;
  let ws: string;
  const tools = { sensitive: ["send_email"], untrusted: ["fetch_doc"], trusted: ["send_email", "issue_refund"] };

  beforeAll(async () => {
    llm = await startFakeLlm({ followRate: 0.8 });
    ws = tmpDir("cw-record-");
    fs.cpSync(path.join(ROOT, "examples/support-agents"), path.join(ws, "examples/support-agents"), { recursive: true });
    fs.cpSync(path.join(ROOT, "examples/python"), path.join(ws, "examples/python"), { recursive: true });
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(ws, "node_modules"));
  });
  afterAll(async () => {
    await llm?.close();
    fs.rmSync(ws, { recursive: true, force: true });
  });

  const run = (argv: string[], env: Record<string, string>) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, argv, {
        cwd: ws,
        env: { ...process.env, OPENAI_BASE_URL: llm.openaiBaseURL, OPENAI_API_KEY: "fake", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (c) => (stderr += c));
      child.on("close", (code) => resolve({ code: code ?? 1, stderr }));
    });
  const start = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n")[0]);
  const trustOf = (dir: string, source: string) =>
    fs
      .readFileSync(path.join(dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "input" && String(e.source).startsWith(source))?.trust;

  it("Record this program: causeway record with the picked tools, into runs/<run id>", async () => {
    const out = path.join(ws, "runs");
    const runId = runIdFor(out, path.join(ws, OPENAI_EXAMPLE), new Date("2026-12-01T10:00:00Z"));
    expect(runId).toBe("openai-agent-20261201-100000");
    const cmd = programCommand(OPENAI_EXAMPLE, { tsx: false });
    if ("error" in cmd) throw new Error(cmd.error);
    const r = await run([path.join(ROOT, "dist/cli.js"), ...recordArgs({ out, runId, tools, command: cmd.command })], {});
    expect(r.code, r.stderr).toBe(0);
    const s = start(path.join(out, runId));
    expect(s.program).toBe(`node ${OPENAI_EXAMPLE}`); // what causeway.allowedPrograms gets
    expect(s.sensitive_tools).toEqual(["send_email"]);
    expect(trustOf(path.join(out, runId), "mcp:support-desk/fetch_doc")).toBe("untrusted");
    // a trusted tool's result is no outside input (untrusted when not picked: the MCP default)
    expect(trustOf(path.join(out, runId), "mcp:support-desk/send_email")).toBeUndefined();
    // the next recording of the same program gets a free id
    expect(runIdFor(out, path.join(ws, OPENAI_EXAMPLE), new Date("2026-12-01T10:00:00Z"))).toBe(`${runId}-2`);
  }, 120_000);

  it("Record this program on a Python file: causeway record behind the gateway, into runs/<run id>", async () => {
    const out = path.join(ws, "runs");
    const runId = runIdFor(out, path.join(ws, PYTHON_EXAMPLE), new Date("2026-12-01T10:00:00Z"));
    expect(runId).toBe("support_desk-20261201-100000");
    const cmd = programCommand(PYTHON_EXAMPLE, { tsx: false, platform: "linux" });
    if ("error" in cmd) throw new Error(cmd.error);
    const picked = { sensitive: ["send_email"], untrusted: ["fetch_doc"], trusted: ["lookup_order", "send_email"] };
    const r = await run([path.join(ROOT, "dist/cli.js"), ...recordArgs({ out, runId, tools: picked, command: cmd.command, via: cmd.via })], {});
    expect(r.code, r.stderr).toBe(0);
    const s = start(path.join(out, runId));
    expect(s.program).toBe(`python3 ${PYTHON_EXAMPLE}`);
    expect(s.meta).toMatchObject({ recorded_by: "causeway gateway", via: "gateway" });
    expect(trustOf(path.join(out, runId), 'tool:fetch_doc {"name":"vendor-note"}')).toBe("untrusted");
    expect(trustOf(path.join(out, runId), "tool:send_email")).toBeUndefined();
  }, 120_000);

  it("the launch configuration: its runtime arguments and environment record a run where the session watch looks", async () => {
    const config = launchConfiguration({ program: `\${workspaceFolder}/${OPENAI_EXAMPLE}`, tools });
    // what VS Code substitutes before js-debug starts node
    const sub = (v: string) =>
      v.replaceAll("${workspaceFolder}", ws).replace(`\${command:${PRELOAD_COMMAND}}`, pathToFileURL(path.join(ROOT, "dist/register.js")).href);
    const env = Object.fromEntries(Object.entries(config.env as Record<string, string>).map(([k, v]) => [k, sub(v)]));
    const out = sessionOut({ ...config, env, cwd: sub(String(config.cwd)) }, ws);
    expect(out).toBe(path.join(ws, "runs"));
    const before = new Set(fs.readdirSync(out!));
    const r = await run([...(config.runtimeArgs as string[]).map(sub), sub(String(config.program))], env);
    expect(r.code, r.stderr).toBe(0);
    const fresh = fs.readdirSync(out!).filter((d) => !before.has(d));
    expect(fresh).toHaveLength(1);
    const s = start(path.join(out!, fresh[0]));
    expect(s.program).toBe(`node ${OPENAI_EXAMPLE}`);
    expect(s.sensitive_tools).toEqual(["send_email"]);
    expect(trustOf(path.join(out!, fresh[0]), "mcp:support-desk/fetch_doc")).toBe("untrusted");
    expect(trustOf(path.join(out!, fresh[0]), "mcp:support-desk/send_email")).toBeUndefined();
    // a session without CAUSEWAY_OUT is not watched
    expect(sessionOut({ env: {} }, ws)).toBeUndefined();
    expect(sessionOut({ env: { CAUSEWAY_OUT: "rel" }, cwd: "/x" }, ws)).toBe(path.resolve("/x/rel"));
  }, 120_000);
});
