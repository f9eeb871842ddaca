/**
 * The OpenAI Agents SDK (`@openai/agents`, whose core is `@openai/agents-core`) under the preload.
 * Model calls are still taken at `fetch` like any client's (never twice); this file only adds what
 * the framework knows and the wire doesn't:
 *
 * - which `Agent` is running: every `Runner.run` gets a scope holding the current agent, moved on
 *   by the runner's own `agent_start` / `agent_handoff` events, so each model call is recorded
 *   under that agent's name;
 * - function tools (`tool({ execute })`) are actions: their `invoke` goes through the preload's
 *   tool path (linked to the model's call, served from the tape in a replay, run only when live);
 * - a handoff is a message from the agent that handed off to the one that takes over (the
 *   decision that asked for it), and the conversation handed over keeps its items (a document
 *   fetched by the first agent is the same input in the second one's context);
 * - an agent used as a tool (`agent.asTool()`) is not an action: its input is a message from the
 *   calling agent, its answer a message back;
 * - a guardrail that blocks (a tool input guardrail rejecting or throwing, an agent's input or
 *   output guardrail tripping) is recorded as a blocked action of the agent.
 *
 * The SDK's own tracing is left alone.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { canonical } from "../log/hash";
import type { ConversationRecorder } from "../adapters/shared";
import type { Agent } from "../sdk/runtime";
import type { Item } from "../sdk/items";
import type { PreloadConfig } from "../replay/preload-contract";
import { isObjectLike } from "../util/guards";

type Obj = Record<string, unknown>;
type Fn = (this: unknown, ...a: unknown[]) => unknown;

/** What the SDK's patches need of the preload (core/register/preload.ts). */
export interface AgentsSdkHost {
  readonly cfg: Pick<PreloadConfig, "trusted">;
  /** Frameworks that know which of their agents is making the current model call. */
  readonly agentHints: (() => string | undefined)[];
  /** What could not be recorded, written in the run's summary. */
  readonly problems: string[];
  /** One tool execution: recorded, linked to the model's call, served from the tape in a replay. */
  tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link?: boolean, callId?: string): Promise<unknown>;
  recorderFor(name: string): ConversationRecorder;
  messageFor(from: Agent, output: Item, to: string): Item;
  outputOf(text: string): { agent: Agent; item: Item } | undefined;
  noteOutput(text: string, agent: Agent, item: Item): void;
}

/** The agent a run (or a nested run of an agent used as a tool) is at. */
interface RunScope {
  agent: string | undefined;
  /** Inside an agent used as a tool: the calling agent and the decision that called it. */
  caller?: { agent: Agent; decision: Item };
}

const runs = new AsyncLocalStorage<RunScope>();
const wrapped = new WeakSet<object>();
/** Tools made by `Agent.asTool()` → the agent they run. */
const agentTools = new WeakMap<object, Obj>();

const nameOf = (agent: unknown): string | undefined => (isObjectLike(agent) && typeof agent.name === "string" && agent.name ? agent.name : undefined);

/** A tool's JSON arguments as the model sent them → the object recorded (anything else under `input`). */
function argsOf(input: unknown): Obj {
  if (typeof input !== "string") return isObjectLike(input) && !Array.isArray(input) ? input : { input: input ?? null };
  try {
    const v = JSON.parse(input || "{}");
    return isObjectLike(v) && !Array.isArray(v) ? v : { input: v };
  } catch {
    return { input };
  }
}

function classOf(ns: Obj, name: string): { prototype: Obj } | undefined {
  const c = ns[name] as { prototype?: unknown } | undefined;
  return typeof c === "function" && isObjectLike(c.prototype) ? c : undefined;
}

