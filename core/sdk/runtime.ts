/**
 * The SDK: record a multi-agent run as it happens.
 *
 *   const rt = …;                                   // given to your program by System.run
 *   const researcher = rt.agent("researcher", { role: "gathers facts" });
 *   const doc = researcher.observe(page, { source: "web:vendor-notes", trust: "untrusted" });
 *   const order = await researcher.act("lookup_order", { order_id: 1042 });
 *   const summary = await researcher.decide([rt.taskRef!, doc, order], { model: "claude", purpose: "summarize" });
 *   researcher.send("planner", summary);
 *
 * Every call records one event: inputs with trust labels, model calls with exactly the context they
 * saw (by content ref), tool calls linked to the decision that asked for them, and messages.
 * Trust travels: a decision's output is untrusted when anything in its context was, and messages
 * made from it inherit that. The same runtime replays a run: tool calls are served from a tape,
 * interventions remove items from every model call's context, and seeds are paired.
 */
import { performance } from "node:perf_hooks";
import { canonical, deriveSeed, refOf } from "../log/hash";
import type { ContextRecord, Site, Trust, Usage } from "../log/events";
import { Chain, newId, timestamp, type Sink } from "../log/writer";
import { Redactor } from "../log/redact";
import type { Intervention } from "../specs/grammar";
import { interveneOn, type Change } from "../specs/apply";
import { searchText, type ValueSource } from "../analysis/values";
import { guardOf, type Guard, type GuardVerdict } from "./guard";
import { captureSite } from "./site";

/** A model's answer with its token usage. Return it from a model function to record tokens. */
export class ModelOutput {
  /** Marks model outputs across copies of the SDK. */
  readonly isModelOutput = true;
  constructor(
    readonly value: unknown,
    readonly usage?: Partial<Usage>,
    /**
     * The wire request the model function sent, as the SDK adapters record it ({api, path, body,
     * blocks}: each block a path in the body and the index of the context item it holds), so the
     * run can be replayed without its program. Recorded with the decision, never sent anywhere.
     */
    readonly request?: { api: string; path: string; body: unknown; blocks: unknown[] },
  ) {}
}

/** What a model function is told about the call. */
export interface ModelCall {
  agent: string;
  model: string;
  /** The `purpose` given to `decide` ("" when none was given). */
  purpose: string;
  /** Derived from the run seed, the agent and how many calls it made before: deriveSeed(runSeed, agent, k). */
  seed: number;
  params: Record<string, unknown>;
  /** The context items (after any intervention), with their labels. */
  items: readonly Item[];
}

/** fn(contextValues, call) → output value, or a ModelOutput, or a promise of either. */
export type ModelFn = (context: unknown[], call: ModelCall) => unknown;

export interface ToolCall {
  agent: string;
  tool: string;
  runId: string;
}
/** fn(args, call) → result, or a promise of it. Throwing records {"error": message}. */
export type ToolFn = (args: any, call: ToolCall) => unknown;

/** A recorded piece of content an agent can put in a model call's context. */
export class Item {
  private _ref: string | undefined;
  constructor(
    readonly value: unknown,
    ref: string | undefined,
    /** "task" | "input" | "result" | "message" | "output" | "literal" */
    readonly kind: string,
    readonly source: string,
    readonly trust: Trust,
    /** Id of the event that recorded it. */
    readonly fromEvent: string | null,
    /** Id of the decision that produced it (outputs, and messages sent from outputs). */
    readonly decision: string | null = null,
  ) {
    this._ref = ref || undefined;
  }

  /** The content ref: sha256 of the canonical value (computed when first needed, so replays that keep nothing hash only what they use). */
  get ref(): string {
    return (this._ref ??= refOf(this.value));
  }

  record(): ContextRecord {
    return { from_event: this.fromEvent, kind: this.kind, ref: this.ref, source: this.source, trust: this.trust };
  }
}

/** Recorded tool calls served back in a replay: keyed by agent, tool, canonical arguments and occurrence. */
export interface Tape {
  lookup(agent: string, tool: string, argsCanonical: string, occurrence: number): { result: unknown; status: string } | undefined;
}

/** Shared cache of model outputs for seeded models (replays): key → output. */
export interface ModelCache {
  get(key: string): { value: unknown; usage?: Partial<Usage> } | undefined;
  set(key: string, out: { value: unknown; usage?: Partial<Usage> }): void;
}

/** One tool call as a replay reports it. */
export interface ActionSummary {
  seq: number;
  agent: string;
  tool: string;
  args: string; // canonical JSON
  result: string; // canonical JSON
  mode: "live" | "tape" | "stub" | "blocked";
  status: string;
}

