/**
 * `causeway import otel FILE [--out DIR]`: OpenTelemetry GenAI traces (OTLP/JSON) → runs.
 *
 *   chat / generate_content / text_completion spans  → decisions; their system instructions, input
 *                                                      messages and tool definitions → context items;
 *                                                      token counts → usage
 *   execute_tool spans                               → actions, linked by gen_ai.tool.call.id to the
 *                                                      decision whose output asked for them
 *   invoke_agent spans                               → agents (gen_ai.agent.name), nested agents as parents
 *   gen_ai.conversation.id, else the trace id        → the run
 *
 * Current attribute names and the older ones (gen_ai.system, gen_ai.usage.prompt_tokens, span
 * events, indexed prompts) are read. Content a span did not capture stays absent: a decision's
 * output is null, arguments are {"_not_captured": true}, a result is null, each marked as not
 * captured, and the run's meta says how much was (content_capture: full | partial | none) so
 * provenance does not claim a value was generated when it may simply not have been recorded. Tool
 * results are untrusted unless the tool is listed as trusted (OTel has no trust labels).
 * Event times are the spans' own times.
 */
import path from "node:path";
import { FileSink } from "../log/writer";
import { canonical } from "../log/hash";
import type { ContextRecord, Trust } from "../log/events";
import { Item } from "../sdk/items";
import { Runtime } from "../sdk/runtime";
import { freeRunId } from "../sdk/system";
import { callContent, operationOf, readTracesFile, spansOf, type CallContent, type Message, type OtelSpan } from "./otlp";

export interface OtelImportOptions {
  /** Tools whose results are trusted (default: none — every tool result is untrusted). */
  trustedTools?: readonly string[];
  /** When given, only these tools' results are untrusted. */
  untrustedTools?: readonly string[];
  /** Tools declared sensitive (default: none; the analysis then judges by name). */
  sensitiveTools?: readonly string[];
}

const MODEL_OPS = new Set(["chat", "generate_content", "text_completion"]);
const NOT_CAPTURED = { _not_captured: true };

/** Imports every conversation (or trace) in an OTLP/JSON file as a run under outDir; returns the run folders. */
export function importOtel(file: string, outDir: string, opts: OtelImportOptions = {}): { runs: string[] } {
  const spans = spansOf(readTracesFile(file));
  const genai = spans.filter((s) => operationOf(s));
  if (!genai.length)
    throw new Error(
      `${file} holds ${spans.length} span${spans.length === 1 ? "" : "s"} but no GenAI spans (gen_ai.operation.name chat, execute_tool, invoke_agent…)`,
    );
  // a run per conversation id, else per trace
  const traces = new Map<string, OtelSpan[]>();
  for (const s of spans) traces.set(s.traceId, [...(traces.get(s.traceId) ?? []), s]);
  const groups = new Map<string, OtelSpan[]>();
  for (const [traceId, list] of traces) {
    const sorted = [...list].sort(byTime);
    const conv = sorted.map((s) => s.attrs["gen_ai.conversation.id"]).find((c) => typeof c === "string" && c);
    const key = conv ? `conv-${conv}` : `trace-${traceId || "unknown"}`;
    groups.set(key, [...(groups.get(key) ?? []), ...list]);
  }
  const runs: string[] = [];
  for (const [key, list] of groups) {
    if (!list.some((s) => operationOf(s))) continue;
    runs.push(importGroup(key, list.sort(byTime), file, outDir, opts));
  }
  return { runs };
}

function byTime(a: OtelSpan, b: OtelSpan): number {
  return a.start < b.start ? -1 : a.start > b.start ? 1 : a.end > b.end ? -1 : a.end < b.end ? 1 : a.order - b.order;
}

/** UTC with microseconds, from Unix nanoseconds. */
function tsOf(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const micro = Number((ns / 1000n) % 1000n);
  const d = new Date(Number.isFinite(ms) ? ms : 0);
  return d.toISOString().slice(0, 23) + String(micro).padStart(3, "0") + "Z";
}

const durationMs = (s: OtelSpan) => (s.end >= s.start ? Math.round(Number(s.end - s.start) / 1000) / 1000 : null);
const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

