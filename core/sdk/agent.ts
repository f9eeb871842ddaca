/**
 * An agent of a run: what it observes, the model calls it makes (with exactly their context), the
 * tool calls it makes (served from the tape in a replay) and the messages it sends. Each records one
 * event through the run it belongs to.
 */
import { performance } from "node:perf_hooks";
import { canonical, deriveSeed } from "../log/hash";
import type { Site, Trust, Usage } from "../log/events";
import { interveneOn, type Change } from "../specs/apply";
import type { ValueSource } from "../analysis/values";
import type { Guard, GuardVerdict } from "./guard";
import { Item, ModelError, ModelOutput, isItemLike, isModelOutputLike, type ModelCall } from "./items";
import type { ActionSummary, RuntimeOptions } from "./runtime-options";

/** What an agent asks of the run it records in: the Runtime (runtime.ts) answers it. */
export interface AgentRuntime {
  readonly runId: string;
  readonly seed: number;
  readonly opts: RuntimeOptions;
  readonly stats: { modelCalls: number; modelCallsCached: number; offTape: number; ablated: number; events: number };
  readonly sources: ValueSource[];
  readonly actions: ActionSummary[];
  readonly fixGuard: Guard | undefined;
  readonly lean: boolean;
  activeGuard(): Guard | undefined;
  site(): Site | undefined;
  emit(
    agent: string,
    type: string,
    fields: Record<string, unknown> | (() => Record<string, unknown>),
    site?: Site,
  ): { id: string; seq: number } & Record<string, unknown>;
  put(value: unknown): string;
  refFor(value: unknown): string | undefined;
  saw(eventId: string, seq: number, source: string, trust: Trust, kind: "task" | "input" | "result", value: unknown): void;
  deliver(to: string, item: Item): void;
  isSensitive(tool: string, override?: boolean): boolean;
  isUntrustedTool(tool: string): boolean;
  nextCall(agent: string): number;
  nextOccurrence(key: string): number;
}

export interface DecideOptions {
  model: string;
  purpose?: string;
  params?: Record<string, unknown>;
}

export interface ActOptions {
  /** The decision (its output item) that asked for this call. */
  decision?: Item | null;
  /** Override the run's declaration: this call is (not) sensitive. */
  sensitive?: boolean;
  /** The result is untrusted content (e.g. a fetched page). */
  untrusted?: boolean;
}

export class Agent<R extends AgentRuntime = AgentRuntime> {
  /** Messages received, in order. */
  readonly received: Item[] = [];
  constructor(
    readonly rt: R,
    readonly name: string,
  ) {}

  /** Records an input (a file, page, e-mail, user message). Unlabelled content is untrusted. */
  observe(value: unknown, opts: { source: string; trust?: Trust }): Item {
    const site = this.rt.site();
    if (!opts || typeof opts.source !== "string" || !opts.source) throw new Error("observe() needs a source");
    const trust: Trust = opts.trust === "trusted" ? "trusted" : "untrusted";
    const ref = this.rt.refFor(value);
    const e = this.rt.emit(this.name, "input", () => ({ ref, source: opts.source, trust, kind: "input" }), site);
    this.rt.saw(e.id, e.seq, opts.source, trust, "input", value);
    return new Item(value, ref, "input", opts.source, trust, e.id);
  }