/** Patches the SDK's core module (its exports `ns`) once. */
export function patchAgentsSdk(p: AgentsSdkHost, ns: Obj): void {
  const Runner = classOf(ns, "Runner");
  const AgentClass = classOf(ns, "Agent");
  if (typeof Runner?.prototype.run !== "function" || typeof Runner.prototype.emit !== "function" || typeof AgentClass?.prototype.getAllTools !== "function") {
    p.problems.push("the OpenAI Agents SDK's Runner or Agent has an unknown shape: its agents, handoffs and tools are not recorded");
    return;
  }
  p.agentHints.push(() => runs.getStore()?.agent);

  const run = Runner.prototype.run as Fn;
  Runner.prototype.run = function (this: unknown, agent: unknown, input: unknown, ...rest: unknown[]) {
    watchGuardrails(p, agent);
    // an agent used as a tool: the prompt its run is given is the calling agent's message
    const caller = runs.getStore()?.caller;
    if (caller) for (const text of promptTexts(input)) p.noteOutput(text, caller.agent, caller.decision);
    return runs.run({ agent: nameOf(agent) }, () => run.call(this, agent, input, ...rest));
  };

  const emit = Runner.prototype.emit as Fn;
  Runner.prototype.emit = function (this: unknown, type: unknown, ...args: unknown[]) {
    const scope = runs.getStore();
    try {
      if (scope && type === "agent_start") {
        scope.agent = nameOf(args[1]) ?? scope.agent;
        watchGuardrails(p, args[1]);
      } else if (scope && type === "agent_handoff") {
        handoff(p, ns, args[1], args[2]);
        scope.agent = nameOf(args[2]) ?? scope.agent;
        watchGuardrails(p, args[2]);
      }
    } catch (err) {
      p.problems.push(`recording the OpenAI Agents SDK's ${String(type)} failed: ${(err as Error).message}`);
    }
    return emit.call(this, type, ...args);
  };

  const getAllTools = AgentClass.prototype.getAllTools as Fn;
  AgentClass.prototype.getAllTools = async function (this: Obj, ...a: unknown[]) {
    const tools = await getAllTools.apply(this, a);
    // MCP tools are left to the MCP client's interception; only the agent's own tools are wrapped
    const own = new Set(Array.isArray(this.tools) ? this.tools : []);
    if (Array.isArray(tools)) for (const t of tools) if (own.has(t)) wrapTool(p, t);
    return tools;
  };

  const asTool = AgentClass.prototype.asTool as Fn | undefined;
  if (typeof asTool === "function") {
    AgentClass.prototype.asTool = function (this: Obj, ...a: unknown[]) {
      const t = asTool.apply(this, a);
      if (isObjectLike(t)) agentTools.set(t, this);
      return t;
    };
  }
}

/** The text of a run's input: a string, or the user messages of a list of items. */
function promptTexts(input: unknown): string[] {
  if (typeof input === "string") return [input];
  if (!Array.isArray(input)) return [];
  return input.filter((it): it is Obj => isObjectLike(it) && it.role === "user" && typeof it.content === "string").map((it) => it.content as string);
}

/** The handoff from `from` to `to`: the handoff call answered by a message between the two agents. */
function handoff(p: AgentsSdkHost, ns: Obj, from: unknown, to: unknown): void {
  const fromName = nameOf(from);
  const toName = nameOf(to);
  if (!fromName || !toName || !isObjectLike(from)) return;
  const getHandoff = typeof ns.getHandoff === "function" ? (ns.getHandoff as (h: unknown) => unknown) : (h: unknown) => h;
  const names = new Set<string>();
  for (const h of Array.isArray(from.handoffs) ? from.handoffs : []) {
    const ho = getHandoff(h);
    if (isObjectLike(ho) && typeof ho.toolName === "string") names.add(ho.toolName);
  }
  const rec = p.recorderFor(fromName);
  const calls = rec.pendingCalls().filter((c) => names.has(c.name));
  if (!calls.length) {
    p.problems.push(`the handoff from ${fromName} to ${toName} matched no tool call of ${fromName}'s model`);
    return;
  }
  const msg = p.messageFor(rec.agent, calls[0].decision, toName);
  for (const c of calls) rec.settle(c.id, msg);
}

/** A function tool of an agent: its runs recorded as actions (an agent used as a tool: as messages). */
function wrapTool(p: AgentsSdkHost, t: unknown): void {
  if (!isObjectLike(t) || wrapped.has(t) || t.type !== "function" || typeof t.invoke !== "function") return;
  wrapped.add(t);
  const invoke = t.invoke as Fn;
  const inner = agentTools.get(t);
  const name = String(t.name ?? "");
  if (inner) {
    t.invoke = function (this: unknown, runContext: unknown, input: unknown, details: unknown) {
      return agentAsTool(p, name, nameOf(inner) ?? name, details, () => invoke.call(this, runContext, input, details));
    };
  } else {
    t.invoke = function (this: unknown, runContext: unknown, input: unknown, details: unknown) {
      const args = argsOf(input);
      return p.tool(name, args, `tool:${name} ${canonical(args)}`, !p.cfg.trusted.includes(name), async () => invoke.call(this, runContext, input, details));
    };
  }
  for (const g of Array.isArray(t.inputGuardrails) ? t.inputGuardrails : []) wrapToolGuardrail(p, g);
}