function importGroup(key: string, spans: OtelSpan[], file: string, outDir: string, opts: OtelImportOptions): string {
  const tree = new SpanTree(spans);
  const content = new Map(spans.filter((s) => MODEL_OPS.has(operationOf(s))).map((s) => [s, callContent(s)]));
  const toolSpans = spans.filter((s) => operationOf(s) === "execute_tool");
  const allTools = toolsOf(toolSpans, content);
  const untrustedTool = (t: string) => (opts.untrustedTools ? opts.untrustedTools.includes(t) : !(opts.trustedTools ?? []).includes(t));
  const first = spans[0];
  const conv = key.startsWith("conv-") ? key.slice(5) : null;
  const runId = freeRunId(outDir, `otel-${key.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 100)}`);
  const sink = new FileSink(path.join(outDir, runId));
  const rt = new Runtime({
    runId,
    seed: 0,
    sink,
    program: null,
    models: {},
    tools: {},
    sensitiveTools: opts.sensitiveTools,
    untrustedTools: [...allTools].filter(untrustedTool).sort(),
    captureSites: false,
  });
  const w = new RunWriter(rt, tree, untrustedTool, first.start);
  const models = [
    ...new Set([...content.keys()].map((s) => str(s.attrs["gen_ai.request.model"]) ?? str(s.attrs["gen_ai.response.model"])).filter((m): m is string => !!m)),
  ].sort();
  w.emit(
    "run",
    "run.start",
    {
      program: null,
      seed: null,
      interventions: [],
      models,
      tools: [...allTools].sort(),
      meta: {
        imported_from: "opentelemetry",
        source_file: path.basename(file),
        trace_ids: [...new Set(spans.map((s) => s.traceId))],
        ...(conv ? { conversation_id: conv } : {}),
        ...(str(first.resource["service.name"]) ? { service: first.resource["service.name"] } : {}),
        content_capture: captureOf(content, toolSpans),
      },
      sensitive_tools: [...(opts.sensitiveTools ?? [])].sort(),
      untrusted_tools: [...allTools].filter(untrustedTool).sort(),
      guard: null,
    },
    first.start,
  );
  for (const s of spans) {
    const op = operationOf(s);
    if (op === "invoke_agent" || op === "create_agent") w.ensureAgent(tree.agentName(s), s);
    else if (MODEL_OPS.has(op)) w.decision(s, op, content.get(s)!);
    else if (op === "execute_tool") w.toolSpan(s);
  }
  w.finish(spans);
  sink.close();
  return sink.dir;
}

const toolName = (s: OtelSpan) => str(s.attrs["gen_ai.tool.name"]) ?? (s.name.replace(/^execute_tool\s*/, "") || "tool");

/** Every tool the run names: those executed and those the model calls were offered. */
function toolsOf(toolSpans: OtelSpan[], content: Map<OtelSpan, CallContent>): Set<string> {
  const allTools = new Set<string>(toolSpans.map(toolName));
  for (const c of content.values())
    for (const t of c.tools ?? [])
      if (t && typeof t === "object" && typeof (t as { name?: unknown }).name === "string") allTools.add((t as { name: string }).name);
  return allTools;
}

/** How much content the trace captured: model inputs and outputs, tool arguments and results. */
function captureOf(content: Map<OtelSpan, CallContent>, toolSpans: OtelSpan[]): "full" | "partial" | "none" {
  let captured = 0;
  let missing = 0;
  for (const c of content.values())
    for (const part of [c.input, c.output])
      if (part) captured++;
      else missing++;
  for (const s of toolSpans)
    for (const k of ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"])
      if (s.attrs[k] !== undefined) captured++;
      else missing++;
  return missing === 0 ? "full" : captured === 0 ? "none" : "partial";
}

/** The spans of one run by id, and the agent each span runs in. */
class SpanTree {
  private readonly byId: Map<string, OtelSpan>;
  constructor(spans: OtelSpan[]) {
    this.byId = new Map(spans.map((s) => [`${s.traceId}/${s.spanId}`, s]));
  }
  parentOf(s: OtelSpan): OtelSpan | undefined {
    return s.parentSpanId ? this.byId.get(`${s.traceId}/${s.parentSpanId}`) : undefined;
  }
  agentSpan(s: OtelSpan | undefined): OtelSpan | undefined {
    for (let p = s, hops = 0; p && hops < 256; p = this.parentOf(p), hops++) {
      const op = operationOf(p);
      if (op === "invoke_agent" || op === "create_agent") return p;
    }
    return undefined;
  }
  agentName(s: OtelSpan): string {
    const a = this.agentSpan(s);
    const n =
      (a && (str(a.attrs["gen_ai.agent.name"]) ?? str(a.attrs["gen_ai.agent.id"]))) ??
      str(s.attrs["gen_ai.agent.name"]) ??
      str(s.resource["service.name"]) ??
      "agent";
    return n === "run" ? "run-agent" : n.slice(0, 200);
  }
}

/** The model call's token counts, in the current attribute names or the older ones. */
function usageOf(a: Record<string, unknown>): Record<string, number> {
  const usage: Record<string, number> = {};
  const inTok = int(a["gen_ai.usage.input_tokens"]) ?? int(a["gen_ai.usage.prompt_tokens"]);
  const outTok = int(a["gen_ai.usage.output_tokens"]) ?? int(a["gen_ai.usage.completion_tokens"]);
  if (inTok !== undefined) usage.input_tokens = inTok;
  if (outTok !== undefined) usage.output_tokens = outTok;
  return usage;
}

/** The model call's request parameters other than the model and the seed. */
function paramsOf(a: Record<string, unknown>): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a))
    if (k.startsWith("gen_ai.request.") && k !== "gen_ai.request.model" && k !== "gen_ai.request.seed") params[k.slice(15)] = v;
  return params;
}

