/**
 * The codec interface: what every recorded format answers, whether it is a wire format (OpenAI chat
 * completions, OpenAI responses, Anthropic messages) or the AI SDK's language-model calls. A
 * {@link Codec} reads one API's request body into blocks (each system prompt, message block and
 * tool result that becomes a context item, with where it sits in the body), and its response into
 * the decision's output, tool calls and usage. The formats themselves are in codec-*.ts; the table
 * of them is codecs.ts.
 */
import type { JsonPath } from "../util/json-path";

export type ApiName = "openai.chat" | "openai.responses" | "anthropic.messages" | "ai-sdk.model";

/** Who a block speaks for. */
export type BlockRole = "system" | "developer" | "user" | "tools" | "tool" | "assistant";

/** One piece of a request body that becomes (or maps to) a context item. */
export interface RequestBlock {
  /** Where the block's content sits in the body. */
  path: JsonPath;
  role: BlockRole;
  /** The content at `path`. */
  value: unknown;
  /** Tool results: the call they answer. */
  toolCallId?: string;
  /** Tool results marked as errors (Anthropic is_error). */
  isError?: boolean;
  /** Assistant turns: the tool calls they hold. */
  callIds?: string[];
  /** A decision replay may replace it with a placeholder (assistant turns and tool definitions can't be). */
  removable: boolean;
}

/** A tool call a model asked for. */
export interface ToolCallOut {
  id: string;
  name: string;
  args: unknown;
}

export interface UsageOut {
  input_tokens?: number;
  output_tokens?: number;
  [k: string]: number | undefined;
}

export interface Codec {
  api: ApiName;
  /** The request path, relative to the SDK's base URL convention (see {@link endpointPath}). */
  path: string;
  blocks(body: unknown): RequestBlock[];
  /** Tool calls held by the assistant turns of the request's history. */
  callsInRequest(body: unknown): ToolCallOut[];
  /** The decision's output: what the model said, in the form a client sends back next turn. */
  output(response: unknown): unknown;
  toolCalls(response: unknown): ToolCallOut[];
  usage(response: unknown): UsageOut;
  /** Model parameters (everything but the content). */
  params(body: unknown): Record<string, unknown>;
  /** The text of an assistant turn, to match it to the decision that produced it. */
  assistantText(value: unknown): string;
  /** What a removed block's content becomes, so the request stays valid. */
  placeholder(original: unknown): unknown;
  /** The tool-result block a client sends back for a call. */
  toolResultBlock(callId: string, result: unknown, isError: boolean): Record<string, unknown>;
  /** The final response of a streamed call, from its parsed events (chunks). */
  accumulate(events: readonly unknown[]): unknown;
  /** Why a request can't be re-sent in a decision replay, or null. */
  notReplayable(body: unknown, response: unknown): string | null;
}

/** What a removed block says instead. */
export const PLACEHOLDER = "[removed by causeway]";
