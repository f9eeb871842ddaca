/**
 * One recorded call re-sent (rung 1): when neither the program (rung 3) nor the whole recording
 * (rung 2: a provider-run tool or provider-held state in some request, a call not recorded in
 * full) can be replayed, the call that made the target action can still be re-sent on its own,
 * with the interventions applied to its blocks (removed blocks become a placeholder so the request
 * stays valid, edits change the block) against the same request unchanged, both arms with the
 * pair's seed where the API takes one. The target is scored on the tool uses in that one answer:
 * nothing after it (tool results, later calls, other agents) is re-simulated, and no tool runs.
 *
 * The engine sees it as a System (run → actions and counts), so runTest, attribute, matrix and
 * fix-check work unchanged; `untestable(spec)` says which suspects the call can't answer for (they
 * are not in its request), and `outOfScope(target)` which targets it can't score (made by another
 * call).
 *
 * As everywhere: the run only supplies request content. The endpoint and the key come from the
 * caller's flags or environment (wire.ts), never from the run.
 */
import { canonical } from "../../log/hash";
import type { RunData } from "../../log/reader";
import type { ActionEvent, DecisionEvent } from "../../log/events";
import { RunModel } from "../../graph/model";
import { targetHits } from "../../graph/graph";
import { applyEdit } from "../../specs/apply";
import { concerns, matchesTarget, parseIntervention, parseTarget, removes, type Intervention } from "../../specs/grammar";
import { getAt, setAt } from "../../util/json-path";
import { cloneJson } from "../../adapters/shared";
import type { ActionSummary } from "../../sdk/runtime-options";
import type { RunOptions, RunResult } from "../../sdk/system";
import { EndpointError, rebuildRequest, type RebuiltRequest } from "../endpoint-replay";
import { AgentlessError } from "./plan";
import { routeFor, sendable, type EndpointOptions, type Route } from "./wire";

/** What every rung-1 test assumes, in plain sentences. */
export function oneCallAssumptions(seq: number, agent: string): string[] {
  return [
    `only the recorded call #${seq} (${agent}) that made the action is re-sent, with and without the item; nothing after it (tool results, later calls, other agents) is re-simulated`,
    "the action is scored on the tool uses of that one answer; no tool runs",
  ];
}

/** The recorded call whose answer made the first action `target` matches, or why there is none. */
export function decidingCall(m: RunModel, target: string): { decision: DecisionEvent & { line: number }; action: ActionEvent } {
  const hit = targetHits(m, target)[0] as ActionEvent | undefined;
  if (!hit) throw new AgentlessError(`the target ${JSON.stringify(target)} did not happen in this run`);
  const d = m.decisions.find((x) => x.id === hit.decision);
  if (!d) throw new AgentlessError(`the action #${hit.seq} (${hit.tool}) names no recorded model call that asked for it`);
  return { decision: d, action: hit };
}

export class OneCallSystem {
  readonly isCausewaySystem = true;
  /** A call both arms of a pair send alike is sent once (pairs share their seed). */
  readonly seededModels = true;
  readonly rung = 1 as const;
  readonly config = { models: {}, tools: {}, program: () => undefined, name: "one recorded call" as string | undefined };
  readonly call: RebuiltRequest;
  readonly assumptions: string[];
  private readonly route: Route;
  private readonly model: RunModel;
  /** The tool uses of the recorded answer (tool, canonical arguments). */
  private readonly recorded: { tool: string; args: string }[];

  /**
   * Refuses (AgentlessError, before anything is sent) when the call was not recorded in full or
   * its request itself relies on the provider (provider-held state, a tool the provider runs);
   * EndpointError when no endpoint is given for a run recorded against another one.
   */
  constructor(run: RunData, target: string, opts: EndpointOptions = {}, env: NodeJS.ProcessEnv = process.env) {
    this.model = new RunModel(run);
    const { decision } = decidingCall(this.model, target);
    try {
      this.call = rebuildRequest(this.model, decision.seq);
    } catch (err) {
      if (err instanceof EndpointError) throw new AgentlessError(`one call can't be re-sent either: ${err.message}`);
      throw err;
    }
    const codec = this.call.codec;
    const why = codec.notReplayable(this.call.body, this.model.value(decision.output));
    if (why) throw new AgentlessError(`one call can't be re-sent either: call #${decision.seq} (${decision.agent}), which made the action, ${why}`);
    this.route = routeFor(codec.api, typeof this.call.record.url === "string" ? this.call.record.url : undefined, opts, env);
    this.assumptions = oneCallAssumptions(decision.seq, String(decision.agent));
    this.recorded = this.model.actions.filter((a) => a.decision === decision.id).map((a) => ({ tool: a.tool, args: this.model.canonical(a.args_ref) }));
  }

  get name(): string | undefined {
    return this.config.name;
  }

