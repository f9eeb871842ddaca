/**
 * Agentless replay (rung 2): the investigation of a run whose program can't be re-run (another
 * language, code the user doesn't have), from the full requests the recorders kept. Each arm:
 *
 *  - every agent's conversation is re-sent from its first recorded call, with the interventions
 *    applied to the request's blocks (removed blocks replaced by a placeholder so the request
 *    stays valid, as `causeway test-endpoint` does; edits applied in place);
 *  - each tool use in an answer is served from the run's tape (agent, tool, canonical arguments,
 *    occurrence) — the served result is the recorded item, so interventions reach it too — or
 *    stubbed and counted off-tape; no tool ever runs and no program is started;
 *  - the answer and the tool results are appended as the provider's format requires and the model
 *    is called again, until it answers without tools or the recorded number of calls + 2;
 *  - a downstream agent whose recorded prompt carries an upstream answer (a message: exact or
 *    `substring`) gets the new answer in place of the old text; a link that can't be followed
 *    (`inferred`: the program rewrote the output; or the old text isn't there) stops the replay at
 *    that hop, and the agents behind it are reported as not reached: nothing is guessed.
 *
 * Both arms send the pair's seed where the API takes one (OpenAI `seed`). A call both arms make
 * identically is sent once per pair (the replay context's cache), which is also what makes the
 * calls before the suspect first appears the same in both arms.
 *
 * The engine sees it as a System (run → actions and counts), so runTest, attribute, matrix,
 * fix-check, budgets, the shared baseline arm and the call cache work unchanged.
 */
import { canonical } from "../../log/hash";
import { memoryTrace } from "../../log/trace";
import type { RunData } from "../../log/reader";
import { RunModel } from "../../graph/model";
import { applyEdit } from "../../specs/apply";
import { concerns, matchesTarget, removes, type Intervention, type ItemLike } from "../../specs/grammar";
import { PLACEHOLDER, type ApiName, type ToolCallOut } from "../../adapters/codec";
import { getAt, setAt } from "../../util/json-path";
import type { RebuiltRequest } from "../endpoint-replay";
import { cloneJson } from "../../adapters/shared";
import type { ActionSummary } from "../../sdk/runtime-options";
import type { RunOptions, RunResult } from "../../sdk/system";
import { AgentlessError, planAgentless, tapeKey, type Plan, type Thread } from "./plan";
import { appendTurn, carryInto, routeFor, sendable, type EndpointOptions, type Route } from "./wire";

/** What every agentless test assumes, in plain sentences. */
export const AGENTLESS_ASSUMPTIONS = [
  "tools are deterministic: a tool use identical to a recorded one (agent, tool, arguments, occurrence) gets the recorded result; others get a stub and count as off-tape",
  "no code between the model calls rewrote the conversation: each agent's history is the recorded first request, then the model's answers and the tool results",
  "each agent's calls were re-sent from its first recorded call; no tool ran and no program was started",
];

/** What one arm did, beyond the engine's RunResult. */
interface ArmState {
  actions: ActionSummary[];
  calls: number;
  cached: number;
  applied: number;
  offTape: number;
  occurrences: Map<string, number>;
  /** Final answer text of each replayed thread (undefined: not reached or no text). */
  finals: (string | undefined)[];
  /** The answers of each thread, in order. */
  answers: string[][];
  unreached: Map<string, string>;
  followed: Set<string>;
  /** What the arm did, as events with their blobs, when a trace was asked for (`causeway replay`). */
  trace?: { events: Record<string, unknown>[]; blobs: Map<string, unknown> };
}

/** Notes one entry of the arm's trace (decision, action or message), its compared content as a blob. */
function note(s: ArmState, e: Record<string, unknown>, refKey: string, value: unknown): void {
  if (!s.trace) return;
  const ref = `t${s.trace.events.length}`;
  s.trace.blobs.set(ref, value);
  s.trace.events.push({ ...e, seq: s.trace.events.length + 1, [refKey]: ref });
}

export class AgentlessSystem {
  readonly isCausewaySystem = true;
  /** A call both arms of a pair make identically is sent once (pairs share their seed). */
  readonly seededModels = true;
  readonly rung = 2 as const;
  readonly config = { models: {}, tools: {}, program: () => undefined, name: "agentless replay" as string | undefined };
  readonly plan: Plan;
  private readonly routes = new Map<ApiName, Route>();
  private readonly model: RunModel;