/**
 * Writes one run's events from its spans, in time order (an event's time never goes back), with
 * the run's memory: agents started, inputs seen, tool calls asked for, results recorded.
 */
class RunWriter {
  private clock: bigint;
  private readonly started = new Set<string>();
  private readonly inputs = new Map<string, Item>();
  private readonly asked = new Map<string, { decision: Item; name: string; args: unknown; agent: string }>();
  private readonly results = new Map<string, { item: Item; captured: boolean; tool: string; agent: string; actionId: string }>();
  /** tool call id or output text → decision output */
  private readonly outputs = new Map<string, Item>();
  constructor(
    private readonly rt: Runtime,
    private readonly tree: SpanTree,
    private readonly untrustedTool: (t: string) => boolean,
    start: bigint,
  ) {
    this.clock = start;
  }

  emit(agent: string, type: string, fields: Record<string, unknown>, at: bigint) {
    if (at > this.clock) this.clock = at;
    return this.rt.emit(agent, type, { ...fields, ts: tsOf(this.clock) });
  }

  ensureAgent(name: string, s: OtelSpan): void {
    if (this.started.has(name)) return;
    this.started.add(name);
    const a = this.tree.agentSpan(s);
    const parentSpan = a ? this.tree.agentSpan(this.tree.parentOf(a)) : undefined;
    const parent = parentSpan ? this.tree.agentName(parentSpan) : null;
    this.emit(name, "agent.start", { parent: parent && parent !== name ? parent : null, role: str(a?.attrs["gen_ai.agent.description"]) ?? "" }, s.start);
  }

  /** Calls asked for whose execution the trace does not show, then the run's end. */
  finish(spans: OtelSpan[]): void {
    for (const [callId, a] of [...this.asked]) this.action(a.agent, a.name, callId, a.args, undefined, null, this.clock, { result_seen: false });
    this.emit(
      "run",
      "run.end",
      { outcome: { imported: "opentelemetry", spans: spans.length } },
      spans.reduce((m, s) => (s.end > m ? s.end : m), this.clock),
    );
  }

  private input(agent: string, source: string, value: unknown, trust: Trust, at: bigint): Item {
    const k = `${agent}\u0000${source}\u0000${canonical(value ?? null)}`;
    let it = this.inputs.get(k);
    if (!it) {
      const ref = this.rt.put(value ?? null);
      const e = this.emit(agent, "input", { ref, source, trust, kind: "input" }, at);
      it = new Item(value, ref, "input", source, trust, e.id);
      this.inputs.set(k, it);
    }
    return it;
  }

  /** An execute_tool span: an action, its arguments from the span or else from the call that asked for it. */
  toolSpan(s: OtelSpan): void {
    const agent = this.tree.agentName(s);
    this.ensureAgent(agent, s);
    const callId = str(s.attrs["gen_ai.tool.call.id"]) ?? null;
    const rawArgs = s.attrs["gen_ai.tool.call.arguments"];
    const args = rawArgs === undefined ? (callId ? this.asked.get(callId)?.args : undefined) : parseMaybe(rawArgs);
    const rawResult = s.attrs["gen_ai.tool.call.result"];
    this.action(agent, toolName(s), callId, args, rawResult === undefined ? undefined : parseMaybe(rawResult), s, s.end);
  }

  private action(
    agent: string,
    tool: string,
    callId: string | null,
    args: unknown,
    result: unknown,
    s: OtelSpan | null,
    at: bigint,
    extra: Record<string, unknown> = {},
  ): Item {
    const ask = callId ? this.asked.get(callId) : undefined;
    const argsRef = this.rt.put(args === undefined ? NOT_CAPTURED : args);
    const resultRef = result === undefined ? null : this.rt.put(result);
    const e = this.emit(
      agent,
      "action",
      {
        tool,
        args_ref: argsRef,
        result_ref: resultRef,
        decision: ask ? ask.decision.decision : null,
        sensitive: this.rt.isSensitive(tool),
        mode: "live",
        status: s?.error ? "error" : "ok",
        duration_ms: s ? durationMs(s) : null,
        ...(callId ? { tool_call_id: callId } : {}),
        ...(args === undefined ? { args_captured: false } : {}),
        ...(result === undefined ? { result_captured: false } : {}),
        ...(s ? { otel: { trace_id: s.traceId, span_id: s.spanId } } : {}),
        ...extra,
      },
      at,
    );
    if (callId) this.asked.delete(callId);
    let item: Item;
    if (resultRef && this.untrustedTool(tool) && !s?.error) {
      const src = `tool:${tool}`;
      const ie = this.emit(agent, "input", { ref: resultRef, source: src, trust: "untrusted", kind: "input" }, at);
      item = new Item(result, resultRef, "input", src, "untrusted", ie.id);
    } else item = new Item(result ?? null, resultRef ?? argsRef, "result", tool, ask?.decision.trust ?? "trusted", e.id);
    if (callId) this.results.set(callId, { item, captured: resultRef !== null, tool, agent, actionId: e.id });
    return item;
  }

