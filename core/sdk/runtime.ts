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
 *
 * This file holds the Runtime (the run's state and its event chain) and its Agent; the items it
 * hands around are in items.ts, the agent's code in agent.ts, what it is given in
 * runtime-options.ts.
 */
import { refOf } from "../log/hash";
import type { Site, Trust } from "../log/events";
import { Chain, newId, timestamp } from "../log/writer";
import { Redactor } from "../log/redact";
import { searchText, type ValueSource } from "../analysis/values";
import { guardOf, type Guard } from "./guard";
import { captureSite } from "./site";
import { Item } from "./items";
import { Agent as AgentOf, type AgentRuntime } from "./agent";
import type { ActionSummary, RuntimeOptions } from "./runtime-options";

/** An agent of a {@link Runtime}: its `rt` is the Runtime it records in. */
export type Agent = AgentOf<Runtime>;
export const Agent = AgentOf;

export class Runtime implements AgentRuntime {
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
  emit(
    agent: string,
    type: string,
    fields: Record<string, unknown> | (() => Record<string, unknown>),
    site?: Site,
  ): { id: string; seq: number } & Record<string, unknown> {
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
    const a = new AgentOf<Runtime>(this, name);
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