  /** The re-sent call's decision. */
  get decision(): DecisionEvent & { line: number } {
    return this.call.decision;
  }

  /** Why `spec` can't be tested by re-sending this call (nothing of it is in the request), or undefined. */
  untestable(spec: string): string | undefined {
    const iv = parseIntervention(spec);
    if (iv.guard) return undefined; // a guard acts on the answer's tool uses
    const ctx = this.call.decision.context ?? [];
    const touched = this.call.record.blocks.some((b) => {
      const c = ctx[b.context];
      if (!c) return false;
      if (iv.edit) return concerns(iv, c);
      return removes([iv], c) && !b.keep && c.kind !== "output";
    });
    if (touched) return undefined;
    const d = this.call.decision;
    return `not in the request of call #${d.seq} (${d.agent}), the one call re-sent at rung 1`;
  }

  /** Why `target` can't be scored on this call's answer (its recorded action came from another call), or undefined. */
  outOfScope(target: string): string | undefined {
    const t = parseTarget(target);
    if (this.recorded.some((r) => matchesTarget(t, { tool: r.tool, agent: String(this.call.decision.agent), args: r.args, result: "" }))) return undefined;
    const other = targetHits(this.model, target)[0] as ActionEvent | undefined;
    const by = other ? this.model.decisions.find((d) => d.id === other.decision) : undefined;
    const d = this.call.decision;
    return `${by ? `made by call #${by.seq} (${by.agent})` : "not made"}, not by call #${d.seq} (${d.agent}), the one call re-sent at rung 1`;
  }

  async run(o: RunOptions = {}): Promise<RunResult & { assumptions: string[] }> {
    const seed = o.seed ?? 0;
    const ivs = [...(o.interventions ?? [])];
    const guard = ivs.find((iv) => iv.guard);
    const base: RunResult & { assumptions: string[] } = {
      runId: o.runId ?? "one-call",
      seed,
      actions: [],
      outcome: null,
      stats: { modelCalls: 0, modelCallsCached: 0, offTape: 0, ablated: 0, events: 0 },
      assumptions: this.assumptions,
    };
    if (guard && !guard.guard!.target)
      return { ...base, error: "guard:block without a target needs the program's live guard; without the program, name what it blocks: guard:block:TARGET" };
    const { body, applied } = this.apply(ivs.filter((iv) => !iv.guard));
    const codec = this.call.codec;
    const req = sendable(codec, body, seed);
    // the pair's seed is in the key even where the API takes none: pairs must not share answers
    const key = o.modelCache ? canonical(["one-call", codec.api, seed, req]) : "";
    let response = o.modelCache?.get(key)?.value;
    const stats = { ...base.stats, ablated: applied };
    try {
      if (response !== undefined) stats.modelCallsCached++;
      else {
        stats.modelCalls++;
        response = await this.route.send(this.route.url, this.route.headers, req);
        o.modelCache?.set(key, { value: response });
      }
    } catch (err) {
      return { ...base, stats, error: err instanceof Error ? err.message : String(err) };
    }
    const agent = String(this.call.decision.agent);
    const actions: ActionSummary[] = codec.toolCalls(response).map((c, i) => {
      const args = canonical(c.args ?? {});
      const blocked = !!guard?.guard?.target && matchesTarget(guard.guard.target, { tool: c.name, agent, args, result: "" });
      if (blocked) stats.ablated++;
      // "tape": a tool use the recorded answer had too; nothing is served or run either way
      const onTape = this.recorded.some((r) => r.tool === c.name && r.args === args);
      return { seq: i + 1, agent, tool: c.name, args, result: "", mode: blocked ? "blocked" : onTape ? "tape" : "stub", status: blocked ? "blocked" : "ok" };
    });
    return { ...base, actions, stats, outcome: null };
  }

  /** The recorded request with the interventions applied to its blocks. */
  private apply(ivs: Intervention[]): { body: unknown; applied: number } {
    const body = cloneJson(this.call.body);
    const ctx = this.call.decision.context ?? [];
    let applied = 0;
    for (const b of this.call.record.blocks) {
      const c = ctx[b.context];
      if (!c) continue;
      if (removes(ivs, c)) {
        if (b.keep || c.kind === "output") continue; // an assistant turn or the tool definitions: the request would be invalid
        setAt(body, b.path, this.call.codec.placeholder(getAt(body, b.path)));
        applied++;
        continue;
      }
      if (!ivs.some((iv) => iv.edit && concerns(iv, c))) continue;
      let v = getAt(body, b.path);
      for (const iv of ivs) if (iv.edit && concerns(iv, c)) v = applyEdit(iv.edit, v).value;
      if (canonical(v) !== canonical(getAt(body, b.path)) && setAt(body, b.path, v)) applied++;
    }
    return { body, applied };
  }
}
