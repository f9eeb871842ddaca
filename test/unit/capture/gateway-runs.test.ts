/**
 * Which run a gateway request is recorded in: a new run on a new `x-causeway-run` value or after a
 * quiet gap (measured on an injected clock, never waited for), one run whatever a request says in
 * single-run mode; only requests under the secret path prefix are taken; Anthropic requests go to
 * their own upstream; tool results are untrusted unless trusted, each named by its arguments.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startGateway } from "../../../core/capture/gateway";
import type { GatewayOptions } from "../../../core/capture/gateway-options";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";

const open: { close(): Promise<void> }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-gw-runs-"));
  dirs.push(d);
  return d;
};
async function fake(): Promise<FakeLlm> {
  const f = await startFakeLlm({ followRate: 1 });
  open.push(f);
  return f;
}
async function gateway(opts: Partial<GatewayOptions> & { upstream: string; outDir: string }) {
  const g = await startGateway({ port: 0, ...opts });
  open.push(g);
  return g;
}

const chat = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k", ...headers },
    body: JSON.stringify(body),
  });
const hello = (system = "You are the greeter.") => ({
  model: "m",
  messages: [
    { role: "system", content: system },
    { role: "user", content: "hello" },
  ],
});
const decisions = (dir: string) => new RunModel(readRun(dir)).decisions.length;

describe("gateway runs", () => {
  it("starts a new run after a quiet gap, never while a call is in flight, and on a new x-causeway-run", async () => {
    const llm = await fake();
    let now = 1_000_000;
    const out = tmp();
    const gw = await gateway({ upstream: llm.url, outDir: out, runGapMs: 60_000, now: () => now });
    expect((await chat(gw.url, hello())).status).toBe(200);
    now += 59_000;
    expect((await chat(gw.url, hello("You are the planner."))).status).toBe(200);
    expect(gw.runs()).toHaveLength(1);
    now += 60_000; // the program ended; the next one starts
    expect((await chat(gw.url, hello())).status).toBe(200);
    expect((await chat(gw.url, hello(), { "x-causeway-run": "named-one" })).status).toBe(200);
    now += 600_000; // a named run is not split by the gap
    expect((await chat(gw.url, hello(), { "x-causeway-run": "named-one" })).status).toBe(200);
    await gw.close();
    const runs = gw.runs();
    expect(runs.map((d) => path.basename(d))).toEqual([expect.stringMatching(/^gateway-/), expect.stringMatching(/^gateway-/), "named-one"]);
    expect(runs.map(decisions)).toEqual([2, 1, 2]);
    // each run ended with its own run.end and verifies
    for (const d of runs) {
      const run = readRun(d, { checkBlobs: true });
      expect(run.problems.filter((p) => p.severity === "error")).toEqual([]);
      expect(new RunModel(run).events.at(-1)?.type).toBe("run.end");
    }
  });

  it("a slow call holds its run open: the gap counts from the last answer", async () => {
    // an upstream that answers only when released, so the call is in flight for as long as the test says
    const held: (() => void)[] = [];
    const up = http.createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        held.push(() => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id: "x",
              object: "chat.completion",
              model: "m",
              choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
            }),
          );
        }),
      );
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    open.push({ close: () => new Promise<void>((r) => up.close(() => r())) });
    let now = 0;
    const gw = await gateway({ upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`, outDir: tmp(), runGapMs: 1_000, now: () => now });
    const first = chat(gw.url, hello());
    await vi.waitFor(() => expect(held).toHaveLength(1));
    now += 5_000; // the clock passes the gap while the call is in flight
    const second = chat(gw.url, hello("You are the planner."));
    await vi.waitFor(() => expect(held).toHaveLength(2));
    for (const release of held) release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    await gw.close();
    expect(gw.runs()).toHaveLength(1);
    expect(decisions(gw.runs()[0])).toBe(2);
  });

  it("single-run mode: one run whatever x-causeway-run says and however long the pause", async () => {
    const llm = await fake();
    let now = 0;
    const gw = await gateway({
      upstream: llm.url,
      outDir: tmp(),
      runId: "only",
      singleRun: true,
      now: () => now,
      program: "python3 agent.py",
      meta: { command: ["python3", "agent.py"] },
    });
    await chat(gw.url, hello(), { "x-causeway-run": "elsewhere" });
    now += 10_000_000;
    await chat(gw.url, hello());
    await gw.close();
    expect(gw.runs().map((d) => path.basename(d))).toEqual(["only"]);
    const m = new RunModel(readRun(gw.runs()[0]));
    expect(m.decisions).toHaveLength(2);
    expect(m.start.program).toBe("python3 agent.py");
    expect(m.start.meta).toMatchObject({ recorded_by: "causeway gateway", command: ["python3", "agent.py"] });
  });

  it("takes only requests under its path prefix, and sends Anthropic requests to their own upstream", async () => {
    const openai = await fake();
    const anthropic = await fake();
    const gw = await gateway({ upstream: openai.url, anthropicUpstream: anthropic.url, outDir: tmp(), runId: "p", pathPrefix: "/s-secret123" });
    expect((await chat(gw.url, hello())).status).toBe(404);
    expect((await chat(`${gw.url}/s-other`, hello())).status).toBe(404);
    expect(openai.requests).toHaveLength(0);
    expect((await chat(`${gw.url}/s-secret123`, hello())).status).toBe(200);
    const msg = await fetch(`${gw.url}/s-secret123/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "c", max_tokens: 100, system: "You are the planner.", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(msg.status).toBe(200);
    await gw.close();
    expect(openai.requests.map((r) => r.path)).toEqual(["/v1/chat/completions"]);
    expect(anthropic.requests.map((r) => r.path)).toEqual(["/v1/messages"]);
    expect(decisions(gw.runs()[0])).toBe(2);
  });

  it("records tool results untrusted unless trusted, each named by its tool and arguments", async () => {
    const llm = await fake();
    const gw = await gateway({ upstream: llm.url, outDir: tmp(), runId: "t", trustedTools: ["lookup_order"] });
    const call = (id: string, name: string, args: unknown) => ({ id, type: "function", function: { name, arguments: JSON.stringify(args) } });
    const body = {
      model: "m",
      messages: [
        { role: "system", content: "You are the researcher." },
        { role: "user", content: "hello" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            call("a", "fetch_doc", { name: "vendor-note" }),
            call("b", "fetch_doc", { name: "refund-policy" }),
            call("c", "lookup_order", { id: 1042 }),
          ],
        },
        { role: "tool", tool_call_id: "a", content: "note" },
        { role: "tool", tool_call_id: "b", content: "policy" },
        { role: "tool", tool_call_id: "c", content: "order" },
      ],
    };
    expect((await chat(gw.url, body)).status).toBe(200);
    await gw.close();
    const m = new RunModel(readRun(gw.runs()[0]));
    expect(m.inputs.filter((i) => i.source.startsWith("tool:")).map((i) => `${i.source} ${i.trust}`)).toEqual([
      'tool:fetch_doc {"name":"vendor-note"} untrusted',
      'tool:fetch_doc {"name":"refund-policy"} untrusted',
    ]);
    expect(m.actions.map((a) => a.tool)).toEqual(["fetch_doc", "fetch_doc", "lookup_order"]);
    await expect(startGateway({ upstream: llm.url, outDir: tmp(), port: 0, trustedTools: ["x"], untrustedTools: ["x"] })).rejects.toThrow(
      /both trusted and untrusted/,
    );
  });
});
