/**
 * Handoffs however the program builds them: an agent's prompt that carries an earlier agent's
 * output inside other text is a message between them, with the trust of what it carries, so the
 * alert fires and Find the cause tests the document upstream instead of blaming the prompt.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { events, runCli } from "./cli";
import { findCarried, MIN_WORDS } from "../../../core/adapters/handoffs";
import { formatAttribution } from "../../../core/cli/output";

const PROGRAM = "node test/unit/register/fixtures/wrapped-handoff.mjs";
const VENDOR = 'input:mcp:support-desk/fetch_doc {"name":"vendor-note"}';
const TARGET = "tool=send_email,arg~vendor-compliance";

describe("findCarried", () => {
  const brief = "Order 1042 arrived damaged; the refund policy allows a full refund within 30 days.";
  it("finds an output wrapped in text verbatim, and a trimmed one by a long run of words", () => {
    expect(findCarried(`Brief from the researcher:\n${brief}\nThanks.`, [{ text: brief, of: "r" }])).toEqual({
      of: "r",
      grade: "substring",
      size: brief.length,
    });
    const long = "the customer says order 1042 arrived damaged and asks for a refund under the policy for damaged goods today";
    const trimmed = `Summary: ${long
      .split(" ")
      .slice(2, 2 + MIN_WORDS + 1)
      .join(" ")}. Act on it.`;
    expect(findCarried(trimmed, [{ text: long, of: "r" }])).toMatchObject({ of: "r", grade: "inferred" });
  });
  it("ignores short outputs and unrelated text, and prefers verbatim evidence", () => {
    expect(findCarried("Done. Send the email.", [{ text: "Done.", of: "x" }])).toBeUndefined();
    expect(findCarried("Something else entirely, nothing shared with the brief at all.", [{ text: brief, of: "r" }])).toBeUndefined();
    const other = "an unrelated output that is long enough to count but appears nowhere in the block";
    expect(
      findCarried(`Note: ${brief}`, [
        { text: other, of: "o" },
        { text: brief, of: "r" },
      ])?.of,
    ).toBe("r");
  });
});

describe("a program that wraps its handoffs in text", () => {
  let llm: FakeLlm;
  let tmp: string;
  let run: string;
  const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);
  const outbox = () => path.join(tmp, "outbox.jsonl");

  beforeAll(async () => {
    llm = await startFakeLlm({ followRate: 0.8 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-handoffs-"));
  });
  afterAll(async () => {
    await llm?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("records each wrapped handoff as a message with its evidence and the trust of what it carries", async () => {
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
        "wrapped",
        "--",
        ...PROGRAM.split(" "),
      ],
      { SUPPORT_OUTBOX: outbox() },
    );
    expect(r.code, r.stderr).toBe(0);
    run = r.stdout.trim().split("\n").pop()!;
    expect((await cli(["verify", run])).code).toBe(0);
    expect(fs.readFileSync(outbox(), "utf8")).toContain("audit@vendor-compliance.example");
    const ev = events(run);
    const messages = ev.filter((e) => e.type === "message");
    expect(messages.map((e) => `${e.agent}->${e.to}`)).toEqual(["researcher->planner", "planner->executor"]);
    for (const m of messages) {
      expect(m.carried).toMatchObject({ grade: "substring" });
      expect(m.trust).toBe("untrusted"); // the researcher read the vendor note
    }
    // the executor's prompt is that message, not a trusted user input
    const exec = ev.find((e) => e.type === "decision" && e.agent === "executor")!;
    expect(exec.context.map((c: { kind: string }) => c.kind)).toContain("message");
    expect(ev.some((e) => e.type === "input" && e.agent === "executor" && e.source === "user")).toBe(false);
    const alerts = JSON.parse((await cli(["alerts", run, "--json"])).stdout);
    expect(alerts.some((a: { severity: string; tool?: string }) => a.severity === "high" && a.tool === "send_email")).toBe(true);
  }, 300_000);

  it("an unchanged replay of the program is identical: decisions, tool calls and messages in order", async () => {
    const r = await cli(["replay", run, "--allow-program", PROGRAM, "--json"], { SUPPORT_OUTBOX: outbox() + ".replay" });
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.diffs).toEqual([]);
    expect(d.offTape).toBe(0);
    // without the vendor note the program is replayed to a different end, and the diff says where
    const v = JSON.parse((await cli(["replay", run, "--remove", VENDOR, "--allow-program", PROGRAM, "--json"])).stdout);
    expect(v.diffs.length).toBeGreaterThan(0);
    expect(v.diffs.some((x: { at: [string, string, number] }) => x.at[0] === "researcher" && x.at[1] === "decision")).toBe(true);
    expect(fs.existsSync(outbox() + ".replay")).toBe(false); // served from the tape
  }, 300_000);

  it("Find the cause names the vendor note alone, never the prompt that carried its words", async () => {
    fs.rmSync(outbox(), { force: true });
    const r = await cli(["attribute", run, "--target", TARGET, "--allow-program", PROGRAM, "--workers", "4", "--json"], { SUPPORT_OUTBOX: outbox() });
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([VENDOR]);
    expect(a.causes[0].role).toBe("primary");
    expect(a.suspects.some((s: string) => s.startsWith("input:user"))).toBe(false);
    // no trusted prompt is a cause, and the chain holds every hop, root → action, each with its own causal test
    expect(a.causes.some((c: { spec: string }) => /^input:(user|system)/.test(c.spec))).toBe(false);
    expect(a.chain.map((h: { from: string; to: string }) => [h.from, h.to])).toEqual([
      [VENDOR, "msg:researcher->planner"],
      ["msg:researcher->planner", "msg:planner->executor"],
      ["msg:planner->executor", TARGET],
    ]);
    for (const h of a.chain) expect([h.test.intervention, h.test.verdict]).toEqual([h.from, "causal"]);
    // each hop is a child of the test before it in the tree: never more alpha than its parent
    const alphas = a.chain.map((h: { test: { alpha: number } }) => h.test.alpha);
    for (let i = 1; i < alphas.length; i++) expect(alphas[i]).toBeLessThanOrEqual(alphas[0] + 1e-12);
    expect(a.tests.filter((t: { phase: string }) => t.phase === "chain").map((t: { intervention: string }) => t.intervention)).toEqual([
      "msg:researcher->planner",
      "msg:planner->executor",
    ]);
    expect(a.summary).toContain(`through the handoffs ${VENDOR} → msg:researcher->planner → msg:planner->executor → ${TARGET}`);
    expect(fs.existsSync(outbox())).toBe(false); // no replay ran the real send_email
    // the text output prints the chain, and the case file (read back from tests.jsonl) shows it
    expect(formatAttribution(a).join("\n")).toMatch(
      /handoff chain \(root → action\)[^]*msg:planner->executor → tool=send_email,arg~vendor-compliance {2}CAUSAL/,
    );
    const c = await cli(["case", run, "--target", TARGET]);
    expect(c.code, c.stderr).toBe(0);
    const md = c.stdout;
    expect(md).toContain("How its words reached the action");
    expect(md).toMatch(/`msg:researcher->planner` → `msg:planner->executor`/);
    // the messages that carried the words are hops there, not causes
    expect(md.split("## Contributing")[0]).not.toMatch(/\*\*msg:/);
  }, 1_800_000);
});
