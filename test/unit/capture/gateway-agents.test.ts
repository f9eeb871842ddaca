/**
 * Agents recorded through the gateway are named and linked as the preload names and links them:
 * each by the role its system prompt gives it (one API key for all), and one agent's output in
 * another's prompt, even wrapped in text, is a message between them with the output's trust, so a
 * program the gateway sees only as HTTP gets the same high alert as under the preload.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startGateway } from "../../../core/capture/gateway";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { investigate } from "../../../core/analysis/investigate";

const ROOT = path.resolve(__dirname, "../../..");

let llm: FakeLlm;
let tmp: string;
beforeAll(async () => {
  llm = await startFakeLlm({ followRate: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-gw-agents-"));
});
afterAll(async () => {
  await llm?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function run(cmd: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cmd, { cwd: ROOT, env: { ...process.env, ...env } });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code: code ?? 1, stderr }));
  });
}

describe("a three-agent program behind the gateway, its handoffs wrapped in text", () => {
  it("names each agent by its system prompt and records each handoff as a message, so the e-mail is a high alert", async () => {
    const out = path.join(tmp, "runs");
    const gw = await startGateway({ upstream: llm.url, outDir: out, port: 0, runId: "desk", sensitiveTools: ["send_email"], untrustedTools: ["fetch_doc"] });
    const outbox = path.join(tmp, "outbox.jsonl");
    const r = await run(["test/unit/register/fixtures/wrapped-handoff.mjs"], {
      OPENAI_BASE_URL: `${gw.url}/v1`,
      OPENAI_API_KEY: "one-key-for-all",
      SUPPORT_OUTBOX: outbox,
    });
    await gw.close();
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(outbox, "utf8")).toContain("vendor-compliance");
    const m = new RunModel(readRun(path.join(out, "desk")));
    const agents = m.events.filter((e) => e.type === "agent.start").map((e) => e.agent);
    expect(agents).toEqual(["researcher", "planner", "executor"]);
    const messages = m.events.filter((e) => e.type === "message") as unknown as { agent: string; to: string; trust: string; carried?: { grade: string } }[];
    expect(messages.map((e) => `${e.agent}->${e.to}`)).toEqual(["researcher->planner", "planner->executor"]);
    for (const msg of messages) {
      expect(msg.carried?.grade).toBe("substring");
      expect(msg.trust).toBe("untrusted");
    }
    const inv = investigate(readRun(path.join(out, "desk")));
    expect(inv.alerts.some((a) => a.severity === "high" && a.tool === "send_email")).toBe(true);
  }, 180_000);
});
