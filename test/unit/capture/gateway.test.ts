/**
 * The recording gateway: the same agent recorded through it (a plain client whose base URL is the
 * gateway) gives the same graph as when recorded by the SDK adapter — see signature.ts for what
 * "the same" covers — for OpenAI and Anthropic, plain and streamed. Also: agents named by API-key
 * label without the key ever being written, decision replay of a gateway-recorded call, refusals.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { startGateway, type Gateway } from "../../../core/capture/gateway";
import { endpointDecisionTest } from "../../../core/replay/endpoint-test";
import * as openaiAgent from "../../../examples/openai-agent/agent";
import * as anthropicAgent from "../../../examples/anthropic-agent/agent";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { byToolName, graphSignature } from "./signature";

const open: { close(): Promise<void> }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-gateway-"));
  dirs.push(d);
  return d;
};
async function fake(): Promise<FakeLlm> {
  const f = await startFakeLlm();
  open.push(f);
  return f;
}
async function gateway(upstream: string, out: string, extra: Partial<Parameters<typeof startGateway>[0]> = {}): Promise<Gateway> {
  const g = await startGateway({
    upstream,
    outDir: out,
    port: 0,
    runId: "gw",
    sensitiveTools: ["send_email"],
    untrustedTools: ["fetch_page"],
    trustedTools: ["send_email"],
    ...extra,
  });
  open.push(g);
  return g;
}

describe("gateway", () => {
  for (const stream of [false, true]) {
    it(`OpenAI: the agent recorded through the gateway gives the adapter's graph (${stream ? "streamed" : "plain"})`, async () => {
      const viaAdapter = await openaiAgent.runOpenAIAgent({
        client: new OpenAI({ baseURL: (await fake()).openaiBaseURL, apiKey: "k", maxRetries: 0 }),
        out: tmp(),
      });
      const upstream = await fake();
      const out = tmp();
      const gw = await gateway(upstream.url, out);
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "k", maxRetries: 0, defaultHeaders: { "x-causeway-agent": "support" } });
      const answer = await openaiAgent.runPlainAgent(client, { stream });
      expect(answer).toMatch(/^Done\./);
      await gw.close();
      const [dir] = gw.runs();
      expect(readRun(dir, { checkBlobs: true }).problems.filter((p) => p.severity === "error")).toEqual([]);
      const sig = graphSignature(dir);
      // each result named by its tool and arguments, as the preload names them
      expect(sig.inputs.some((i) => i.includes('tool:fetch_page {"url":"https://vendor.example/notes"} untrusted'))).toBe(true);
      expect(byToolName(sig)).toEqual(graphSignature(viaAdapter.dir));
      expect(sig.alerts.filter((a) => a.startsWith("high"))).toHaveLength(1);
      // streamed responses went through to the client as server-sent events
      expect(upstream.requests.every((r) => !!r.body.stream === stream)).toBe(true);
    });
  }

  it("Anthropic: the agent recorded through the gateway gives the adapter's graph, and its calls replay", async () => {
    const viaAdapter = await anthropicAgent.runAnthropicAgent({
      client: new Anthropic({ baseURL: (await fake()).anthropicBaseURL, apiKey: "k", maxRetries: 0 }),
      out: tmp(),
    });
    const upstream = await fake();
    const gw = await gateway(upstream.url, tmp());
    const client = new Anthropic({ baseURL: gw.url, apiKey: "k", maxRetries: 0, defaultHeaders: { "x-causeway-agent": "support" } });
    await anthropicAgent.runPlainAgent(client, { stream: true });
    await gw.close();
    const [dir] = gw.runs();
    expect(byToolName(graphSignature(dir))).toEqual(graphSignature(viaAdapter.dir));
    // a call the gateway recorded is re-sent without the page: the page is confirmed as the cause
    const m = new RunModel(readRun(dir));
    const exfil = m.actions.find((a) => m.canonical(a.args_ref).includes("attacker@evil.example"))!;
    const seq = m.decisions.find((d) => d.id === exfil.decision)!.seq;
    const r = await endpointDecisionTest(readRun(dir), {
      decision: seq,
      intervention: "input:tool:fetch_page*",
      target: "tool=send_email,arg~evil.example",
      n: 20,
      baseUrl: upstream.anthropicBaseURL,
      apiKey: "k",
    });
    expect(r.verdict).toBe("causal");
  });

  it("names agents by header or by API-key label, and never writes the key", async () => {
    const upstream = await fake();
    const out = tmp();
    const gw = await gateway(upstream.url, out, { agentKeys: { researcher: "sk-labelled-secret" } });
    const ask = (apiKey: string, headers: Record<string, string> = {}) =>
      new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0, defaultHeaders: headers }).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      });
    await ask("sk-labelled-secret");
    await ask("sk-other-secret");
    await ask("sk-other-secret", { "x-causeway-agent": "planner", "x-causeway-run": "second" });
    await gw.close();
    const runs = gw.runs().map((d) => new RunModel(readRun(d)));
    expect(runs.map((m) => path.basename(m.run.dir)).sort()).toEqual(["gw", "second"]);
    const agents = (m: RunModel) => m.events.filter((e) => e.type === "agent.start").map((e) => e.agent);
    const gwRun = runs.find((m) => m.run.dir.endsWith("gw"))!;
    expect(agents(gwRun)[0]).toBe("researcher");
    expect(agents(gwRun)[1]).toMatch(/^key-[0-9a-f]{8}$/);
    expect(agents(runs.find((m) => m.run.dir.endsWith("second"))!)).toEqual(["planner"]);
    for (const f of walk(out)) expect(fs.readFileSync(f, "utf8")).not.toMatch(/sk-(labelled|other)-secret/);
  });

  it("refuses non-loopback Host headers, oversized bodies and absolute URLs; passes other paths through unrecorded", async () => {
    const upstream = await fake();
    const gw = await gateway(upstream.url, tmp(), { maxBodyBytes: 1000 });
    expect((await post(gw.port, "/v1/chat/completions", "{}", { host: "evil.example" })).status).toBe(403);
    expect((await post(gw.port, "/v1/chat/completions", JSON.stringify({ pad: "x".repeat(5000) }))).status).toBe(413);
    expect((await post(gw.port, "http://evil.example/v1/chat/completions", "{}")).status).toBe(400); // not a forward proxy
    expect((await post(gw.port, "/v1/unknown", "{}", { authorization: "Bearer k" })).status).toBe(404); // the upstream's answer
    await gw.close();
    expect(gw.runs()).toEqual([]);
  });
});

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function post(port: number, p: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: p, method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