  /** A model call with exactly this context. Returns its output as an item. */
  async decide(context: readonly unknown[], opts: DecideOptions): Promise<Item> {
    const site = this.rt.site();
    const rt = this.rt;
    const fn = rt.opts.models[opts.model];
    const items = context.filter((c) => c !== null && c !== undefined).map((c) => (c instanceof Item || isItemLike(c) ? (c as Item) : this.literal(c)));
    const ivs = rt.opts.interventions ?? [];
    const kept: Item[] = [];
    const ablated: Item[] = [];
    const edited: Change[] = [];
    for (const it of items) {
      const r = ivs.length ? interveneOn(ivs, it) : null;
      if (!r) kept.push(it);
      else if (r.remove) ablated.push(it);
      else {
        // the item as the edit leaves it: same label and origin, new content
        kept.push(new Item(r.value, rt.refFor(r.value), it.kind, it.source, it.trust, it.fromEvent, it.decision));
        edited.push(...r.changes);
      }
    }
    if (ablated.length || edited.length) rt.stats.ablated += ablated.length + edited.length;
    const k = rt.nextCall(this.name);
    const seed = deriveSeed(rt.seed, this.name, k);
    const params = opts.params ?? {};
    const purpose = opts.purpose ?? "";
    const call: ModelCall = { agent: this.name, model: opts.model, purpose, seed, params, items: kept };
    const values = kept.map((i) => i.value);
    const t0 = performance.now();
    let value: unknown;
    let usage: Partial<Usage> | undefined;
    let request: ModelOutput["request"];
    let failure: unknown;
    const cacheKey = rt.opts.modelCache ? canonical([opts.model, this.name, purpose, seed, params, kept.map((i) => i.ref)]) : "";
    const cached = rt.opts.modelCache?.get(cacheKey);
    if (cached) {
      ({ value, usage } = cached);
      rt.stats.modelCallsCached++;
    } else {
      try {
        if (!fn) throw new Error(`no model named "${opts.model}" (the System has: ${Object.keys(rt.opts.models).join(", ") || "none"})`);
        rt.stats.modelCalls++;
        let out = await fn(values, call);
        if (out instanceof ModelOutput || isModelOutputLike(out)) {
          usage = (out as ModelOutput).usage;
          request = (out as ModelOutput).request;
          out = (out as ModelOutput).value;
        }
        value = out;
        rt.opts.modelCache?.set(cacheKey, { value, usage });
      } catch (err) {
        failure = err;
        value = { error: errorText(err) };
      }
    }
    const duration = round3(performance.now() - t0);
    const trust: Trust = kept.some((i) => i.trust === "untrusted") ? "untrusted" : "trusted";
    const output = rt.refFor(value);
    const e = rt.emit(
      this.name,
      "decision",
      () => ({
        context: kept.map((i) => i.record()),
        model: opts.model,
        purpose,
        params,
        seed,
        output,
        ablated: ablated.map((i) => i.ref),
        ...(edited.length ? { edited: edited.map((c) => ({ spec: c.spec, before: c.before, after: c.after })) } : {}),
        status: failure === undefined ? "ok" : "error",
        duration_ms: duration,
        usage: usage ?? {},
        ...(request ? { request: rt.put(request), api: request.api } : {}),
      }),
      site,
    );
    if (failure !== undefined) throw new ModelError(this.name, opts.model, failure);
    return new Item(value, output, "output", purpose, trust, e.id, e.id);
  }

