/**
 * The formats Causeway records: three wire formats (OpenAI chat completions, OpenAI responses and
 * Anthropic messages) and the AI SDK's language-model calls (`ai` 5–7, any provider), taken above
 * the wire by the preload. A {@link Codec} reads one API's request body into blocks (each system prompt, message
 * block and tool result that becomes a context item, with where it sits in the body), and its
 * response into the decision's output, tool calls and usage. The SDK adapters, the gateway and the
 * endpoint replay all read requests through these, so the three record the same graph.
 *
 * This file is the table of formats: the interface is in codec.ts, the pieces they share in
 * codec-parts.ts, each format in a codec-*.ts of its own.
 *
 * Everything here reads attacker-controlled JSON: nothing is trusted to have the documented shape,
 * unknown parts are kept as they are (inline in the recorded request) and never become items.
 */
import { canonical } from "../log/hash";
import type { ApiName, Codec } from "./codec";
import { resultText } from "./codec-parts";
import { openaiChat } from "./codec-openai-chat";
import { openaiResponses } from "./codec-openai-responses";
import { anthropicMessages } from "./codec-anthropic";
import { aiSdkModel } from "./codec-ai-sdk";

export const CODECS: Record<ApiName, Codec> = {
  "openai.chat": openaiChat,
  "openai.responses": openaiResponses,
  "anthropic.messages": anthropicMessages,
  "ai-sdk.model": aiSdkModel,
};

/** The codec for a request path (`/v1/chat/completions`, `/chat/completions`, `/v1/messages`…), or undefined. */
export function codecForPath(pathname: string): Codec | undefined {
  const p = pathname.replace(/\/+$/, "");
  if (/(^|\/)chat\/completions$/.test(p)) return openaiChat;
  if (/(^|\/)responses$/.test(p)) return openaiResponses;
  if (/(^|\/)messages$/.test(p)) return anthropicMessages;
  return undefined;
}

/** How a block's content is rebuilt from its context item: the value itself, its JSON text, or not at all. */
export function fillFor(actual: unknown, itemValue: unknown): "value" | "json" | null {
  try {
    if (canonical(actual) === canonical(itemValue)) return "value";
  } catch {
    return null;
  }
  if (typeof actual === "string" && typeof itemValue !== "string" && actual === resultText(itemValue)) return "json";
  return null;
}