  constructor(run: RunData, opts: EndpointOptions = {}, env: NodeJS.ProcessEnv = process.env) {
    this.model = new RunModel(run);
    this.plan = planAgentless(this.model);
    // every endpoint is resolved before anything is sent: a refusal comes first
    for (const t of this.plan.threads) {
      const api = t.calls[0].codec.api;
      if (!this.routes.has(api)) this.routes.set(api, routeFor(api, this.plan.recordedUrls.get(api), opts, env));
    }
  }

  get name(): string | undefined {
    return this.config.name;
  }

  /** The assumptions of a test, with which links the replay followed and which it could not. */
  assumptions(followed: Iterable<string>, unreached: Iterable<[string, string]>): string[] {
    const out = [...AGENTLESS_ASSUMPTIONS, ...this.plan.notes];
    const f = [...followed];
    if (f.length) out.push(`links followed (the new answer carried into the next agent's prompt): ${f.join(", ")}`);
    for (const [agent, why] of unreached) out.push(`not re-simulated: ${agent} (${why})`);
    return out;
  }

  async run(o: RunOptions = {}): Promise<RunResult & { assumptions: string[]; unreached: string[] }> {
    const seed = o.seed ?? 0;
    const ivs = [...(o.interventions ?? [])];
    const guard = ivs.find((iv) => iv.guard);
    const removing = ivs.filter((iv) => !iv.guard);
    const s: ArmState = {
      actions: [],
      calls: 0,
      cached: 0,
      applied: 0,
      offTape: 0,
      occurrences: new Map(),
      finals: [],
      answers: [],
      unreached: new Map(),
      followed: new Set(),
      ...(o.trace ? { trace: { events: [], blobs: new Map() } } : {}),
    };
    let error: string | undefined;
    try {
      if (guard && !guard.guard!.target)
        throw new AgentlessError("guard:block without a target needs the program's live guard; without the program, name what it blocks: guard:block:TARGET");
      for (let i = 0; i < this.plan.threads.length; i++) await this.thread(i, seed, removing, guard, o, s);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const stats = { modelCalls: s.calls, modelCallsCached: s.cached, offTape: s.offTape, ablated: s.applied, events: 0 };
    const trace = s.trace ? { trace: memoryTrace(s.trace.events, s.trace.blobs) } : {};
    return {
      runId: o.runId ?? "agentless",
      seed,
      actions: s.actions,
      outcome: null,
      error,
      stats,
      assumptions: this.assumptions(s.followed, s.unreached),
      unreached: [...s.unreached.keys()],
      ...trace,
    };
  }

  /** Re-simulates one thread of the plan in one arm. */
  private async thread(i: number, seed: number, ivs: Intervention[], guard: Intervention | undefined, o: RunOptions, s: ArmState): Promise<void> {
    const t = this.plan.threads[i];
    s.answers[i] = [];
    const first = t.calls[0];
    const body = cloneJson(first.body);
    const stop = this.prepare(t, first, body, ivs, s);
    if (stop) {
      if (!s.unreached.has(t.agent)) s.unreached.set(t.agent, stop);
      return;
    }
    const codec = first.codec;
    const route = this.routes.get(codec.api)!;
    const max = t.calls.length + 2;
    for (let turn = 0; turn < max; turn++) {
      const req = sendable(codec, body, seed);
      // the pair's seed is in the key even where the API takes none: pairs must not share answers
      const key = o.modelCache ? canonical([codec.api, seed, req]) : "";
      let response = o.modelCache?.get(key)?.value;
      if (response !== undefined) s.cached++;
      else {
        s.calls++;
        response = await route.send(route.url, route.headers, req);
        o.modelCache?.set(key, { value: response });
      }
      s.answers[i].push(codec.assistantText(codec.output(response)));
      note(s, { type: "decision", agent: t.agent }, "output", codec.output(response));
      const uses = codec.toolCalls(response);
      if (!uses.length) break;
      const results = uses.map((call) => this.serve(t.agent, call, ivs, guard, s));
      if (!appendTurn(codec, body, response, results))
        throw new AgentlessError(`call #${first.decision.seq}: the next turn can't be appended to a ${codec.api} request of this shape`);
    }
    s.finals[i] = s.answers[i][s.answers[i].length - 1] || undefined;
  }

  /**
   * The thread's first request with the interventions applied and the upstream answers carried in.
   * Returns why the thread can't be re-simulated, or undefined.
   */
  private prepare(t: Thread, first: RebuiltRequest, body: unknown, ivs: Intervention[], s: ArmState): string | undefined {
    const ctx = first.decision.context ?? [];
    for (const b of first.record.blocks) {
      const c = ctx[b.context];
      if (!c) continue;
      if (removes(ivs, c)) {
        if (b.keep || c.kind === "output") continue; // an assistant turn or the tool definitions: the request would be invalid
        setAt(body, b.path, first.codec.placeholder(getAt(body, b.path)));
        s.applied++;
        continue;
      }
      // an upstream answer is carried in first, so that an edit of the message edits the new answer
      if (c.kind === "message" && c.from_event) {
        const stop = this.carry(body, b.path, String(c.from_event), s);
        if (stop) return stop;
      }
      if (ivs.some((iv) => iv.edit && concerns(iv, c))) {
        let v = getAt(body, b.path);
        for (const iv of ivs) if (iv.edit && concerns(iv, c)) v = applyEdit(iv.edit, v).value;
        if (canonical(v) !== canonical(getAt(body, b.path)) && setAt(body, b.path, v)) s.applied++;
      }
    }
    return undefined;
  }

  /** Carries the replayed answer of the message's upstream call into a block; returns why it can't, or undefined. */
  private carry(body: unknown, path: (string | number)[], message: string, s: ArmState): string | undefined {
    const link = this.plan.links.get(message);
    if (!link) return undefined;
    const label = `${link.from}->${link.to}`;
    if (link.grade === "inferred")
      return `the link ${label} is inferred: the program rewrote ${link.from}'s answer before ${link.to} got it, so the new answer can't be carried over`;
    const at = this.plan.position.get(link.decision);
    if (!at) return `the link ${label} names no recorded call`;
    const upstream = this.plan.threads[at.thread];
    if (s.unreached.has(upstream.agent)) return `${upstream.agent}, before it, was not re-simulated`;
    const answers = s.answers[at.thread] ?? [];
    const now = at.index === upstream.calls.length - 1 ? s.finals[at.thread] : answers[at.index];
    if (!now) return `${link.from} gave no answer text in this replay for the link ${label}`;
    if (!carryInto(body, path, link.text, now)) return `the link ${label}: ${link.from}'s recorded answer is not in ${link.to}'s prompt as recorded`;
    note(s, { type: "message", agent: link.from, to: link.to }, "ref", getAt(body, path));
    s.followed.add(`${label} (${link.grade})`);
    return undefined;
  }

  /** A tool use served from the tape (with the interventions applied to its result), or stubbed; never run. */
  private serve(
    agent: string,
    call: ToolCallOut,
    ivs: Intervention[],
    guard: Intervention | undefined,
    s: ArmState,
  ): { call: ToolCallOut; result: unknown; isError: boolean } {
    const args = canonical(call.args ?? {});
    const base = `${agent}\u0000${call.name}\u0000${args}`;
    const occ = s.occurrences.get(base) ?? 0;
    s.occurrences.set(base, occ + 1);
    const seq = s.actions.length + 1;
    note(s, { type: "action", agent, tool: call.name }, "args_ref", call.args ?? {});
    if (guard?.guard?.target && matchesTarget(guard.guard.target, { tool: call.name, agent, args, result: "" })) {
      s.applied++;
      const result = { error: "blocked by causeway guard: the fix under test" };
      s.actions.push({ seq, agent, tool: call.name, args, result: canonical(result), mode: "blocked", status: "blocked" });
      return { call, result, isError: true };
    }
    const hit = this.plan.tape.get(tapeKey(agent, call.name, args, occ));
    if (!hit) {
      s.offTape++;
      const result = { _unrecorded: true, tool: call.name };
      s.actions.push({ seq, agent, tool: call.name, args, result: canonical(result), mode: "stub", status: "ok" });
      return { call, result, isError: false };
    }
    let result: unknown = hit.result;
    const label: ItemLike = hit.label;
    if (removes(ivs, label)) {
      result = PLACEHOLDER;
      s.applied++;
    } else {
      for (const iv of ivs) {
        if (!iv.edit || !concerns(iv, label)) continue;
        const e = applyEdit(iv.edit, result);
        if (e.changed) {
          result = e.value;
          s.applied++;
        }
      }
    }
    s.actions.push({ seq, agent, tool: call.name, args, result: canonical(hit.result ?? null), mode: "tape", status: hit.status });
    return { call, result, isError: hit.status === "error" };
  }
}
