/**
 * What an agentless replay (rung 2) re-simulates, read from a recording that holds every model
 * call's full request: each agent's conversations ("threads": a call continues the thread whose
 * answer its history holds), the recorded requests they start from, the links that carry one
 * agent's output into another's prompt, and the recorded tool results served back by
 * (agent, tool, canonical arguments, occurrence).
 *
 * Everything here is read from the run, which is untrusted: it only ever supplies request
 * content. It never names where a call goes, which key it carries, or what code runs.
 */
import { RunModel } from "../../graph/model";
import { rebuildRequest, EndpointError, type RebuiltRequest } from "../endpoint-replay";
import { ReplayError } from "../context";

/** Why a run can't be replayed without its program: a ReplayError, so every command reports it in one line (exit 1). */
export class AgentlessError extends ReplayError {}

/** One recorded conversation of one agent: its calls in order, replayed from the first. */
export interface Thread {
  agent: string;
  /** The recorded calls (decisions) of the thread, in order. */
  calls: RebuiltRequest[];
}

/** A link from an upstream agent's answer into a downstream prompt block (a message event). */
export interface Link {
  /** The message event's id (the context item's from_event). */
  message: string;
  from: string;
  to: string;
  /** The decision whose answer the message carries. */
  decision: string;
  /** exact: the block is the answer; substring: the answer inside other text; inferred: rewritten. */
  grade: "exact" | "substring" | "inferred";
  /** The recorded answer's text (what a replay replaces by the new answer). */
  text: string;
}

/** A recorded tool result, with the label of the item it became (so interventions reach it). */
export interface TapeEntry {
  result: unknown;
  status: string;
  label: { kind: string; source: string; trust: string; ref: string };
}

export interface Plan {
  threads: Thread[];
  links: Map<string, Link>;
  /** Thread index and position of each decision id. */
  position: Map<string, { thread: number; index: number }>;
  tape: Map<string, TapeEntry>;
  /** The upstream URLs the calls were recorded against, by API (shown in errors, never used). */
  recordedUrls: Map<string, string>;
  /** Where the program added content between two calls of a thread (plain sentences). */
  notes: string[];
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);

/** The key of a recorded tool call: agent, tool, canonical arguments, occurrence. */
export const tapeKey = (agent: string, tool: string, args: string, occurrence: number) => `${agent}\u0000${tool}\u0000${args}\u0000${occurrence}`;

/**
 * Reads the plan of an agentless replay, or throws AgentlessError saying why the run can't be
 * replayed without its program (a call not recorded in full, provider-run tools, provider-held
 * state), before anything is sent.
 */
export function planAgentless(m: RunModel): Plan {
  if (!m.decisions.length) throw new AgentlessError("the run has no model calls to re-send");
  const threads: Thread[] = [];
  const position = new Map<string, { thread: number; index: number }>();
  const recordedUrls = new Map<string, string>();
  const notes: string[] = [];
  for (const d of m.decisions) {
    let r: RebuiltRequest;
    try {
      r = rebuildRequest(m, d.seq);
    } catch (err) {
      if (err instanceof EndpointError) throw new AgentlessError(`can't replay without the program: ${err.message}`);
      throw err;
    }
    const why = r.codec.notReplayable(r.body, m.value(d.output));
    if (why) throw new AgentlessError(`can't replay without the program: call #${d.seq} (${d.agent}) can't be re-sent: ${why}`);
    if (typeof r.record.url === "string" && !recordedUrls.has(r.codec.api)) recordedUrls.set(r.codec.api, r.record.url);
    const context = d.context ?? [];
    // a call continues the agent's thread whose answer its history holds
    const prior = context.filter((c) => c.kind === "output" && c.from_event).map((c) => position.get(String(c.from_event)));
    const cont = prior.find((p) => p && threads[p.thread].agent === d.agent);
    if (cont) {
      const t = threads[cont.thread];
      const known = new Set(t.calls.flatMap((x) => (x.decision.context ?? []).map((c) => c.ref)));
      const added = context.filter(
        (c) => c.kind !== "output" && c.kind !== "result" && !(c.kind === "input" && c.source.startsWith("tool")) && !known.has(c.ref),
      );
      if (added.length)
        notes.push(
          `the program added content to ${d.agent}'s conversation before call #${d.seq} (${added.map((c) => c.source).join(", ")}); the replay re-sends only what the model answered and the tools returned`,
        );
      position.set(d.id, { thread: cont.thread, index: t.calls.length });
      t.calls.push(r);
    } else {
      position.set(d.id, { thread: threads.length, index: 0 });
      threads.push({ agent: String(d.agent), calls: [r] });
    }
  }
  return { threads, links: links(m, position, threads), position, tape: tape(m), recordedUrls, notes };
}

function links(m: RunModel, position: Map<string, { thread: number; index: number }>, threads: Thread[]): Map<string, Link> {
  const out = new Map<string, Link>();
  for (const e of m.events) {
    if (e.type !== "message") continue;
    const ev = e as unknown as { id: string; agent: string; to: string; decision?: unknown; carried?: { grade?: unknown } };
    const decision = typeof ev.decision === "string" ? ev.decision : "";
    const at = position.get(decision);
    const dec = at ? threads[at.thread].calls[at.index] : undefined;
    const text = dec ? dec.codec.assistantText(m.value(dec.decision.output)) : "";
    const g = isObj(ev.carried) ? ev.carried.grade : undefined;
    out.set(ev.id, {
      message: ev.id,
      from: String(ev.agent),
      to: String(ev.to),
      decision,
      grade: g === "inferred" ? "inferred" : g === "substring" ? "substring" : "exact",
      text,
    });
  }
  return out;
}

function tape(m: RunModel): Map<string, TapeEntry> {
  // a recorded result reads as the item it became: an untrusted tool's result is an input event with its ref
  const inputs = new Map<string, { kind: string; source: string; trust: string; ref: string }>();
  for (const e of m.events) {
    const x = e as unknown as { type: string; agent: string; ref?: unknown; source?: unknown; trust?: unknown; kind?: unknown };
    if (x.type === "input" && typeof x.ref === "string" && x.kind !== "task")
      inputs.set(`${x.agent}\u0000${x.ref}`, { kind: "input", source: String(x.source), trust: String(x.trust), ref: x.ref });
  }
  const out = new Map<string, TapeEntry>();
  const seen = new Map<string, number>();
  for (const a of m.actions) {
    const args = m.canonical(a.args_ref);
    const base = `${a.agent}\u0000${a.tool}\u0000${args}`;
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    const ref = a.result_ref ?? "";
    const canon = a.result_ref ? m.canonical(a.result_ref) : "";
    const label = inputs.get(`${a.agent}\u0000${ref}`) ?? { kind: "result", source: a.tool, trust: "trusted", ref };
    out.set(tapeKey(String(a.agent), a.tool, args, k), { result: canon ? JSON.parse(canon) : null, status: String(a.status), label });
  }
  return out;
}
