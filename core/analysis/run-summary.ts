/** The run at a glance: its summary, its agents and its message channels. */
import { safeText } from "../log/sanitize";
import type { RunData } from "../log/reader";
import { nodeId, textOf, type Graph } from "../graph/graph";
import type { RunModel } from "../graph/model";
import type { AgentRow, Alert, ChannelRow, RunSummary, Severity, TestSummary } from "./types";

export function summaryOf(m: RunModel, al: Alert[], whole: RunData): RunSummary {
  const errors = m.run.problems.filter((p) => p.severity === "error");
  const usage = { input_tokens: 0, output_tokens: 0 };
  for (const d of m.decisions) {
    usage.input_tokens += Number(d.usage?.input_tokens ?? 0) || 0;
    usage.output_tokens += Number(d.usage?.output_tokens ?? 0) || 0;
  }
  const task = m.task();
  const counts = { high: 0, review: 0, info: 0 } as Record<Severity, number>;
  for (const a of al) counts[a.severity]++;
  const finished = m.events.length > 0 && m.events[m.events.length - 1].type === "run.end";
  const top = al[0];
  return {
    run_id: m.runId,
    dir: m.run.dir,
    program: safeText(m.start.program ?? ""),
    started: safeText(m.events[0]?.ts ?? ""),
    task: task === undefined ? null : textOf(task),
    agents: [...new Set(m.events.filter((e) => e.type === "agent.start").map((e) => safeText(e.agent)))].sort(),
    decisions: m.decisions.length,
    actions: m.actions.length,
    messages: m.messages.length,
    inputs: m.inputs.filter((e) => e.kind !== "task").length,
    untrusted_inputs: m.inputs.filter((e) => e.trust === "untrusted").length,
    events: m.events.length,
    errors: [...m.actions, ...m.decisions].filter((e) => e.status === "error").length,
    model_ms: Math.round(m.decisions.reduce((s, d) => s + (Number(d.duration_ms) || 0), 0) * 100) / 100,
    tool_ms: Math.round(m.actions.reduce((s, a) => s + (Number(a.duration_ms) || 0), 0) * 100) / 100,
    usage,
    tests: m.run.tests.length,
    confirmed_causes: m.run.tests.filter((t) => t.verdict === "causal" && !t.group && !safeText(t.intervention ?? "").includes(" | ")).length,
    ...(whole.tests.length > m.run.tests.length ? { foreign_tests: whole.tests.length - m.run.tests.length } : {}),
    ...(whole.writer !== undefined && whole.writer !== "local" ? { writer: whole.writer === null ? null : safeText(whole.writer) } : {}),
    alerts: counts,
    integrity: errors.length ? "failed" : "ok",
    status: errors.length ? "failed" : m.run.complete ? "intact" : "running",
    problems: m.run.problems.length,
    first_problem: errors[0] ?? null,
    tools_run: m.actions.map((a) => safeText(a.tool)),
    replayable: !!m.start.program,
    finished,
    blocked: m.actions.filter((a) => a.status === "blocked").length,
    guard: (m.start.guard as { mode?: string } | null | undefined)?.mode ?? null,
    top_alert: top ? { severity: top.severity, title: top.title, seq: top.seq, tool: top.tool } : null,
  };
}

export function channelsOf(m: RunModel, g: Graph, tests: TestSummary[]): ChannelRow[] {
  const chans = new Map<string, ChannelRow>();
  for (const e of m.messages) {
    const key = `${e.agent}->${e.to}`;
    const c = chans.get(key) ?? { channel: key, from: safeText(e.agent), to: safeText(e.to), sent: 0, used: 0, tests: [] };
    chans.set(key, c);
    c.sent++;
    if (g.outEdges(nodeId(e.id), ["observed"]).length) c.used++;
  }
  for (const t of tests) {
    if (!t.group && t.intervention.startsWith("msg:") && chans.has(t.intervention.slice(4))) chans.get(t.intervention.slice(4))!.tests.push(t);
  }
  return [...chans.values()];
}

export function agentsOf(m: RunModel): AgentRow[] {
  const rows = new Map<string, AgentRow>();
  const row = (name: string) => {
    let r = rows.get(name);
    if (!r) {
      r = { agent: name, role: "", parent: null, inputs: 0, decisions: 0, actions: 0, sent: 0, received: 0, tokens: 0, model_ms: 0 };
      rows.set(name, r);
    }
    return r;
  };
  for (const e of m.events) {
    if (e.type === "agent.start") {
      const r = row(safeText(e.agent));
      r.role = safeText(e.role ?? "");
      r.parent = (e.parent as string | null) ?? null;
    } else if (e.type === "input" && e.agent !== "run") row(safeText(e.agent)).inputs++;
    else if (e.type === "decision") {
      const r = row(safeText(e.agent));
      r.decisions++;
      const u = e.usage as { input_tokens?: unknown; output_tokens?: unknown } | null | undefined;
      r.tokens += (Number(u?.input_tokens) || 0) + (Number(u?.output_tokens) || 0);
      r.model_ms += Number(e.duration_ms) || 0;
    } else if (e.type === "action") row(safeText(e.agent)).actions++;
    else if (e.type === "message") {
      row(safeText(e.agent)).sent++;
      row(safeText(e.to)).received++;
    }
  }
  for (const r of rows.values()) r.model_ms = Math.round(r.model_ms * 100) / 100;
  return [...rows.values()];
}
