/**
 * The honest scope of a replay without the program: what it refuses before sending anything
 * (provider-run tools, provider-held state, a call not recorded in full), a link it can't follow
 * (the program rewrote the brief: the replay stops there and says so), the Anthropic messages
 * shape, and the one-call rung (test --decision) and test-endpoint's one-line errors.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startGateway } from "../../../core/capture/gateway";
import { ConversationRecorder, openRun, runDir } from "../../../core/adapters/shared";
import { readRun } from "../../../core/log/reader";
import { AgentlessSystem } from "../../../core/replay/agentless/system";
import { recordDesk, recordReader } from "./desk";

const ROOT = path.resolve(__dirname, "../../..");
const CLI = path.join(ROOT, "dist", "cli.js");
const KEY = "sk-user-anthropic-91c2";

let recorded: FakeLlm;
let replay: FakeLlm;
let tmp: string;

function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; out: string; err: string }> {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]) delete e[k];
  for (const [k, v] of Object.entries(env)) if (v !== undefined) e[k] = v;
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: e });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("close", (code) => resolve({ code: code ?? -1, out, err }));
  });
}

beforeAll(async () => {
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 0.7 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-agentless-scope-"));
});
afterAll(async () => {
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Records one request sent through a gateway (whatever the fake answers). */
async function recordOne(runId: string, route: string, body: unknown): Promise<string> {
  const gw = await startGateway({ upstream: recorded.url, outDir: path.join(tmp, "runs"), port: 0, runId });
  try {
    const r = await fetch(`${gw.url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer k" },
      body: JSON.stringify(body),
    });
    await r.text();
  } finally {
    await gw.close();
  }
  return path.join(tmp, "runs", runId);
}

describe("refused before anything is sent", () => {
  const env = { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
  it("a request enabling a tool the provider runs (web search)", async () => {
    const dir = await recordOne("websearch", "/v1/chat/completions", {
      model: "m",
      web_search_options: {},
      messages: [{ role: "user", content: "look it up" }],
    });
    expect(() => new AgentlessSystem(readRun(dir), {}, env)).toThrow(/web search, a tool the provider runs itself/);
  });

  it("a Responses call continuing provider-held state (previous_response_id)", async () => {
    const dir = await recordOne("continued", "/v1/responses", { model: "m", previous_response_id: "resp_123", input: "and then?" });
    expect(() => new AgentlessSystem(readRun(dir), {}, env)).toThrow(/previous_response_id/);
  });

  it("a call not recorded in full: the CLI says neither the program nor the requests can replay it", async () => {
    const rt = openRun({ out: path.join(tmp, "runs"), runId: "partial" });
    const a = rt.agent("a");
    a.recordDecision({ context: [a.observe("a page", { source: "web", trust: "untrusted" })], output: "ok", model: "m" });
    new ConversationRecorder(a).toolResult({ id: "c1", name: "send_email", args: { to: "x@y.example" } }, "sent");
    await rt.finish();
    const dir = runDir(rt)!;
    expect(() => new AgentlessSystem(readRun(dir), {}, env)).toThrow(/no recorded request/);
    const before = replay.requests.length;
    const r = await cli(["test", dir, "--remove", "input:web", "--target", "tool=send_email", "--json"], { OPENAI_BASE_URL: replay.openaiBaseURL });
    expect(r.code).toBe(2);
    const e = JSON.parse(r.out);
    expect(e.error).toMatch(/names no program.*not possible either.*no recorded request/);
    expect(replay.requests.length).toBe(before);
  });
});

describe("a link the replay can't follow", () => {
  it("the program reflowed the brief (an inferred link): the replay stops at that hop and says so, no verdict", async () => {
    const dir = await recordDesk(recorded.url, path.join(tmp, "runs"), path.join(tmp, "m1"), "reflowed", (b) => b.replace(/\. /g, ".\n  "));
    const r = await cli(["test", dir, "--remove", "input:tool:fetch_doc*", "--target", "tool=send_email,arg~vendor-compliance", "--n-max", "10", "--json"], {
      OPENAI_BASE_URL: replay.openaiBaseURL,
      OPENAI_API_KEY: KEY,
    });
    expect(r.code).toBe(1);
    const e = JSON.parse(r.out);
    expect(e.error).toContain("not re-simulated: executor");
    expect(e.error).toContain("researcher->executor is inferred");
    expect(fs.existsSync(path.join(dir, "tests.jsonl"))).toBe(false);
  });
});

describe("the Anthropic messages shape", () => {
  it("a single agent recorded through the gateway: the fetched page is causal; the caller's key and endpoint only", async () => {
    const marker = path.join(tmp, "m2");
    const dir = await recordReader(recorded.url, path.join(tmp, "runs"), marker);
    const ran = fs.readFileSync(marker, "utf8");
    const seen = recorded.requests.length;
    const before = replay.requests.length;
    const r = await cli(["test", dir, "--remove", "input:tool:fetch_page*", "--target", "tool=send_email,arg~evil.example", "--n-max", "60", "--json"], {
      ANTHROPIC_BASE_URL: replay.anthropicBaseURL,
      ANTHROPIC_API_KEY: KEY,
    });
    expect(r.code, r.err).toBe(0);
    const t = JSON.parse(r.out);
    expect(t.rung).toBe(2);
    expect(t.verdict).toBe("causal");
    expect(t.p_without).toBe(0);
    const sent = replay.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((q) => q.path === "/v1/messages" && q.headers["x-api-key"] === KEY && !q.headers.authorization)).toBe(true);
    // a later turn holds the answer and the tool result as the messages API requires
    expect(sent.some((q) => q.body.messages.some((m: any) => m.role === "user" && Array.isArray(m.content) && m.content[0]?.type === "tool_result"))).toBe(
      true,
    );
    expect(recorded.requests.length).toBe(seen);
    expect(fs.readFileSync(marker, "utf8")).toBe(ran);

    // rung 1: test --decision re-sends that one call
    const seq = String(readRun(dir).events.find((e) => e.type === "decision")!.seq);
    const one = await cli(
      ["test", dir, "--decision", seq, "--remove", "input:tool:fetch_page*", "--contains", "x", "--n", "3", "--method", "newcombe", "--json"],
      { ANTHROPIC_BASE_URL: replay.anthropicBaseURL, ANTHROPIC_API_KEY: KEY },
    );
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse(one.out).rung).toBe(1);
  });
});

describe("test-endpoint errors are one line", () => {
  it("an endpoint that can't be reached: one line on stderr, {error, code} on stdout with --json", async () => {
    const dir = await recordOne("unreachable", "/v1/chat/completions", {
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hello" },
      ],
    });
    const seq = String(readRun(dir).events.find((e) => e.type === "decision")!.seq);
    const r = await cli(
      ["test-endpoint", dir, "--decision", seq, "--remove", "input:system", "--contains", "x", "--n", "2", "--base-url", "http://127.0.0.1:9/v1", "--json"],
      {},
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({ error: expect.stringContaining("can't reach 127.0.0.1:9"), code: 1 });
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});
