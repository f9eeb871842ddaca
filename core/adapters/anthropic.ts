/**
 * Records calls made through the official Anthropic client (`@anthropic-ai/sdk`): messages.
 *
 *   const rt = openRun({ out: "runs", sensitiveTools: ["send_email"] });
 *   const claude = traceAnthropic(new Anthropic(), rt.agent("support"), { untrustedTools: ["fetch_page"] });
 *   const res = await claude.messages.create({ model, max_tokens: 800, system, tools, messages });
 *   const results = [];
 *   for (const block of res.content) {
 *     if (block.type === "tool_use") results.push(await claude.runTool(block, (args) => tools[block.name](args)));
 *   }
 *   messages.push({ role: "assistant", content: res.content }, { role: "user", content: results });
 *   await rt.finish();
 *
 * Every system prompt, message block and tool result of each request becomes a context item;
 * results of untrusted tools are untrusted; the full request is recorded for decision replay.
 */
import type { Agent } from "../sdk/runtime";
import type { Item } from "../sdk/items";
import { anthropicMessages } from "./codec-anthropic";
import type { ToolCallOut } from "./codec";
import { tracedCall } from "./call";
import { ConversationRecorder, type CaptureOptions } from "./shared";

/** The parts of an Anthropic client the adapter uses. */
export interface AnthropicLike {
  messages: { create: (body: any, options?: any) => any };
  baseURL?: string;
}

/** A `tool_use` content block of a response. */
export interface ToolUseBlock {
  type?: string;
  id: string;
  name: string;
  input: unknown;
}

const toCall = (b: ToolUseBlock): ToolCallOut => ({ id: b.id, name: b.name, args: b.input ?? {} });

/** An Anthropic client whose model calls are recorded as decisions of one agent. */
export class TracedAnthropic {
  readonly recorder: ConversationRecorder;
  readonly messages: { create: (body: any, options?: any) => Promise<any> };

  constructor(
    readonly client: AnthropicLike,
    agent: Agent,
    opts: CaptureOptions = {},
  ) {
    this.recorder = new ConversationRecorder(agent, opts);
    agent.rt.redactor.addClient(client); // its key never reaches the run, whatever echoes it
    const base = typeof client.baseURL === "string" ? client.baseURL.replace(/\/+$/, "") : undefined;
    this.messages = {
      create: (body, options) =>
        tracedCall(this.recorder, anthropicMessages, body, () => client.messages.create(body, options), base && base + anthropicMessages.path),
    };
  }

  /**
   * Guard check → run → record; returns the `tool_result` block to send back (with is_error when
   * the tool failed or the guard blocked it, in which case it did not run).
   */
  async runTool(block: ToolUseBlock, fn: (args: any) => unknown): Promise<Record<string, unknown>> {
    const { result, status } = await this.recorder.runTool(toCall(block), fn);
    return anthropicMessages.toolResultBlock(block.id, result, status !== "ok");
  }

  /** Records a result your own code produced for a tool_use block; returns the tool_result block. */
  toolResult(block: ToolUseBlock | string, result: unknown, isError = false): Record<string, unknown> {
    const id = typeof block === "string" ? block : block.id;
    this.recorder.toolResult(typeof block === "string" ? block : toCall(block), result, { status: isError ? "error" : undefined });
    return anthropicMessages.toolResultBlock(id, result, isError);
  }

  /** The item of the decision that asked for a call (while its result is pending). */
  decisionFor(toolUseId: string): Item | undefined {
    return this.recorder.pendingCall(toolUseId)?.decision;
  }
}

/** Wraps an Anthropic client so its calls are recorded as decisions of `agent`. */
export function traceAnthropic(client: AnthropicLike, agent: Agent, opts: CaptureOptions = {}): TracedAnthropic {
  return new TracedAnthropic(client, agent, opts);
}
