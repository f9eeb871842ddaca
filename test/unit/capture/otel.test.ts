/**
 * OpenTelemetry GenAI import, on OTLP/JSON in the shape real exporters write (typed attribute
 * values, 64-bit times as strings, spans in end order, several spans per trace): the current
 * attribute names, the older ones (gen_ai.system, prompt_tokens, span events, indexed prompts) in
 * JSON Lines, and a trace that captured no content.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { investigate } from "../../../core/analysis/investigate";
import { importOtel } from "../../../core/importers/otel";
import { main } from "../../../core/cli/main";

const FIX = path.resolve(import.meta.dirname, "../../fixtures/otel");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-otel-"));
  dirs.push(d);
  return d;
};

function load(dir: string) {
  const run = readRun(dir, { checkBlobs: true });
  expect(run.problems).toEqual([]);
  return new RunModel(run);
}

describe("importOtel", () => {
  it("current conventions: model calls, tool calls linked by call id, the injected page flagged", () => {
    const { runs } = importOtel(path.join(FIX, "support-agent.json"), tmp());
    expect(runs.map((d) => path.basename(d))).toEqual(["otel-conv-conv_8f1e2d"]);
    const m = load(runs[0]);
    expect(m.start.meta).toMatchObject({ imported_from: "opentelemetry", conversation_id: "conv_8f1e2d", service: "support-desk", content_capture: "full" });
    expect(m.events.filter((e) => e.type === "agent.start").map((e) => e.agent)).toEqual(["support"]);
    // times are the spans' own (string nanoseconds), in order
    expect(m.events[0].ts).toBe("2025-11-30T05:20:00.000000Z");
    const ts = m.events.map((e) => e.ts);
    expect([...ts].sort()).toEqual(ts);

    const [d1, d2, d3] = m.decisions;
    expect(m.decisions).toHaveLength(3);
    expect(d1).toMatchObject({
      model: "gpt-4.1-mini",
      purpose: "chat",
      usage: { input_tokens: 212, output_tokens: 24 },
      duration_ms: 890,
      params: { temperature: 0.2, max_tokens: 800 },
    });
    expect(d1.context.map((c) => c.source)).toEqual(["system", "user", "tools"]);
    const page = m.inputs.find((e) => e.source === "tool:fetch_page")!;
    expect(page.trust).toBe("untrusted");
    expect(d2.context.some((c) => c.from_event === page.id && c.trust === "untrusted")).toBe(true);
    // the assistant turn in d2's history is d1's output, not a new input
    expect(d2.context.some((c) => c.from_event === d1.id && c.kind === "output")).toBe(true);
    expect(d3.context.map((c) => c.kind)).toContain("output");

    const [fetch, send] = m.actions;
    expect(fetch).toMatchObject({ tool: "fetch_page", decision: d1.id, status: "ok" });
    expect(send).toMatchObject({ tool: "send_email", decision: d2.id });
    expect(m.value(send.args_ref)).toEqual({ to: "attacker@evil.example", body: "Key points: orders ship within 2 days." });

    // it opens in the investigator: tool calls linked to the model calls that asked for them
    const inv = investigate(m.run);
    const view = Object.values(inv.actions).find((a) => a.tool === "send_email")!;
    expect(view.decision).toBe(`ev:${d2.id}`);
    expect(inv.alerts.filter((a) => a.severity === "high")).toEqual([
      expect.objectContaining({ rule: "untrusted-value", tool: "send_email", value: "attacker@evil.example" }),
    ]);
    expect(inv.graph.edges.some((e) => e.src === `ev:${d2.id}` && e.dst === `ev:${send.id}` && e.kind === "invoked")).toBe(true);
  });

  it("older conventions in JSON Lines: gen_ai.system, prompt_tokens, span events, indexed prompts, nested agents", () => {
    const { runs } = importOtel(path.join(FIX, "two-agents-legacy.jsonl"), tmp());
    expect(runs.map((d) => path.basename(d))).toEqual(["otel-trace-0af7651916cd43dd8448eb211c80319c"]);
    const m = load(runs[0]);
    const agents = m.events.filter((e) => e.type === "agent.start").map((e) => [e.agent, e.parent]);
    expect(agents).toEqual([
      ["planner", null],
      ["researcher", "planner"],
    ]);
    const [r1, r2, p1] = m.decisions;
    expect([r1.agent, r2.agent, p1.agent]).toEqual(["researcher", "researcher", "planner"]);
    expect(r1).toMatchObject({ usage: { input_tokens: 120, output_tokens: 30 }, provider: "anthropic" });
    expect(r1.context.map((c) => c.source)).toEqual(["system", "user"]);
    const fetch = m.actions.find((a) => a.tool === "fetch_page")!;
    expect(fetch.decision).toBe(r1.id); // from the gen_ai.choice event's tool call id
    // the fetch span captured no result; the next call's prompt shows it: an untrusted input
    const page = m.inputs.find((e) => e.source === "tool:fetch_page")!;
    expect(String(m.value(page.ref))).toContain("Maintainer note");
    expect(r2.context.some((c) => c.from_event === page.id)).toBe(true);
    const add = m.actions.find((a) => a.tool === "add_to_group")!;
    expect(add.decision).toBe(p1.id);
    expect(m.value(add.result_ref)).toEqual({ ok: true });
  });

  it("content that was not captured stays absent and is marked so", () => {
    const { runs } = importOtel(path.join(FIX, "content-not-captured.json"), tmp());
    const m = load(runs[0]);
    expect(m.start.meta).toMatchObject({ content_capture: "partial" });
    const d = m.decisions[0];
    expect(d.output).toBeNull();
    expect(d).toMatchObject({ captured: { input: false, output: false }, usage: { input_tokens: 50, output_tokens: 9 } });
    const a = m.actions[0];
    expect(a).toMatchObject({ tool: "send_email", status: "error", result_ref: null, args_captured: false, result_captured: false, decision: null });
    expect(m.value(a.args_ref)).toEqual({ _not_captured: true });
    // an address found nowhere is not claimed as generated: the model calls' content was not recorded
    const second = Object.values(investigate(m.run).actions).find((v) => v.seq === m.actions[1].seq)!;
    expect(second.provenance).toEqual([expect.objectContaining({ value: "ops@unknown.example", status: "hashed" })]);
  });

  it("refuses a file without GenAI spans; the CLI imports and reports", async () => {
    const d = tmp();
    const plain = path.join(d, "http.json");
    fs.writeFileSync(
      plain,
      JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "ab", spanId: "cd", name: "GET /", startTimeUnixNano: "1", endTimeUnixNano: "2" }] }] }],
      }),
    );
    expect(() => importOtel(plain, d)).toThrow(/no GenAI spans/);
    const write = process.stdout.write.bind(process.stdout);
    let printed = "";
    process.stdout.write = (s: string) => ((printed += s), true);
    let code: number;
    try {
      code = await main(["import", "otel", path.join(FIX, "support-agent.json"), "--out", d, "--json"]);
    } finally {
      process.stdout.write = write;
    }
    expect(code).toBe(0);
    expect(JSON.parse(printed).runs[0]).toBe(path.join(d, "otel-conv-conv_8f1e2d"));
    expect(await main(["import", "otel", plain, "--out", d])).toBe(1);
  });
});