/** The caller's pending call with this id, and its recorder. */
function callOf(p: AgentsSdkHost, agent: string | undefined, id: unknown): { rec: ConversationRecorder; id: string } | undefined {
  if (!agent || typeof id !== "string") return undefined;
  const rec = p.recorderFor(agent);
  return rec.pendingCall(id) ? { rec, id } : undefined;
}

/**
 * An agent used as a tool: the calling agent's request is a message to the inner agent (its
 * arguments become the inner run's prompt), the inner agent's answer a message back.
 */
async function agentAsTool(p: AgentsSdkHost, tool: string, innerName: string, details: unknown, run: () => unknown): Promise<unknown> {
  const outer = runs.getStore()?.agent;
  const toolCall = isObjectLike(details) && isObjectLike(details.toolCall) ? details.toolCall : {};
  const call = callOf(p, outer, toolCall.callId);
  const caller = call ? { agent: call.rec.agent, decision: call.rec.pendingCall(call.id)!.decision } : undefined;
  const result = await runs.run({ agent: outer, caller }, run);
  if (call) {
    const answer = p.outputOf(typeof result === "string" ? result : JSON.stringify(result));
    const inner = answer && answer.agent.name === innerName ? answer : undefined;
    call.rec.settle(call.id, inner ? p.messageFor(inner.agent, inner.item, call.rec.agent.name) : call.rec.toolResult(call.id, result));
  } else {
    p.problems.push(`the agent tool ${tool} ran outside a model's tool call`);
  }
  return result;
}

/** A tool input guardrail: when it rejects the call or throws, the call is a blocked action. */
function wrapToolGuardrail(p: AgentsSdkHost, g: unknown): void {
  if (!isObjectLike(g) || wrapped.has(g) || typeof g.run !== "function") return;
  wrapped.add(g);
  const run = g.run as Fn;
  g.run = async function (this: unknown, args: unknown) {
    const out = await run.call(this, args);
    const behavior = isObjectLike(out) && isObjectLike(out.behavior) ? out.behavior : undefined;
    if (behavior && (behavior.type === "rejectContent" || behavior.type === "throwException") && isObjectLike(args)) {
      const toolCall = isObjectLike(args.toolCall) ? args.toolCall : {};
      const agent = nameOf(args.agent) ?? runs.getStore()?.agent;
      const call = callOf(p, agent, toolCall.callId);
      const why = behavior.type === "rejectContent" && typeof behavior.message === "string" ? behavior.message : "tripwire";
      if (call) call.rec.blocked(call.id, `guardrail ${String(g.name ?? "")}: ${why}`.slice(0, 500));
    }
    return out;
  };
}

let guardrailSeq = 0;

/** An agent's own input and output guardrails: a tripwire is a blocked action of that agent. */
function watchGuardrails(p: AgentsSdkHost, agent: unknown): void {
  const name = nameOf(agent);
  if (!name || !isObjectLike(agent)) return;
  for (const [kind, list] of [
    ["input", agent.inputGuardrails],
    ["output", agent.outputGuardrails],
  ] as const) {
    for (const g of Array.isArray(list) ? list : []) {
      if (!isObjectLike(g) || wrapped.has(g) || typeof g.execute !== "function") continue;
      wrapped.add(g);
      const execute = g.execute as Fn;
      const guardrail = String(g.name ?? "guardrail");
      g.execute = async function (this: unknown, args: unknown) {
        const out = await execute.call(this, args);
        if (isObjectLike(out) && out.tripwireTriggered === true) {
          const who = nameOf(isObjectLike(args) ? args.agent : undefined) ?? name;
          const rec = p.recorderFor(who);
          rec.blocked(
            { id: `causeway-guardrail-${++guardrailSeq}`, name: `guardrail:${guardrail}`, args: { guardrail, kind } },
            `the ${kind} guardrail ${guardrail} tripped`,
          );
        }
        return out;
      };
    }
  }
}
