/**
 * What the SDK adapters and the gateway share: a {@link ConversationRecorder} turns each model
 * exchange (request body, response) of one agent into events. Every system prompt, message block
 * and tool result of the request becomes a context item — recorded once, the first time it is
 * seen, and reused when the history is sent again — and the decision records the full request
 * (as a template plus the items that fill it), so a decision replay can re-send it with one block
 * replaced by a placeholder. A tool call in a response is linked to the decision that asked for it
 * when its result comes back: through {@link ConversationRecorder.runTool} (guard check, run,
 * record) or, failing that, when the result appears in the next request.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { canonical } from "../log/hash";
import type { Trust, Usage } from "../log/events";
import { FileSink, type Sink } from "../log/writer";
import type { Redactor } from "../log/redact";
import { searchText } from "../analysis/values";
import { Guard, type GuardMode, type GuardVerdict } from "../sdk/guard";
import { Item } from "../sdk/items";
import { Runtime, type Agent } from "../sdk/runtime";
import { freeRunId } from "../sdk/system";
import { fillFor } from "./codecs";
import type { Codec, RequestBlock, ToolCallOut } from "./codec";
import { setAt, type JsonPath } from "../util/json-path";

/** Options of an adapter or a gateway agent. */
export interface CaptureOptions {
  /** Tools whose results are untrusted content (fetched pages, e-mails…), besides the run's own list. */
  untrustedTools?: readonly string[];
  /** Trust of user messages (default trusted). */
  userTrust?: Trust;
  /** Trust of system and developer prompts (default trusted). */
  systemTrust?: Trust;
  /** The decision's purpose (default: the API, e.g. "chat"). */
  purpose?: string;
  /**
   * The item a user block stands for when it is not new content (e.g. another agent's output
   * relayed as this agent's prompt, or a fetched document pasted in), else undefined.
   */
  link?: (value: unknown, agent: Agent) => Item | undefined;
  /**
   * A tool call of another agent's conversation, seen in this agent's request (a conversation
   * handed over): the item its result ("result") or the decision that asked for it ("decision")
   * stands for here, else undefined.
   */
  linkCall?: (callId: string, part: "result" | "decision", agent: Agent) => Item | undefined;
  /**
   * How a tool result that comes back in a request is named and trusted (the gateway: by tool and
   * arguments, untrusted unless trusted); default `tool:NAME`, trusted unless an untrusted tool.
   */
  nameResult?: (call: ToolCallOut) => Omit<ResultNaming, "mode">;
}

/** How a tool result is recorded: the input's name and trust (default `tool:NAME`, trust by the tool lists). */
export interface ResultNaming {
  source?: string;
  untrusted?: boolean;
  /** How the call was served, asked once it has finished (a replay's tape or stub; default live). */
  mode?: () => "live" | "tape" | "stub";
}

/** How one block of a recorded request is rebuilt: which context item, and whether it fills a hole. */
export interface RecordedBlock {
  path: JsonPath;
  /** Index into the decision's context. */
  context: number;
  /** The template holds null here, filled from the item's value ("value") or its JSON text ("json"). */
  fill?: "value" | "json";
  /** Not removable (an assistant turn or the tool definitions). */
  keep?: true;
}

/** The blob a decision's `request` field names. */
export interface RecordedRequest {
  api: string;
  /** Request path, as the SDK convention for this API has it (informational). */
  path: string;
  /** Where it was sent (informational; replays never send to a URL read from a run). */
  url?: string;
  body: unknown;
  blocks: RecordedBlock[];
}

/** A tool call that was asked for and whose result has not been recorded yet. */
export interface PendingCall extends ToolCallOut {
  decision: Item;
}

export interface ExchangeOutcome {
  response?: unknown;
  /** The call failed (HTTP error, network, exception). */
  error?: string;
  durationMs?: number;
  url?: string;
}

/** Records the model exchanges and tool calls of one agent. */
export class ConversationRecorder {
  private readonly inputs = new Map<string, Item>();
  private readonly results = new Map<string, Item>();
  private readonly pending = new Map<string, PendingCall>();
  private readonly outputsByCall = new Map<string, Item>();
  private readonly outputsByText = new Map<string, Item>();
  private readonly untrusted: Set<string>;

  constructor(
    readonly agent: Agent,
    readonly opts: CaptureOptions = {},
  ) {
    this.untrusted = new Set(opts.untrustedTools ?? []);
  }

  get rt(): Runtime {
    return this.agent.rt;
  }

  /** Tool calls asked for whose results have not come back. */
  pendingCalls(): PendingCall[] {
    return [...this.pending.values()];
  }

  /** The pending call with this id, if any. */
  pendingCall(id: string): PendingCall | undefined {
    return this.pending.get(id);
  }

