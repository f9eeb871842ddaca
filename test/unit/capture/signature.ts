/**
 * What "the same graph" means when one agent is recorded two ways (SDK adapter vs gateway):
 * the same agents (and parents); the same inputs (source, trust, content); the same model calls in
 * order (agent, model, and each context item's kind, source and trust); the same tool calls (agent,
 * tool, canonical arguments, status, and which model call asked for each); the same alerts
 * (severity, rule, tool, and which tool call). Event ids, times, durations, sites and the exact
 * form of a model's output (a streamed answer is rebuilt without fields like `annotations`) may
 * differ.
 */
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { alertsFor } from "../../../core/analysis/investigate";

export interface GraphSignature {
  agents: string[];
  inputs: string[];
  decisions: string[];
  actions: string[];
  alerts: string[];
}

export function graphSignature(dir: string): GraphSignature {
  const run = readRun(dir);
  const m = new RunModel(run);
  const decisionIndex = new Map(m.decisions.map((d, i) => [d.id, i]));
  const actionIndex = new Map(m.actions.map((a, i) => [a.seq, i]));
  return {
    agents: m.events.filter((e) => e.type === "agent.start").map((e) => `${e.agent}<${e.parent ?? ""}`),
    inputs: m.inputs.map((e) => `${e.agent} ${e.source} ${e.trust} ${e.ref}`),
    decisions: m.decisions.map((d) => `${d.agent} ${d.model} ${d.status} [${(d.context ?? []).map((c) => `${c.kind}:${c.source}:${c.trust}`).join(", ")}]`),
    actions: m.actions.map(
      (a) => `${a.agent} ${a.tool}(${m.canonical(a.args_ref)}) ${a.status} <- decision ${a.decision ? decisionIndex.get(a.decision) : "none"}`,
    ),
    alerts: alertsFor(run).map((a) => `${a.severity} ${a.rule} ${a.tool ?? ""} action ${a.seq === null ? "-" : (actionIndex.get(a.seq) ?? "?")}`),
  };
}

/**
 * A gateway recording's signature with its tool results named by tool only: the gateway names each
 * result by its tool and arguments (`tool:fetch_page {"url":…}`), the SDK adapters by its tool.
 */
export function byToolName(sig: GraphSignature): GraphSignature {
  const strip = (s: string) => s.replace(/(tool:[A-Za-z0-9_.-]+) \{.*?\}(?=:(?:un)?trusted|\s(?:un)?trusted\s)/g, "$1");
  return { ...sig, inputs: sig.inputs.map(strip), decisions: sig.decisions.map(strip) };
}