  /** A tool call, linked to the decision that asked for it. Replays serve it from the tape. */
  async act(tool: string, args: unknown = {}, opts: ActOptions = {}): Promise<Item> {
    const site = this.rt.site();
    const rt = this.rt;
    const sensitive = rt.isSensitive(tool, opts.sensitive);
    const argsCanon = canonical(args);
    const decision = opts.decision ? (opts.decision.decision ?? opts.decision.fromEvent) : null;
    let verdict: GuardVerdict | undefined;
    const guard = rt.activeGuard();
    if (guard) {
      verdict = guard.check({ runId: rt.runId, agent: this.name, tool, args, sensitive, sources: rt.sources });
    }
    const t0 = performance.now();
    let result: unknown;
    let mode: "live" | "tape" | "stub" | "blocked";
    let status: "ok" | "error" | "blocked" = "ok";
    if (verdict?.verdict === "block") {
      if (guard === rt.fixGuard) rt.stats.ablated++; // a fix under test acted
      mode = "blocked";
      status = "blocked";
      result = { error: `blocked by causeway guard: ${verdict.reason}` };
    } else if (rt.opts.tape) {
      const occ = rt.nextOccurrence(`${this.name}\u0000${tool}\u0000${argsCanon}`);
      const hit = rt.opts.tape.lookup(this.name, tool, argsCanon, occ);
      if (hit) {
        mode = "tape";
        result = hit.result;
        status = hit.status === "error" ? "error" : hit.status === "blocked" ? "blocked" : "ok";
      } else if (rt.opts.liveTools) {
        mode = "live";
        rt.stats.offTape++;
        ({ result, status } = await runTool(rt, this.name, tool, args));
      } else {
        mode = "stub";
        rt.stats.offTape++;
        result = { _unrecorded: true, tool };
      }
    } else {
      mode = "live";
      ({ result, status } = await runTool(rt, this.name, tool, args));
    }
    const duration = round3(performance.now() - t0);
    const resultRef = rt.refFor(result);
    const e = rt.emit(
      this.name,
      "action",
      () => {
        const fields: Record<string, unknown> = {
          tool,
          args_ref: rt.put(args),
          result_ref: resultRef,
          decision,
          sensitive,
          mode,
          status,
          duration_ms: duration,
        };
        if (verdict && verdict.verdict !== "allow") fields.guard = { verdict: verdict.verdict, reason: verdict.reason, alerts: verdict.alerts };
        return fields;
      },
      site,
    );
    rt.actions.push(summary(e.seq, this.name, tool, argsCanon, result, mode, status));
    const untrusted = opts.untrusted ?? rt.isUntrustedTool(tool);
    if (mode !== "blocked") rt.saw(e.id, e.seq, tool, untrusted ? "untrusted" : "trusted", "result", result);
    if (untrusted && mode !== "blocked") {
      const src = `tool:${tool}`;
      const ie = rt.emit(this.name, "input", () => ({ ref: resultRef, source: src, trust: "untrusted", kind: "input" }), site);
      return new Item(result, resultRef, "input", src, "untrusted", ie.id);
    }
    // a result inherits the trust of the decision that asked for it
    return new Item(result, resultRef, "result", tool, opts.decision?.trust ?? "trusted", e.id);
  }

  /** Sends content (an item, or a plain value) to another agent. */
  send(to: string, content: unknown, extra?: Record<string, unknown>): Item {
    const site = this.rt.site();
    const item = content instanceof Item || isItemLike(content) ? (content as Item) : null;
    const value = item ? item.value : content;
    const ref = item ? (this.rt.lean ? undefined : item.ref) : this.rt.refFor(value);
    const trust: Trust = item ? item.trust : "trusted";
    const decision = item?.decision ?? null;
    const e = this.rt.emit(this.name, "message", () => ({ ...extra, ref: ref ?? item!.ref, to, decision, trust }), site);
    const msg = new Item(value, ref, "message", `${this.name}->${to}`, trust, e.id, decision);
    this.rt.deliver(to, msg);
    return msg;
  }

  /** Messages received so far, in order. */
  inbox(): Item[] {
    return [...this.received];
  }

  /**
   * Records a model call your own code already made (e.g. through a client library). Nothing is
   * called; interventions can't reach it, so replays of such calls need an adapter.
   */
  recordDecision(r: {
    context: readonly unknown[];
    output: unknown;
    model: string;
    purpose?: string;
    params?: Record<string, unknown>;
    usage?: Partial<Usage>;
    durationMs?: number;
    status?: "ok" | "error";
    seed?: number | null;
    extra?: Record<string, unknown>;
  }): Item {
    const site = this.rt.site();
    const items = r.context.filter((c) => c !== null && c !== undefined).map((c) => (c instanceof Item || isItemLike(c) ? (c as Item) : this.literal(c)));
    const output = this.rt.refFor(r.output);
    const trust: Trust = items.some((i) => i.trust === "untrusted") ? "untrusted" : "trusted";
    const e = this.rt.emit(
      this.name,
      "decision",
      () => ({
        context: items.map((i) => i.record()),
        model: r.model,
        purpose: r.purpose ?? "",
        params: r.params ?? {},
        seed: r.seed ?? null,
        output,
        ablated: [],
        status: r.status ?? "ok",
        duration_ms: r.durationMs === undefined ? null : round3(r.durationMs),
        usage: r.usage ?? {},
        ...(r.extra ?? {}),
      }),
      site,
    );
    return new Item(r.output, output, "output", r.purpose ?? "", trust, e.id, e.id);
  }