  /** A result was recorded for this tool call id (through runTool, toolResult, settle or a request). */
  hasResult(id: string): boolean {
    return this.results.has(id);
  }

  /** The item the result of this tool call stands for, once recorded. */
  resultOf(id: string): Item | undefined {
    return this.results.get(id);
  }

  /** The decision (its output item) that asked for this tool call. */
  decisionOf(id: string): Item | undefined {
    return this.outputsByCall.get(id);
  }

  /**
   * A call the framework answered itself, not a tool (a handoff): no action is recorded; its result
   * block stands for `item` (e.g. the message the handoff is).
   */
  settle(id: string, item: Item): void {
    this.results.set(id, item);
    this.pending.delete(id);
  }

  /** A tool call a guardrail of the program refused: recorded as a blocked action, nothing run. */
  blocked(call: ToolCallOut | string, reason: string): Item {
    const c = this.resolve(call);
    const item = this.recordCall(c, { error: `blocked: ${reason}` }, { status: "blocked", mode: "blocked", verdict: { verdict: "block", reason, alerts: [] } });
    this.results.set(c.id, item);
    this.pending.delete(c.id);
    return item;
  }

  isUntrustedTool(tool: string): boolean {
    return this.untrusted.has(tool) || this.rt.isUntrustedTool(tool);
  }

  /** The context item each block of a request stands for (recording the new ones), or null. */
  itemsFor(codec: Codec, body: unknown): { block: RequestBlock; item: Item | null }[] {
    const history = new Map(codec.callsInRequest(body).map((c) => [c.id, c]));
    return codec.blocks(body).map((block) => ({ block, item: this.itemFor(codec, block, history) }));
  }

  /** Records one model call: its context items, the request, the output and the tool calls it asked for. */
  exchange(codec: Codec, body: unknown, out: ExchangeOutcome): Item {
    const blocks = codec.blocks(body);
    const history = new Map(codec.callsInRequest(body).map((c) => [c.id, c]));
    const context: Item[] = [];
    const at = new Map<Item, number>();
    const recorded: RecordedBlock[] = [];
    const template = cloneJson(body);
    for (const b of blocks) {
      const item = this.itemFor(codec, b, history);
      if (!item) continue;
      let i = at.get(item);
      if (i === undefined) {
        i = context.length;
        at.set(item, i);
        context.push(item);
      }
      const fill = fillFor(b.value, item.value);
      if (fill) setAt(template, b.path, null);
      recorded.push({ path: b.path, context: i, ...(fill ? { fill } : {}), ...(b.removable ? {} : { keep: true as const }) });
    }
    const request: RecordedRequest = { api: codec.api, path: codec.path, ...(out.url ? { url: out.url } : {}), body: template, blocks: recorded };
    const requestRef = this.rt.put(request);
    const ok = out.error === undefined;
    const output = ok ? codec.output(out.response) : { error: out.error };
    const usage = ok ? cleanUsage(codec.usage(out.response)) : {};
    const b = (body ?? {}) as Record<string, unknown>;
    const item = this.agent.recordDecision({
      context,
      output,
      model: typeof b.model === "string" ? b.model : "unknown",
      purpose: this.opts.purpose ?? codec.api.split(".")[1],
      params: codec.params(body),
      usage,
      durationMs: out.durationMs,
      status: ok ? "ok" : "error",
      seed: Number.isSafeInteger(b.seed) ? (b.seed as number) : null,
      extra: { request: requestRef, api: codec.api },
    });
    if (ok) {
      for (const c of codec.toolCalls(out.response)) {
        this.pending.set(c.id, { ...c, decision: item });
        this.outputsByCall.set(c.id, item);
      }
      const text = codec.assistantText(output);
      if (text) this.outputsByText.set(text, item);
    }
    return item;
  }

  /** Records a tool's result for a call the model asked for (without running anything). */
  toolResult(call: ToolCallOut | string, result: unknown, opts: { status?: "ok" | "error"; durationMs?: number } = {}): Item {
    const c = this.resolve(call);
    const status = opts.status ?? (isErrorResult(result) ? "error" : "ok");
    const item = this.recordCall(c, result, { status, mode: "live", durationMs: opts.durationMs });
    this.results.set(c.id, item);
    this.pending.delete(c.id);
    return item;
  }