export interface RuntimeOptions {
  runId: string;
  seed: number;
  sink: Sink;
  program?: string | null;
  task?: string;
  models: Record<string, ModelFn>;
  tools: Record<string, ToolFn>;
  sensitiveTools?: readonly string[];
  untrustedTools?: readonly string[];
  meta?: Record<string, unknown>;
  guard?: Guard;
  /** Replay: recorded tool results. Calls not on the tape are stubbed unless liveTools. */
  tape?: Tape;
  liveTools?: boolean;
  interventions?: readonly Intervention[];
  modelCache?: ModelCache;
  /** Hash-chain events (default true; replays that keep nothing may skip it). */
  chain?: boolean;
  /** Record where each call was made (default true). */
  captureSites?: boolean;
  /** Sites are relative to this folder (default: the working directory). */
  root?: string;
  /**
   * Cleans every blob and event field of credentials before it is hashed and stored (default: one
   * that knows the credential-looking values of the process environment). Capture layers add the
   * secrets they see (request headers, query keys) to it.
   */
  redactor?: Redactor;
}

export class ModelError extends Error {
  constructor(
    readonly agent: string,
    readonly model: string,
    cause: unknown,
  ) {
    super(`model "${model}" failed for agent ${agent}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "ModelError";
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export class Runtime {
  readonly runId: string;
  readonly seed: number;
  /** The task as a context item (undefined when the System has no task). */
  taskRef: Item | undefined;
  private readonly chain: Chain;
  private readonly agents = new Map<string, Agent>();
  private readonly pendingInbox = new Map<string, Item[]>();
  private readonly callCounts = new Map<string, number>();
  private readonly tapeCounts = new Map<string, number>();
  private readonly sensitive: Set<string>;
  private readonly untrusted: Set<string>;
  /** Content seen so far, for the guard. */
  readonly sources: ValueSource[] = [];
  readonly actions: ActionSummary[] = [];
  finished = false;
  /** Counters for replays. */
  readonly stats = { modelCalls: 0, modelCallsCached: 0, offTape: 0, ablated: 0, events: 0 };
  private readonly root: string;
  /** A fix under test: `guard:block` interventions run the guard in block mode even in a replay. */
  readonly fixGuard: Guard | undefined;

  /** The sink keeps nothing (a replay arm): no event is built, no blob hashed unless something reads its ref. */
  readonly lean: boolean;
  private leanSeq = 0;

  private _redactor: Redactor | undefined;

  constructor(readonly opts: RuntimeOptions) {
    this._redactor = opts.redactor;
    this.lean = (opts.sink as { discards?: boolean }).discards === true;
    this.runId = opts.runId;
    this.seed = opts.seed;
    this.chain = new Chain(opts.chain !== false);
    this.sensitive = new Set(opts.sensitiveTools ?? []);
    this.untrusted = new Set(opts.untrustedTools ?? []);
    this.root = opts.root ?? process.cwd();
    this.fixGuard = guardOf(opts.interventions);
  }

  /** The guard that checks calls in this run: the live one (not in replays), or a fix under test. */
  activeGuard(): Guard | undefined {
    return this.opts.guard && !this.opts.tape ? this.opts.guard : this.fixGuard;
  }

  /** What cleans this run's blobs and events of credentials (made when first needed). */
  get redactor(): Redactor {
    return (this._redactor ??= Redactor.fromEnv(process.env));
  }

  /** Where the caller is in the user's source. */
  site(): Site | undefined {
    return this.opts.captureSites === false ? undefined : captureSite(this.root);
  }

  /**
   * Seals and stores one event; returns it. `fields` may be a function, called only when the event
   * is really built (not in a lean replay arm, whose events nobody keeps).
   */
  emit(agent: string, type: string, fields: Record<string, unknown> | (() => Record<string, unknown>), site?: Site): { id: string; seq: number } & Record<string, unknown> {
    this.stats.events++;
    if (this.lean) return { id: `replay-${this.leanSeq}`, seq: this.leanSeq++ };
    const own = this.redactor.value(typeof fields === "function" ? fields() : fields);
    const e = this.chain.seal({ id: newId(), ts: timestamp(), run_id: this.runId, agent, type, ...own, ...(site ? { site } : {}) });
    this.opts.sink.event(e);
    return e as { id: string; seq: number } & Record<string, unknown>;
  }

  /** Stores a value as a blob, cleaned of credentials before it is hashed (see redact.ts); returns its ref. */
  put(value: unknown): string {
    const clean = this.redactor.value(value);
    const ref = refOf(clean);
    this.opts.sink.blob(ref, clean);
    return ref;
  }

  /** The ref of a value that an item will carry: stored now, or (lean) computed when first read. */
  refFor(value: unknown): string | undefined {
    return this.lean ? undefined : this.put(value);
  }

  /** Records content the guard may search (only when a guard is on). */
  private seen(eventId: string, seq: number, source: string, trust: Trust, kind: "task" | "input" | "result", value: unknown): void {
    if (this.activeGuard()) this.sources.push({ eventId, seq, source, trust, kind, text: searchText(value) });
  }
  /** @internal */
  saw(eventId: string, seq: number, source: string, trust: Trust, kind: "task" | "input" | "result", value: unknown): void {
    this.seen(eventId, seq, source, trust, kind, value);
  }

  start(): void {
    this.emit("run", "run.start", () => ({
      program: this.opts.program ?? null,
      seed: this.seed,
      interventions: (this.opts.interventions ?? []).map((i) => i.spec),
      models: Object.keys(this.opts.models).sort(),
      tools: Object.keys(this.opts.tools).sort(),
      meta: this.opts.meta ?? {},
      sensitive_tools: [...this.sensitive].sort(),
      untrusted_tools: [...this.untrusted].sort(),
      guard: this.opts.guard && !this.opts.tape ? this.opts.guard.describe() : null,
    }));
    if (this.opts.task !== undefined) {
      const ref = this.refFor(this.opts.task);
      const e = this.emit("run", "input", () => ({ ref, source: "task", trust: "trusted", kind: "task" }));
      this.taskRef = new Item(this.opts.task, ref, "task", "task", "trusted", e.id);
      this.seen(e.id, e.seq, "task", "trusted", "task", this.opts.task);
    }
  }

  /** Creates (or returns) an agent; records agent.start the first time. */
  agent(name: string, opts: { role?: string; parent?: string } = {}): Agent {
    const have = this.agents.get(name);
    if (have) return have;
    if (!name || name === "run") throw new Error(`"${name}" cannot name an agent`);
    this.emit(name, "agent.start", { parent: opts.parent ?? null, role: opts.role ?? "" }, this.site());
    const a = new Agent(this, name);
    this.agents.set(name, a);
    const waiting = this.pendingInbox.get(name);
    if (waiting) {
      a.received.push(...waiting);
      this.pendingInbox.delete(name);
    }
    return a;
  }

  /** @internal */
  deliver(to: string, item: Item): void {
    const a = this.agents.get(to);
    if (a) a.received.push(item);
    else this.pendingInbox.set(to, [...(this.pendingInbox.get(to) ?? []), item]);
  }

  /** @internal */
  isSensitive(tool: string, override?: boolean): boolean {
    return override ?? this.sensitive.has(tool);
  }
  /** @internal */
  isUntrustedTool(tool: string): boolean {
    return this.untrusted.has(tool);
  }
  /** @internal the k-th model call of this agent */
  nextCall(agent: string): number {
    const k = this.callCounts.get(agent) ?? 0;
    this.callCounts.set(agent, k + 1);
    return k;
  }
  /** @internal occurrence index of an identical tool call */
  nextOccurrence(key: string): number {
    const k = this.tapeCounts.get(key) ?? 0;
    this.tapeCounts.set(key, k + 1);
    return k;
  }

  /** Records run.end and closes the sink. Called by System.run when the program returns. */
  async finish(outcome?: unknown): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.emit("run", "run.end", { outcome: outcome ?? null });
    await this.opts.sink.close?.();
  }
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

export class Agent {
  /** Messages received, in order. */
  readonly received: Item[] = [];
  constructor(
    readonly rt: Runtime,
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
    const decision = opts.decision ? opts.decision.decision ?? opts.decision.fromEvent : null;
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
        const fields: Record<string, unknown> = { tool, args_ref: rt.put(args), result_ref: resultRef, decision, sensitive, mode, status, duration_ms: duration };
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
    const decision = r.decision ? r.decision.decision ?? r.decision.fromEvent : null;
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

/** A result reads as an error when it is {"error": <something>}; {"error": null} is a success. */
function isErrorResult(r: unknown): boolean {
  if (!r || typeof r !== "object" || Array.isArray(r)) return false;
  const e = (r as { error?: unknown }).error;
  return e !== undefined && e !== null && e !== "" && e !== false;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function runTool(rt: Runtime, agent: string, tool: string, args: unknown): Promise<{ result: unknown; status: "ok" | "error" }> {
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

/** Items from another copy of the SDK (a program loaded from source) are accepted by shape. */
function isItemLike(x: unknown): boolean {
  return !!x && typeof x === "object" && typeof (x as Item).ref === "string" && typeof (x as Item).kind === "string" && typeof (x as Item).record === "function";
}
function isModelOutputLike(x: unknown): boolean {
  return !!x && typeof x === "object" && (x as ModelOutput).isModelOutput === true && "value" in (x);
}