  /**
   * Records a tool call your own code already ran. In a replay the call has really run again: it
   * counts in off_tape_actions.
   */
  recordAction(r: {
    tool: string;
    args: unknown;
    result: unknown;
    decision?: Item | null;
    status?: "ok" | "error" | "blocked";
    durationMs?: number;
    sensitive?: boolean;
    untrusted?: boolean;
    mode?: "live" | "tape" | "stub" | "blocked";
  }): Item {
    const site = this.rt.site();
    const rt = this.rt;
    if (rt.opts.tape) rt.stats.offTape++;
    const resultRef = rt.refFor(r.result);
    const status = r.status ?? (isErrorResult(r.result) ? "error" : "ok");
    const decision = r.decision ? (r.decision.decision ?? r.decision.fromEvent) : null;
    const mode = r.mode ?? (status === "blocked" ? "blocked" : "live");
    const e = rt.emit(
      this.name,
      "action",
      () => ({
        tool: r.tool,
        args_ref: rt.put(r.args),
        result_ref: resultRef,
        decision,
        sensitive: rt.isSensitive(r.tool, r.sensitive),
        mode,
        status,
        duration_ms: r.durationMs === undefined ? null : round3(r.durationMs),
      }),
      site,
    );
    rt.actions.push(summary(e.seq, this.name, r.tool, canonical(r.args), r.result, mode, status));
    const untrusted = r.untrusted ?? rt.isUntrustedTool(r.tool);
    if (status !== "blocked") rt.saw(e.id, e.seq, r.tool, untrusted ? "untrusted" : "trusted", "result", r.result);
    if (untrusted && status !== "blocked") {
      const src = `tool:${r.tool}`;
      const ie = rt.emit(this.name, "input", () => ({ ref: resultRef, source: src, trust: "untrusted", kind: "input" }), site);
      return new Item(r.result, resultRef, "input", src, "untrusted", ie.id);
    }
    return new Item(r.result, resultRef, "result", r.tool, r.decision?.trust ?? "trusted", e.id);
  }

  /** A plain value put in a context by the program itself (a prompt): trusted, recorded as a blob. */
  private literal(value: unknown): Item {
    return new Item(value, this.rt.refFor(value), "literal", "literal", "trusted", null);
  }
}

/** Milliseconds rounded to three decimals, as events record durations. */
function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** A result reads as an error when it is {"error": <something>}; {"error": null} is a success. */
function isErrorResult(r: unknown): boolean {
  if (!r || typeof r !== "object" || Array.isArray(r)) return false;
  const e = (r as { error?: unknown }).error;
  return e !== undefined && e !== null && e !== "" && e !== false;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function runTool(rt: AgentRuntime, agent: string, tool: string, args: unknown): Promise<{ result: unknown; status: "ok" | "error" }> {
  const fn = rt.opts.tools[tool];
  if (!fn) return { result: { error: `unknown tool "${tool}"` }, status: "error" };
  try {
    const result = await fn(args, { agent, tool, runId: rt.runId });
    return { result: result === undefined ? null : result, status: isErrorResult(result) ? "error" : "ok" };
  } catch (err) {
    return { result: { error: errorText(err) }, status: "error" };
  }
}

/** A tool call as a replay reports it; the result's canonical JSON is computed only if a target reads it. */
function summary(seq: number, agent: string, tool: string, args: string, result: unknown, mode: ActionSummary["mode"], status: string): ActionSummary {
  let canon: string | undefined;
  return {
    seq,
    agent,
    tool,
    args,
    get result(): string {
      return (canon ??= canonical(result));
    },
    mode,
    status,
  };
}