  /**
   * Guard check → run → record. In block mode a call the guard blocks does not run: its result is
   * an error and the action is recorded as blocked with the verdict.
   */
  async runTool(
    call: ToolCallOut | string,
    fn: (args: any) => unknown,
    naming: ResultNaming = {},
  ): Promise<{ result: unknown; status: "ok" | "error" | "blocked"; item: Item }> {
    const c = this.resolve(call);
    const rt = this.rt;
    const sensitive = rt.isSensitive(c.name);
    let verdict: GuardVerdict | undefined;
    if (rt.opts.guard && !rt.opts.tape)
      verdict = rt.opts.guard.check({ runId: rt.runId, agent: this.agent.name, tool: c.name, args: c.args, sensitive, sources: rt.sources });
    const t0 = performance.now();
    let result: unknown;
    let status: "ok" | "error" | "blocked";
    if (verdict?.verdict === "block") {
      result = { error: `blocked by causeway guard: ${verdict.reason}` };
      status = "blocked";
    } else {
      try {
        result = await fn(c.args);
        if (result === undefined) result = null;
        status = isErrorResult(result) ? "error" : "ok";
      } catch (err) {
        result = { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
        status = "error";
      }
    }
    const item = this.recordCall(c, result, {
      ...naming,
      status,
      mode: status === "blocked" ? "blocked" : (naming.mode?.() ?? "live"),
      durationMs: performance.now() - t0,
      verdict,
    });
    this.results.set(c.id, item);
    this.pending.delete(c.id);
    return { result, status, item };
  }

  /** Records the calls nobody sent a result back for (result null), e.g. when a gateway closes. */
  closePending(): void {
    for (const c of [...this.pending.values()]) {
      const item = this.recordCall(c, null, { status: "ok", mode: "live", unanswered: true });
      this.results.set(c.id, item);
      this.pending.delete(c.id);
    }
  }

  private resolve(call: ToolCallOut | string): PendingCall | (ToolCallOut & { decision: null }) {
    const id = typeof call === "string" ? call : call.id;
    const p = this.pending.get(id);
    if (p) return p;
    if (typeof call === "string") throw new Error(`no tool call ${JSON.stringify(id).slice(0, 80)} is waiting for a result`);
    return { ...call, decision: null };
  }

  /** The context item a request block stands for (recording it when new), or null for parts that are not items. */
  private itemFor(codec: Codec, b: RequestBlock, history: Map<string, ToolCallOut>): Item | null {
    switch (b.role) {
      case "system":
      case "developer":
        return this.input(b.role, b.value, this.opts.systemTrust ?? "trusted");
      case "user":
        return this.opts.link?.(b.value, this.agent) ?? this.input("user", b.value, this.opts.userTrust ?? "trusted");
      case "tools":
        return this.input("tools", b.value, "trusted");
      case "tool": {
        const id = b.toolCallId;
        if (!id) return this.input("tool-result", b.value, "untrusted");
        const have = this.results.get(id) ?? (this.pending.has(id) ? undefined : this.opts.linkCall?.(id, "result", this.agent));
        if (have) return have;
        const call: PendingCall | (ToolCallOut & { decision: null }) | undefined =
          this.pending.get(id) ?? (history.has(id) ? { ...history.get(id)!, decision: null } : undefined);
        if (!call) return this.input(`tool-result:${id.slice(0, 64)}`, b.value, "untrusted");
        const item = this.recordCall(call, b.value, { status: b.isError ? "error" : "ok", mode: "live", ...this.opts.nameResult?.(call) });
        this.results.set(id, item);
        this.pending.delete(id);
        return item;
      }
      case "assistant": {
        for (const id of b.callIds ?? []) {
          const d = this.outputsByCall.get(id) ?? this.opts.linkCall?.(id, "decision", this.agent);
          if (d) return d;
        }
        const text = codec.assistantText(b.value);
        const d = text ? (this.outputsByText.get(text) ?? this.opts.link?.(text, this.agent)) : undefined;
        return d ?? this.input("assistant", b.value, "trusted");
      }
    }
  }

  /** An input item, recorded the first time this role sends this content. */
  private input(source: string, value: unknown, trust: Trust): Item {
    const key = `${source}\u0000${trust}\u0000${canonical(value ?? null)}`;
    let item = this.inputs.get(key);
    if (!item) {
      item = this.agent.observe(value ?? null, { source, trust });
      this.inputs.set(key, item);
    }
    return item;
  }

  /** Records an action (and, for an untrusted tool, its result as untrusted input); returns the result's item. */
  private recordCall(
    c: ToolCallOut & { decision: Item | null },
    result: unknown,
    o: {
      status: "ok" | "error" | "blocked";
      mode: "live" | "tape" | "stub" | "blocked";
      durationMs?: number;
      verdict?: GuardVerdict;
      unanswered?: boolean;
    } & Omit<ResultNaming, "mode">,
  ): Item {
    const rt = this.rt;
    const site = rt.site();
    const argsRef = rt.put(c.args ?? {});
    const resultRef = o.unanswered ? null : rt.put(result);
    const fields: Record<string, unknown> = {
      tool: c.name,
      args_ref: argsRef,
      result_ref: resultRef,
      decision: c.decision ? (c.decision.decision ?? c.decision.fromEvent) : null,
      sensitive: rt.isSensitive(c.name),
      mode: o.mode,
      status: o.status,
      duration_ms: o.durationMs === undefined ? null : Math.round(o.durationMs * 1000) / 1000,
      tool_call_id: c.id,
    };
    if (o.unanswered) fields.result_seen = false;
    if (o.verdict && o.verdict.verdict !== "allow") fields.guard = { verdict: o.verdict.verdict, reason: o.verdict.reason, alerts: o.verdict.alerts };
    const e = rt.emit(this.agent.name, "action", fields, site);
    const seq = e.seq;
    rt.actions.push({
      seq,
      agent: this.agent.name,
      tool: c.name,
      args: canonical(c.args ?? {}),
      result: o.unanswered ? "" : canonical(result),
      mode: o.mode,
      status: o.status,
    });
    const untrusted = o.untrusted ?? this.isUntrustedTool(c.name);
    const blocked = o.status === "blocked";
    if (!blocked && resultRef) {
      rt.sources.push({ eventId: e.id, seq, source: c.name, trust: untrusted ? "untrusted" : "trusted", kind: "result", text: searchText(result) });
    }
    if (untrusted && !blocked && resultRef) {
      const src = o.source ?? `tool:${c.name}`;
      const ie = rt.emit(this.agent.name, "input", { ref: resultRef, source: src, trust: "untrusted", kind: "input" }, site);
      return new Item(result, resultRef, "input", src, "untrusted", ie.id);
    }
    return new Item(result, resultRef ?? argsRef, "result", c.name, c.decision?.trust ?? "trusted", e.id);
  }
}

/** A result reads as an error when it is {"error": <something>}. */
export function isErrorResult(r: unknown): boolean {
  if (!r || typeof r !== "object" || Array.isArray(r)) return false;
  const e = (r as { error?: unknown }).error;
  return e !== undefined && e !== null && e !== "" && e !== false;
}

function cleanUsage(u: Record<string, number | undefined>): Partial<Usage> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(u)) if (typeof v === "number") out[k] = v;
  return out;
}

