/**
 * Unmodified programs on the official clients and MCP, recorded with `causeway record -- COMMAND`
 * against the fake model server and replayed by test / attribute: the examples verify, Find the
 * cause names the vendor note alone, tools never run during replays, and bad input ends a test
 * with a clear error and leaves tests.jsonl untouched.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { ROOT, events, runCli } from "./cli";
import { runInWorker } from "../../../core/replay/client";
import { sha256File } from "../../../core/replay/approval";
import { programModule } from "../../../extension/logic/sites";

const OPENAI = "node examples/support-agents/openai-agent.mjs";
const ANTHROPIC = "node examples/support-agents/anthropic-agent.cjs";
const VENDOR = 'input:mcp:support-desk/fetch_doc {"name":"vendor-note"}';
const FAQ = 'input:mcp:support-desk/fetch_doc {"name":"shipping-faq"}';
const TARGET = "tool=send_email,arg~vendor-compliance";

let llm: FakeLlm;
/** The CLI run as a child process, the clients pointed at this file's fake server. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);

let tmp: string;

beforeAll(async () => {
  llm = await startFakeLlm({ followRate: 0.8 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-unmodified-"));
});
afterAll(async () => {
  await llm?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("an unmodified OpenAI + MCP program", () => {
  const outbox = () => path.join(tmp, "outbox-openai.jsonl");
  let run: string;

  it("is recorded with no code change into a run that verifies", async () => {
    // seed 2: the fake model follows the vendor note's instruction in this recording
    const r = await cli(
      [
        "record",
        "--out",
        path.join(tmp, "runs"),
        "--seed",
        "2",
        "--sensitive",
        "send_email",
        "--trusted-tool",
        "send_email",
        "--trusted-tool",
        "issue_refund",
        "--run-id",
        "openai",
        "--",
        "node",
        "examples/support-agents/openai-agent.mjs",
      ],
      {
        SUPPORT_OUTBOX: outbox(),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    run = r.stdout.trim().split("\n").pop()!;
    expect(run).toBe(path.join(tmp, "runs", "openai"));
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    const start = ev[0];
    expect(start.program).toBe(OPENAI);
    expect(JSON.stringify(start)).not.toContain("127.0.0.1"); // no environment values
    const sources = ev.filter((e) => e.type === "input").map((e) => e.source);
    for (const doc of ["ticket-881", "refund-policy", "vendor-note", "shipping-faq"]) expect(sources).toContain(`mcp:support-desk/fetch_doc {"name":"${doc}"}`);
    expect(new Set(ev.filter((e) => e.type === "agent.start").map((e) => e.agent))).toEqual(new Set(["researcher", "planner", "executor"]));
    expect(ev.filter((e) => e.type === "message").map((e) => `${e.agent}->${e.to}`)).toEqual(["researcher->planner", "planner->executor"]);
    // sites point at the program's own calls
    const decision = ev.find((e) => e.type === "decision");
    expect(decision!.site.file).toBe("examples/support-agents/openai-agent.mjs");
    expect(ev.find((e) => e.type === "action")!.site.file).toBe("examples/support-agents/openai-agent.mjs");
    // tool calls are linked to the decision that asked for them
    for (const a of ev.filter((e) => e.type === "action")) expect(a.decision).toMatch(/.+/);
    const sent = fs.readFileSync(outbox(), "utf8");
    expect(sent).toContain("audit@vendor-compliance.example");
  }, 120_000);

  it("Find the cause names the vendor note alone, and no tool runs during replays", async () => {
    fs.rmSync(outbox(), { force: true });
    const r = await cli(["attribute", run, "--target", TARGET, "--allow-program", OPENAI, "--workers", "4", "--json"], { SUPPORT_OUTBOX: outbox() });
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([VENDOR]);
    expect(a.causes[0].role).toBe("primary");
    expect(a.suspects).toContain(FAQ);
    expect(a.joint).toEqual([]);
    // the replays served send_email from the tape: the outbox was never written
    expect(fs.existsSync(outbox())).toBe(false);
    expect(fs.readFileSync(path.join(run, "tests.jsonl"), "utf8").trim().split("\n").length).toBeGreaterThan(1);
  }, 1_800_000);

  it("replays without the FAQ identically: tools from the tape, no off-tape calls", async () => {
    const r = await cli(["test", run, "--remove", FAQ, "--target", TARGET, "--n", "4", "--allow-program", OPENAI, "--workers", "4", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout);
    expect(t.intervention_applied_in).toBe(4);
    expect(t.pair_flips).toEqual({ removed: 0, added: 0 }); // same seed per pair: the FAQ changes nothing
    expect(t.off_tape_actions).toBe(0);
  }, 300_000);

  it("is replayed by the extension's worker once the command is allowed", async () => {
    expect(programModule(OPENAI)).toBe("examples/support-agents/openai-agent.mjs");
    const file = path.join(ROOT, "examples/support-agents/openai-agent.mjs");
    const approval = { program: OPENAI, file, sha256: sha256File(file) };
    const req = { op: "test" as const, run, program: OPENAI, root: ROOT, approval, intervention: VENDOR, target: TARGET, n: 3, workers: 3 };
    const t = (await runInWorker(req, {
      workerPath: path.join(ROOT, "dist/worker.js"),
      env: { OPENAI_BASE_URL: llm.openaiBaseURL, OPENAI_API_KEY: "fake" },
    })) as Record<string, any>;
    expect(t.n).toBe(3);
    expect(t.p_without).toBe(0);
    await expect(runInWorker({ ...req, approval: undefined }, { workerPath: path.join(ROOT, "dist/worker.js") })).rejects.toThrow(/is not approved/);
  }, 300_000);

  it("never runs a command that was not allowed: it replays without the program, and says how to allow it", async () => {
    const sent = () => (fs.existsSync(outbox()) ? fs.readFileSync(outbox(), "utf8") : "");
    const before = sent();
    const r = await cli(["test", run, "--remove", FAQ, "--target", TARGET, "--n", "2", "--json"], { SUPPORT_OUTBOX: outbox() });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rung).toBe(2);
    expect(r.stderr).toContain(`--allow-program '${OPENAI}'`);
    expect(sent()).toBe(before);
  });
});

describe("an unmodified Anthropic + MCP program (CommonJS, streaming, an MCP resource)", () => {
  it("is recorded into a run that verifies, and removing the vendor note stops the exfiltration", async () => {
    const outbox = path.join(tmp, "outbox-anthropic.jsonl");
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
        "anthropic",
        "--",
        "node",
        "examples/support-agents/anthropic-agent.cjs",
      ],
      {
        SUPPORT_OUTBOX: outbox,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const run = r.stdout.trim().split("\n").pop()!;
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    expect(ev[0].program).toBe(ANTHROPIC);
    expect(ev.filter((e) => e.type === "input").map((e) => e.source)).toContain("support://docs/ticket-881");
    const researcher = ev.find((e) => e.type === "decision" && e.agent === "researcher");
    expect(researcher!.context.map((c: { source: string }) => c.source)).toContain("support://docs/ticket-881");
    expect(ev.filter((e) => e.type === "decision" && e.agent === "executor").length).toBeGreaterThan(0);
    const exfiltrated = fs.readFileSync(outbox, "utf8").includes("vendor-compliance");
    fs.rmSync(outbox, { force: true });
    const t = await cli(["test", run, "--remove", VENDOR, "--target", TARGET, "--n", "8", "--allow-program", ANTHROPIC, "--workers", "4", "--json"], {
      SUPPORT_OUTBOX: outbox,
    });
    expect(t.code, t.stderr).toBe(0);
    const res = JSON.parse(t.stdout);
    expect(res.p_without).toBe(0);
    if (exfiltrated) expect(res.p_with).toBeGreaterThan(0);
    expect(res.off_tape_by_arm.with).toBe(0);
    expect(fs.existsSync(outbox)).toBe(false);
  }, 600_000);
});

describe("tools the program runs in its own code, declared with --tool", () => {
  for (const ext of ["mjs", "cjs"]) {
    it(`are recorded and served from the tape in replays (${ext === "mjs" ? "ES module" : "CommonJS"})`, async () => {
      const marker = path.join(tmp, `marker-${ext}`);
      const prog = `node test/unit/register/fixtures/declared-tools.${ext}`;
      const r = await cli(
        [
          "record",
          "--out",
          path.join(tmp, "runs"),
          "--seed",
          "1",
          "--run-id",
          `declared-${ext}`,
          "--tool",
          `test/unit/register/fixtures/tools.${ext}:fetch_page,send_email`,
          "--",
          ...prog.split(" "),
        ],
        { MARKER: marker },
      );
      expect(r.code, r.stderr).toBe(0);
      const run = path.join(tmp, "runs", `declared-${ext}`);
      const ev = events(run);
      expect(ev.at(-1)!.outcome).toEqual({ exit_code: 0 }); // nothing uncaptured
      expect(ev.filter((e) => e.type === "input").map((e) => e.source)).toContain('tool:fetch_page {"url":"https://vendor.example/notes"}');
      expect(fs.readFileSync(marker, "utf8")).toContain("attacker@evil.example");
      fs.rmSync(marker);
      const t = await cli(
        [
          "test",
          run,
          "--remove",
          "input:tool:fetch_page*",
          "--target",
          "tool=send_email,arg~evil.example",
          "--n",
          "4",
          "--workers",
          "4",
          "--allow-program",
          prog,
          "--json",
        ],
        { MARKER: marker },
      );
      expect(t.code, t.stderr).toBe(0);
      const res = JSON.parse(t.stdout);
      expect(res.intervention_applied_in).toBe(4);
      expect(res.p_without).toBe(0);
      // the fake model's e-mail body summarises every result so far, so an arm that e-mails in
      // another order makes calls the recording never made: stubbed, never run
      expect(fs.existsSync(marker)).toBe(false); // send_email never ran in a replay
    }, 180_000);
  }
});

describe("the preload on its own", () => {
  it("records the responses API and a streamed chat completion, and the program reads both as usual", async () => {
    const out = path.join(tmp, "standalone");
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", path.join(ROOT, "dist/register.js"), "test/unit/register/fixtures/responses-and-stream.mjs"], {
        cwd: ROOT,
        env: { ...process.env, CAUSEWAY_OUT: out, CAUSEWAY_RUN_ID: "standalone", OPENAI_BASE_URL: llm.openaiBaseURL, OPENAI_API_KEY: "fake" },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    const said = JSON.parse(r.stdout);
    expect(said.responses).toBe("How can I help?");
    expect(said.chat).toBe("How can I help?");
    const run = path.join(out, "standalone");
    expect((await cli(["verify", run])).code).toBe(0);
    const ev = events(run);
    expect(ev[0].program).toBe("node test/unit/register/fixtures/responses-and-stream.mjs");
    const decisions = ev.filter((e) => e.type === "decision");
    expect(decisions.map((d) => [d.agent, d.api])).toEqual([
      ["writer", "openai.responses"],
      ["streamer", "openai.chat"],
    ]);
    expect(decisions.every((d) => d.status === "ok" && d.site?.file === "test/unit/register/fixtures/responses-and-stream.mjs")).toBe(true);
  }, 60_000);
});

describe("bad input", () => {
  it("a tool run in the program's own code marks the run; replaying it is refused without --live-tools", async () => {
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "local", "--", "node", "test/unit/register/fixtures/local-tool.mjs"]);
    expect(r.code, r.stderr).toBe(0);
    const run = path.join(tmp, "runs", "local");
    expect(events(run).pop()!.outcome.uncaptured_tool_calls).toEqual(["fetch_page", "send_email"]);
    const t = await cli([
      "test",
      run,
      "--remove",
      "untrusted",
      "--target",
      "tool=send_email",
      "--n",
      "2",
      "--allow-program",
      "node test/unit/register/fixtures/local-tool.mjs",
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("did not intercept (fetch_page, send_email)");
    expect(fs.existsSync(path.join(run, "tests.jsonl"))).toBe(false);
  }, 120_000);

  it("a program that exits non-zero or hangs in a replay ends the test with an error; tests.jsonl untouched", async () => {
    const fail = path.join(tmp, "fail-flag");
    const hang = path.join(tmp, "hang-flag");
    const prog = "node test/unit/register/fixtures/fails-in-replay.mjs";
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "fails", "--", ...prog.split(" ")], { FAIL_FLAG: fail, HANG_FLAG: hang });
    expect(r.code, r.stderr).toBe(0);
    const run = path.join(tmp, "runs", "fails");
    fs.writeFileSync(fail, "");
    const t = await cli(["test", run, "--remove", "input:user", "--target", "agent=greeter", "--n", "2", "--allow-program", prog], { FAIL_FLAG: fail });
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("exited with code 3");
    fs.writeFileSync(hang, "");
    const h = await cli(["test", run, "--remove", "input:user", "--target", "agent=greeter", "--n", "2", "--allow-program", prog], {
      HANG_FLAG: hang,
      CAUSEWAY_REPLAY_TIMEOUT_MS: "4000",
    });
    expect(h.code).toBe(1);
    expect(h.stderr).toContain("did not finish within 4 s");
    expect(fs.existsSync(path.join(run, "tests.jsonl"))).toBe(false);
  }, 120_000);
});
