/**
 * Records calls made through the official OpenAI client (`openai`): chat completions and
 * responses. Wrap the client once per agent:
 *
 *   const rt = openRun({ out: "runs", sensitiveTools: ["send_email"] });
 *   const ai = traceOpenAI(new OpenAI(), rt.agent("support"), { untrustedTools: ["fetch_page"] });
 *   const res = await ai.chat.completions.create({ model, messages, tools });
 *   for (const call of res.choices[0].message.tool_calls ?? []) {
 *     messages.push(await ai.runTool(call, (args) => tools[call.function.name](args)));
 *   }
 *   await rt.finish();
 *
 * Every system prompt, message block and tool result of each request becomes a context item, and
 * the full request is recorded for decision replay (`causeway test-endpoint`). The client is typed
 * structurally: any object with `chat.completions.create` (and optionally `responses.create`) works.
 */
import type { Agent } from "../sdk/runtime";
import type { Item } from "../sdk/items";
import { openaiChat } from "./codec-openai-chat";
import { openaiResponses } from "./codec-openai-responses";
import { parseArgs } from "./codec-parts";
import type { ToolCallOut } from "./codec";
import { tracedCall } from "./call";
import { ConversationRecorder, type CaptureOptions } from "./shared";

type Create = (body: any, options?: any) => any;

/** The parts of an OpenAI client the adapter uses. */
export interface OpenAILike {
  chat: { completions: { create: Create } };
  responses?: { create: Create };
  baseURL?: string;
}

/** A chat completion's tool call, or a responses `function_call` item. */
export type OpenAIToolCall =
  { id: string; type?: string; function: { name: string; arguments: string } } | { type: "function_call"; call_id: string; name: string; arguments: string };

function toCall(c: OpenAIToolCall | string): ToolCallOut | string {
  if (typeof c === "string") return c;
  if ("function" in c && c.function) return { id: c.id, name: c.function.name, args: parseArgs(c.function.arguments) };
  const r = c as { call_id: string; name: string; arguments: string };
  return { id: r.call_id, name: r.name, args: parseArgs(r.arguments) };
}

const isResponsesCall = (c: OpenAIToolCall | string): boolean => typeof c === "object" && c.type === "function_call";

/** An OpenAI client whose model calls are recorded as decisions of one agent. */
export class TracedOpenAI {
  readonly recorder: ConversationRecorder;
  readonly chat: { completions: { create: (body: any, options?: any) => Promise<any> } };
  readonly responses: { create: (body: any, options?: any) => Promise<any> };

  constructor(
    readonly client: OpenAILike,
    agent: Agent,
    opts: CaptureOptions = {},
  ) {
    this.recorder = new ConversationRecorder(agent, opts);
    agent.rt.redactor.addClient(client); // its key never reaches the run, whatever echoes it
    const base = typeof client.baseURL === "string" ? client.baseURL.replace(/\/+$/, "") : undefined;
    this.chat = {
      completions: {
        create: (body, options) =>
          tracedCall(this.recorder, openaiChat, body, () => client.chat.completions.create(body, options), base && base + openaiChat.path),
      },
    };
    this.responses = {
      create: (body, options) => {
        if (!client.responses) return Promise.reject(new Error("this client has no responses API"));
        return tracedCall(this.recorder, openaiResponses, body, () => client.responses!.create(body, options), base && base + openaiResponses.path);
      },
    };
  }

  /**
   * Guard check → run → record; returns the message to send back: `{role: "tool", …}` for a chat
   * tool call, a `function_call_output` item for a responses function call. A call the guard
   * blocks does not run; the model is told it was blocked.
   */
  async runTool(call: OpenAIToolCall, fn: (args: any) => unknown): Promise<Record<string, unknown>> {
    const c = toCall(call) as ToolCallOut;
    const { result } = await this.recorder.runTool(c, fn);
    return (isResponsesCall(call) ? openaiResponses : openaiChat).toolResultBlock(c.id, result, false);
  }

  /** Records a result your own code produced for a call; returns the message to send back. */
  toolResult(call: OpenAIToolCall, result: unknown): Record<string, unknown> {
    const c = toCall(call) as ToolCallOut;
    this.recorder.toolResult(c, result);
    return (isResponsesCall(call) ? openaiResponses : openaiChat).toolResultBlock(c.id, result, false);
  }

  /** The item of the decision that asked for a call (while its result is pending). */
  decisionFor(callId: string): Item | undefined {
    return this.recorder.pendingCall(callId)?.decision;
  }
}

/** Wraps an OpenAI client so its calls are recorded as decisions of `agent`. */
export function traceOpenAI(client: OpenAILike, agent: Agent, opts: CaptureOptions = {}): TracedOpenAI {
  return new TracedOpenAI(client, agent, opts);
}