/** A JSON copy (drops undefined and functions); values that can't be copied become null. */
export function cloneJson(v: unknown): unknown {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? null : JSON.parse(s);
  } catch {
    return null;
  }
}

/** Error text of anything thrown. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 2000);
  return String(err).slice(0, 2000);
}

export interface OpenRunOptions {
  /** Runs root (default "runs"); the run is written to <out>/<runId>/. Ignored with `sink`. */
  out?: string;
  runId?: string;
  /** Where events go instead of a folder (an HttpSink, a TeeSink…). */
  sink?: Sink;
  task?: string;
  /** run.start's program: the command line that was recorded, when there is one. */
  program?: string;
  sensitiveTools?: readonly string[];
  untrustedTools?: readonly string[];
  guard?: Guard | GuardMode;
  meta?: Record<string, unknown>;
  seed?: number;
  /** Folder recorded sites are relative to (default: the working directory). */
  root?: string;
  /** Record where in the caller's source each call was made (default true). */
  captureSites?: boolean;
  /** Cleans what is recorded of credentials (default: one knowing the environment's; see redact.ts). */
  redactor?: Redactor;
}

/**
 * Starts recording a run for code that calls models itself (through an adapter): writes run.start
 * (and the task). Call `rt.finish()` at the end.
 */
export function openRun(opts: OpenRunOptions = {}): Runtime {
  let sink = opts.sink;
  let runId = opts.runId;
  if (!sink) {
    const root = opts.out ?? "runs";
    runId = runId ?? freeRunId(root, `agent-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`);
    sink = new FileSink(path.join(root, runId));
  }
  const guard = typeof opts.guard === "string" ? new Guard(opts.guard) : opts.guard;
  const rt = new Runtime({
    runId: runId ?? sink.runIdFor?.("agent") ?? "agent-run",
    seed: opts.seed ?? 0,
    sink,
    program: opts.program ?? null,
    task: opts.task,
    models: {},
    tools: {},
    sensitiveTools: opts.sensitiveTools,
    untrustedTools: opts.untrustedTools,
    meta: { recorded_by: "causeway adapter", ...(opts.meta ?? {}) },
    guard: guard && guard.mode !== "off" ? guard : undefined,
    root: opts.root,
    captureSites: opts.captureSites,
    redactor: opts.redactor,
  });
  rt.start();
  return rt;
}

/** The folder a run opened by {@link openRun} is written to, when it writes to one. */
export function runDir(rt: Runtime): string | undefined {
  const s = rt.opts.sink;
  return s instanceof FileSink ? s.dir : undefined;
}