  /** The item of a tool result the trace shows only in a later model call's input (the tool span did not capture it). */
  private lateResult(r: { tool: string; agent: string; actionId: string }, content: unknown, at: bigint): Item {
    const ref = this.rt.put(content);
    if (this.untrustedTool(r.tool)) {
      const src = `tool:${r.tool}`;
      const ie = this.emit(r.agent, "input", { ref, source: src, trust: "untrusted", kind: "input" }, at);
      return new Item(content, ref, "input", src, "untrusted", ie.id);
    }
    return new Item(content, ref, "result", r.tool, "trusted", r.actionId);
  }

  decision(s: OtelSpan, op: string, c: CallContent): void {
    const agent = this.tree.agentName(s);
    this.ensureAgent(agent, s);
    const ctx: Item[] = [];
    const add = (it: Item) => {
      if (!ctx.includes(it)) ctx.push(it);
    };
    for (const t of c.system ?? []) add(this.input(agent, "system", t, "trusted", s.start));
    for (const m of c.input ?? []) for (const it of this.messageItems(agent, m, s)) add(it);
    if (c.tools) add(this.input(agent, "tools", c.tools, "trusted", s.start));
    const a = s.attrs;
    const outputRef = c.output ? this.rt.put(c.output) : null;
    const trust: Trust = ctx.some((i) => i.trust === "untrusted") ? "untrusted" : "trusted";
    const e = this.emit(
      agent,
      "decision",
      {
        context: ctx.map((i): ContextRecord => i.record()),
        model: str(a["gen_ai.request.model"]) ?? str(a["gen_ai.response.model"]) ?? "unknown",
        purpose: op,
        params: paramsOf(a),
        seed: int(a["gen_ai.request.seed"]) ?? null,
        output: outputRef,
        ablated: [],
        status: s.error ? "error" : "ok",
        duration_ms: durationMs(s),
        usage: usageOf(a),
        captured: { input: c.input !== undefined, output: c.output !== undefined },
        provider: str(a["gen_ai.provider.name"]) ?? str(a["gen_ai.system"]) ?? null,
        otel: { trace_id: s.traceId, span_id: s.spanId },
      },
      s.end,
    );
    const item = new Item(c.output ?? null, outputRef ?? "", "output", op, trust, e.id, e.id);
    for (const m of c.output ?? []) {
      for (const p of m.parts) {
        if (p.type === "tool_call" && p.id) {
          this.asked.set(p.id, { decision: item, name: p.name, args: p.args, agent });
          this.outputs.set(`call:${p.id}`, item);
        } else if (p.type === "text" && p.text) this.outputs.set(`text:${p.text}`, item);
      }
    }
  }

  private messageItems(agent: string, m: Message, s: OtelSpan): Item[] {
    const out: Item[] = [];
    if (m.role === "assistant") {
      const ids = m.parts.flatMap((p) => (p.type === "tool_call" && p.id ? [`call:${p.id}`] : []));
      const texts = m.parts.flatMap((p) => (p.type === "text" && p.text ? [`text:${p.text}`] : []));
      const known = [...ids, ...texts].map((k) => this.outputs.get(k)).find(Boolean);
      return [known ?? this.input(agent, "assistant", m.parts, "trusted", s.start)];
    }
    for (const p of m.parts) {
      if (p.type === "tool_result") {
        const have = p.id ? this.results.get(p.id) : undefined;
        if (have && !have.captured && p.content !== null && p.content !== undefined) {
          have.item = this.lateResult(have, p.content, s.start);
          have.captured = true;
        }
        if (have) out.push(have.item);
        else if (p.id && this.asked.has(p.id)) {
          const a = this.asked.get(p.id)!;
          out.push(this.action(a.agent, a.name, p.id, a.args, p.content, null, s.start, { from: "input message" }));
        } else out.push(this.input(agent, "tool-result", p.content, "untrusted", s.start));
      } else if (p.type === "text") out.push(this.input(agent, m.role === "system" ? "system" : "user", p.text, "trusted", s.start));
      else if (p.type === "other") out.push(this.input(agent, m.role === "system" ? "system" : "user", p.value, "trusted", s.start));
    }
    return out;
  }
}

function parseMaybe(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!/^[[{"]/.test(t)) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}
