// @vitest-environment happy-dom
/** @jsxImportSource preact */
// What the Why screen says agrees with the run and its tests: inputs a group test covered show that
// test's verdict and n (labelled as a group test); a run with no untrusted input never calls its
// inputs "untrusted roots"; how a test was run (rung, assumptions, off-tape actions) and Find the
// cause's chain show when a record carries them, and nothing changes when it does not.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { Investigation } from "../../../core/analysis/types";
import { investigate } from "../../../core/analysis/investigate";
import { readRun } from "../../../core/log/reader";
import { appendTest } from "../../../core/log/testslog";
import { System, type Runtime } from "../../../core/index";
import { EXFIL_TARGET } from "../../../core/cli/demo";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { jobOutcome } from "../../../webview/logic";
import { ScriptedHost, VSCODE, mount, step, text, withText } from "./fixture";

const NOTE = "input:vendor:portal/notes.md";
const TICKET = "input:inbox:ticket-881";
let demoDir: string;
let grouped: Investigation;
let plain: Investigation;

beforeAll(async () => {
  const DEMO = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
  demoDir = (await DEMO.run({ seed: 0, outDir: fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-truth-")), runId: "demo-seed0" })).dir!;
  plain = investigate(readRun(demoDir));
  const base = { target: EXFIL_TARGET, p_with: 0.95, scope: "run" };
  // Find the cause's group test: the two inputs other than the note, removed together, ruled out
  appendTest(demoDir, {
    ...base,
    intervention: `${TICKET} | input:kb:refund_policy.md`,
    group: [TICKET, "input:kb:refund_policy.md"],
    n: 30,
    p_without: 0.95,
    effect: 0,
    ci: [-0.08, 0.08],
    verdict: "ruled-out",
  });
  // the note's own test, with how it was run
  appendTest(demoDir, {
    ...base,
    intervention: NOTE,
    n: 20,
    p_without: 0.05,
    effect: 0.9,
    ci: [0.7, 1],
    verdict: "causal",
    role: "primary",
    rung: 2,
    assumptions: ["Tool results are the recorded ones.", "The model answers as it did when recorded."],
    off_tape_actions: 1,
  });
  // an old record: off-tape actions counted, no rung or assumptions
  appendTest(demoDir, {
    ...base,
    intervention: "input:web:shipping_faq",
    n: 20,
    p_without: 0.9,
    effect: 0.05,
    ci: [-0.1, 0.15],
    verdict: "ruled-out",
    off_tape_actions: 5,
  });
  grouped = investigate(readRun(demoDir));
}, 120_000);

function open(inv: Investigation, run: string, pick?: string) {
  const host = new ScriptedHost(VSCODE, { screen: "why", run });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({ type: "workspace", workspace: { schema: "causeway.workspace.v1", runs: [inv.summary], influence: { sources: [], edges: [] } as never } });
  host.send({ type: "investigation", run, investigation: inv });
  if (pick) step(() => withText(root, ".why-item", pick)[0].click());
  return { root, host };
}

const rowOf = (root: HTMLElement, spec: string) =>
  [...root.querySelectorAll(".cand")].find((r) => text(r.querySelector(".cell-sub.mono")) === spec) as HTMLElement | undefined;

describe("inputs a group test covered", () => {
  test("show the group test's verdict and n, labelled as a group test, not Not tested", () => {
    const { root } = open(grouped, "demo-seed0", "#18");
    const ticket = rowOf(root, TICKET)!;
    expect(ticket).toBeDefined();
    expect(ticket.className).toContain("status-ruled-out");
    expect(text(ticket)).not.toContain("Not tested");
    expect(text(ticket.querySelector(".group-test"))).toBe("group test of 2: ruled out");
    expect(text(ticket)).toContain("30 (group)");
    expect(text(ticket)).toContain("[\u22120.08, +0.08]");
    // before the group test, the same row was untested
    const before = open(plain, "demo-seed0", "#18").root;
    expect(rowOf(before, TICKET)!.className).toContain("status-untested");
  });

  test("a causal group decides no member on its own, and a group with suspects put back decides nothing", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-group-"));
    fs.cpSync(demoDir, dir, { recursive: true });
    fs.rmSync(path.join(dir, "tests.jsonl"), { force: true });
    const base = { target: EXFIL_TARGET, p_with: 0.95, scope: "run", n: 30 };
    appendTest(dir, { ...base, intervention: `${NOTE} | ${TICKET}`, group: [NOTE, TICKET], p_without: 0.1, effect: 0.85, ci: [0.6, 1], verdict: "causal" });
    appendTest(dir, {
      ...base,
      intervention: "input:kb:refund_policy.md",
      group: ["input:kb:refund_policy.md"],
      baseline: NOTE,
      p_without: 0.95,
      effect: 0,
      ci: [-0.05, 0.05],
      verdict: "ruled-out",
    });
    const a = Object.values(investigate(readRun(dir)).actions).find((x) => x.seq === 18)!;
    const note = a.candidates.find((c) => c.intervention === NOTE)!;
    expect(note.status).toBe("inconclusive");
    expect(note.test).toMatchObject({ n: 30, verdict: "causal", group: [NOTE, TICKET] });
    expect(a.candidates.find((c) => c.intervention === "input:kb:refund_policy.md")!.status).toBe("untested");
  });
});

describe("how a test was run", () => {
  test("shows the rung, the off-tape actions and the assumptions when the record has them; nothing on old records", () => {
    const { root } = open(grouped, "demo-seed0", "#18");
    const how = rowOf(root, NOTE)!.querySelector(".how-tested")!;
    expect(text(how)).toContain("rung 2: agentless re-simulation");
    expect(text(how)).toContain("1 off-tape action");
    expect(text(how.querySelector("summary"))).toBe("2 assumptions");
    expect([...how.querySelectorAll("li")].map((li) => text(li))).toEqual([
      "Tool results are the recorded ones.",
      "The model answers as it did when recorded.",
    ]);
    // the group test's row, an old record's (off-tape actions but no rung) and an old run's: nothing about how
    expect(rowOf(root, TICKET)!.querySelector(".how-tested")).toBeNull();
    expect(rowOf(root, "input:web:shipping_faq")!.className).toContain("status-ruled-out");
    expect(rowOf(root, "input:web:shipping_faq")!.querySelector(".how-tested")).toBeNull();
    expect(open(plain, "demo-seed0", "#18").root.querySelector(".how-tested")).toBeNull();
  });

  test("a hostile record's fields are read as data: unknown rungs, non-text assumptions and bad counts are left out", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-hostile-"));
    fs.cpSync(demoDir, dir, { recursive: true });
    fs.rmSync(path.join(dir, "tests.jsonl"), { force: true });
    const long = "x".repeat(5000);
    appendTest(dir, {
      target: EXFIL_TARGET,
      intervention: NOTE,
      n: 20,
      p_with: 0.9,
      p_without: 0.1,
      effect: 0.8,
      ci: [0.6, 1],
      verdict: "causal",
      scope: "run",
      rung: "3",
      assumptions: ["<img src=x onerror=alert(1)>", { toString: 1 }, 7, long],
      off_tape_actions: -4,
    });
    const inv = investigate(readRun(dir));
    const t = Object.values(inv.actions)
      .find((x) => x.seq === 18)!
      .candidates.find((c) => c.intervention === NOTE)!.test!;
    expect(t.rung).toBeUndefined();
    expect(t.off_tape_actions).toBeUndefined();
    expect(t.assumptions).toHaveLength(2);
    expect(t.assumptions![1].length).toBeLessThan(500);
    const { root } = open(inv, "demo-seed0", "#18");
    // shown as text, never as markup
    expect(root.querySelector("img")).toBeNull();
    expect(text(rowOf(root, NOTE)!.querySelector(".how-assumptions"))).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("trust labels", () => {
  // a gateway-recorded run: the system prompt, the user's message and the tool list, all trusted
  const gatewayLike = () =>
    new System({
      name: "gateway-like",
      task: "Send the weekly summary.",
      sensitiveTools: ["send_email"],
      models: { m: () => ({ calls: [{ tool: "send_email", args: { to: "team@example.com" } }] }) },
      tools: { send_email: ({ to }: { to: string }) => ({ queued: to }) },
      program: async (rt: Runtime) => {
        const a = rt.agent("assistant");
        const items = ["system", "user", "tools"].map((s) => a.observe(`the ${s} part of the request`, { source: s, trust: "trusted" }));
        const d = await a.decide(items, { model: "m", purpose: "reply" });
        await a.act("send_email", { to: "team@example.com" }, { decision: d });
      },
    });

  test("a run with no untrusted input never calls its inputs untrusted roots", async () => {
    const r = await gatewayLike().run({ seed: 0, outDir: fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-trust-")), runId: "gw" });
    const inv = investigate(readRun(r.dir!));
    const { root } = open(inv, "gw");
    const why = root.querySelector(".why-main")!;
    expect(text(why.querySelector(".verdict"))).toBe("No untrusted input reached send_email.");
    expect(text(why)).not.toMatch(/untrusted root/i);
    expect(text(why.querySelector(".lineage-label"))).toBe("3 inputs");
    const roots = [...why.querySelectorAll(".lineage-roots .step.root")];
    expect(roots.map((b) => text(b))).toEqual(["system trusted", "user trusted", "tools trusted"]);
    expect(why.querySelectorAll(".step.untrusted")).toHaveLength(0);
    expect(text(why)).toContain("no untrusted input reached it: recorded path from every input");
  });

  test("a run with untrusted inputs labels its roots untrusted, as its verdict counts them", () => {
    const { root } = open(plain, "demo-seed0", "#18");
    const why = root.querySelector(".why-main")!;
    expect(text(why)).toMatch(/untrusted root/i);
    for (const b of why.querySelectorAll(".lineage-roots .step.root")) {
      expect(b.className).toContain("untrusted");
      expect(text(b)).toMatch(/untrusted$/);
    }
  });
});

describe("Find the cause's chain", () => {
  const hop = (from: string, to: string, verdict: string, effect: number, n: number, extra: Record<string, unknown> = {}) => ({
    from,
    to,
    test: { verdict, role: verdict === "causal" ? "primary" : undefined, effect, ci: [effect - 0.2, Math.min(1, effect + 0.1)], n, ...extra },
  });

  test("is shown root → action with each hop's verdict", () => {
    const { root, host } = open(grouped, "demo-seed0", "#18");
    step(() => withText(root, "button", "Find the cause")[0].click());
    const ask = host.last("findCause")!;
    const chain = [
      hop(NOTE, "msg:researcher->executor", "causal", 0.9, 20, { rung: 1 }),
      hop("msg:researcher->executor", "executor · act", "causal", 0.85, 20, { rung: 2, assumptions: ["The researcher's other messages are unchanged."] }),
      hop("executor · act", "send_email", "causal", 0.8, 20),
    ];
    host.send({
      type: "result",
      requestId: ask.requestId,
      ok: true,
      kind: "attribution",
      result: { summary: "primary cause input:vendor:portal/notes.md (+0.90)", causes: [], chain },
    });
    const steps = [...root.querySelectorAll(".cause-chain .chain-step")].map((li) => text(li.querySelector(":scope > code")));
    expect(steps).toEqual(["vendor:portal/notes.md", "researcher \u2192 executor", "executor · act", "send_email"]);
    const hops = [...root.querySelectorAll(".cause-chain .chain-hop")].map((h) => text(h));
    expect(hops).toEqual([
      "Primary cause +0.90 [+0.70, +1.00] n = 20",
      "Primary cause +0.85 [+0.65, +0.95] n = 20",
      "Primary cause +0.80 [+0.60, +0.90] n = 20",
    ]);
    expect(text(root.querySelector(".cause-chain"))).toContain("rung 2: agentless re-simulation");
  });

  test("a malformed chain is read defensively; an attribution without one shows no chain", () => {
    const o = jobOutcome("attribution", {
      chain: [
        { from: NOTE, to: "send_email", test: { verdict: "causal", n: 12, rung: 9, ci: ["a", 1] } },
        { from: 3, to: "x", test: { verdict: "causal" } },
        { from: "a", to: "b" },
        null,
        "x",
      ],
    });
    expect(o.chain).toEqual([{ from: NOTE, to: "send_email", test: { verdict: "causal", n: 12 } }]);
    expect(jobOutcome("attribution", { chain: "input:x" }).chain).toBeUndefined();
    expect(jobOutcome("attribution", { chain: Array.from({ length: 500 }, () => ({ from: "a", to: "b", test: { verdict: "causal" } })) }).chain).toHaveLength(
      32,
    );
    const { root, host } = open(grouped, "demo-seed0", "#18");
    step(() => withText(root, "button", "Find the cause")[0].click());
    host.send({ type: "result", requestId: host.last("findCause")!.requestId, ok: true, kind: "attribution", result: { summary: "no cause", causes: [] } });
    expect(text(root.querySelector(".outcome-attr"))).toContain("no cause");
    expect(root.querySelector(".cause-chain")).toBeNull();
  });
});
