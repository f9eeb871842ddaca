/**
 * The formats Causeway records: three wire formats (OpenAI chat completions, OpenAI responses and
 * Anthropic messages) and the AI SDK's language-model calls (`ai` 5–7, any provider), taken above
 * the wire by the preload. A {@link Codec} reads one API's request body into blocks (each system prompt, message
 * block and tool result that becomes a context item, with where it sits in the body), and its
 * response into the decision's output, tool calls and usage. The SDK adapters, the gateway and the
 * endpoint replay all read requests through these, so the three record the same graph.
 *
 * Everything here reads attacker-controlled JSON: nothing is trusted to have the documented shape,
 * unknown parts are kept as they are (inline in the recorded request) and never become items.
 */
import { canonical } from "../log/hash";
import type { JsonPath } from "../util/json-path";
import { isRecord } from "../util/guards";

export type { JsonPath };

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

/** Longest tool-call argument string parsed as JSON. */
const MAX_ARGS_CHARS = 4 * 1024 * 1024;

type Obj = Record<string, unknown>;
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
const count = (x: unknown): number | undefined => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : undefined);

/** Tool-call arguments as sent (a JSON string) → a value; text that is not JSON stays text. */
export function parseArgs(s: unknown): unknown {
  if (typeof s !== "string") return s ?? {};
  if (s.length > MAX_ARGS_CHARS) return { _raw: s.slice(0, 200) + "…", _truncated: true };
  if (!s.trim()) return {};
  try {
    return JSON.parse(s);
  } catch {
    return { _raw: s };
  }
}

/** A tool's result as the text a client sends back. */
export function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  try {
    return JSON.stringify(result) ?? "null";
  } catch {
    return String(result);
  }
}

function textOfParts(content: unknown, types: readonly string[]): string {
  if (typeof content === "string") return content;
  return arr(content)
    .filter((p) => isRecord(p) && types.includes(String(p.type)) && typeof p.text === "string")
    .map((p) => (p as Obj).text as string)
    .join("\n");
}

function pick(body: unknown, drop: readonly string[]): Record<string, unknown> {
  if (!isRecord(body)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!drop.includes(k) && v !== undefined) out[k] = v;
  return out;
}

function placeholderOf(original: unknown, textType: string): unknown {
  if (Array.isArray(original)) return [{ type: textType, text: PLACEHOLDER }];
  if (isRecord(original)) return { type: textType, text: PLACEHOLDER };
  return PLACEHOLDER;
}

/** Content blocks of a message: a string is one block; text parts are blocks by their text. */
function contentBlocks(content: unknown, base: JsonPath, role: BlockRole, textTypes: readonly string[]): RequestBlock[] {
  if (typeof content === "string") return [{ path: [...base, "content"], role, value: content, removable: true }];
  const out: RequestBlock[] = [];
  arr(content).forEach((p, j) => {
    if (isRecord(p) && textTypes.includes(String(p.type)) && typeof p.text === "string") {
      out.push({ path: [...base, "content", j, "text"], role, value: p.text, removable: true });
    } else if (isRecord(p)) out.push({ path: [...base, "content", j], role, value: p, removable: true });
  });
  return out;
}

// ------------------------------------------------------------------------------ chat completions

const CHAT_ROLES: Record<string, BlockRole> = { system: "system", developer: "developer", user: "user" };

export const openaiChat: Codec = {
  api: "openai.chat",
  path: "/chat/completions",
  blocks(body) {
    const out: RequestBlock[] = [];
    if (!isRecord(body)) return out;
    arr(body.messages).forEach((m, i) => {
      if (!isRecord(m)) return;
      const role = String(m.role);
      if (CHAT_ROLES[role]) out.push(...contentBlocks(m.content, ["messages", i], CHAT_ROLES[role], ["text"]));
      else if (role === "tool") {
        out.push({ path: ["messages", i, "content"], role: "tool", value: m.content ?? null, toolCallId: str(m.tool_call_id), removable: true });
      } else if (role === "assistant") {
        const ids = arr(m.tool_calls).map((c) => (isRecord(c) ? str(c.id) : undefined)).filter((x): x is string => !!x);
        out.push({ path: ["messages", i], role: "assistant", value: m, callIds: ids, removable: false });
      }
    });
    if (Array.isArray(body.tools)) out.push({ path: ["tools"], role: "tools", value: body.tools, removable: false });
    else if (Array.isArray(body.functions)) out.push({ path: ["functions"], role: "tools", value: body.functions, removable: false });
    return out;
  },
  callsInRequest(body) {
    if (!isRecord(body)) return [];
    return arr(body.messages).flatMap((m) => (isRecord(m) && m.role === "assistant" ? chatCalls(m.tool_calls) : []));
  },
  output(response) {
    const c = isRecord(response) ? arr(response.choices)[0] : undefined;
    return isRecord(c) && isRecord(c.message) ? c.message : null;
  },
  toolCalls(response) {
    const m = this.output(response);
    return isRecord(m) ? chatCalls(m.tool_calls) : [];
  },
  usage(response) {
    const u = isRecord(response) && isRecord(response.usage) ? response.usage : {};
    return { input_tokens: count(u.prompt_tokens), output_tokens: count(u.completion_tokens) };
  },
  params: (body) => pick(body, ["messages", "tools", "functions", "model", "stream", "stream_options"]),
  assistantText: (v) => (isRecord(v) ? textOfParts(v.content, ["text"]) : ""),
  placeholder: (o) => placeholderOf(o, "text"),
  toolResultBlock: (callId, result) => ({ role: "tool", tool_call_id: callId, content: resultText(result) }),
  accumulate: accumulateChat,
  notReplayable(body) {
    if (isRecord(body) && body.web_search_options !== undefined) return "the request enables web search, a tool the provider runs itself";
    return null;
  },
};

function chatCalls(calls: unknown): ToolCallOut[] {
  return arr(calls)
    .filter((c): c is Obj => isRecord(c) && isRecord(c.function) && typeof c.id === "string")
    .map((c) => ({ id: c.id as string, name: String((c.function as Obj).name ?? ""), args: parseArgs((c.function as Obj).arguments) }));
}

/** A chat.completion from its stream of chunks. */
function accumulateChat(chunks: readonly unknown[]): unknown {
  let head: Obj | undefined;
  let content = "";
  let sawContent = false;
  let refusal: string | null = null;
  let finish: unknown = null;
  let usage: unknown;
  const calls: { id?: string; type: string; function: { name: string; arguments: string } }[] = [];
  for (const ch of chunks) {
    if (!isRecord(ch)) continue;
    head ??= ch;
    if (isRecord(ch.usage)) usage = ch.usage;
    const c = arr(ch.choices).find((x) => isRecord(x) && (x.index ?? 0) === 0);
    if (!isRecord(c)) continue;
    if (c.finish_reason) finish = c.finish_reason;
    const d = isRecord(c.delta) ? c.delta : {};
    if (typeof d.content === "string") {
      content += d.content;
      sawContent = true;
    }
    if (typeof d.refusal === "string") refusal = (refusal ?? "") + d.refusal;
    for (const tc of arr(d.tool_calls)) {
      if (!isRecord(tc)) continue;
      const k = typeof tc.index === "number" && tc.index >= 0 && tc.index < 1024 ? tc.index : calls.length;
      calls[k] ??= { type: "function", function: { name: "", arguments: "" } };
      if (typeof tc.id === "string") calls[k].id = tc.id;
      const f = isRecord(tc.function) ? tc.function : {};
      if (typeof f.name === "string") calls[k].function.name += f.name;
      if (typeof f.arguments === "string") calls[k].function.arguments += f.arguments;
    }
  }
  const message: Obj = { role: "assistant", content: sawContent ? content : null, refusal };
  const toolCalls = calls.filter(Boolean);
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id: head?.id,
    object: "chat.completion",
    created: head?.created,
    model: head?.model,
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

// ------------------------------------------------------------------------------ responses

const INPUT_TEXT = ["input_text", "output_text", "text"];

export const openaiResponses: Codec = {
  api: "openai.responses",
  path: "/responses",
  blocks(body) {
    const out: RequestBlock[] = [];
    if (!isRecord(body)) return out;
    if (typeof body.instructions === "string") out.push({ path: ["instructions"], role: "system", value: body.instructions, removable: true });
    if (typeof body.input === "string") out.push({ path: ["input"], role: "user", value: body.input, removable: true });
    arr(body.input).forEach((it, i) => {
      if (!isRecord(it)) return;
      const type = it.type ?? "message";
      const role = String(it.role ?? "");
      if (type === "message" && CHAT_ROLES[role]) out.push(...contentBlocks(it.content, ["input", i], CHAT_ROLES[role], INPUT_TEXT));
      else if (type === "function_call_output" || type === "custom_tool_call_output") {
        out.push({ path: ["input", i, "output"], role: "tool", value: it.output ?? null, toolCallId: str(it.call_id), removable: true });
      } else if (type === "function_call" || type === "custom_tool_call") {
        out.push({ path: ["input", i], role: "assistant", value: it, callIds: str(it.call_id) ? [it.call_id as string] : [], removable: false });
      } else if (type === "message" && role === "assistant") {
        out.push({ path: ["input", i], role: "assistant", value: it, callIds: [], removable: false });
      }
      // reasoning items, item references and the rest stay in the request as they are
    });
    if (Array.isArray(body.tools)) out.push({ path: ["tools"], role: "tools", value: body.tools, removable: false });
    return out;
  },
  callsInRequest(body) {
    return isRecord(body) ? responsesCalls(body.input) : [];
  },
  output: (response) => (isRecord(response) && Array.isArray(response.output) ? response.output : null),
  toolCalls: (response) => (isRecord(response) ? responsesCalls(response.output) : []),
  usage(response) {
    const u = isRecord(response) && isRecord(response.usage) ? response.usage : {};
    return { input_tokens: count(u.input_tokens), output_tokens: count(u.output_tokens) };
  },
  params: (body) => pick(body, ["input", "instructions", "tools", "model", "stream", "stream_options"]),
  assistantText(v) {
    if (Array.isArray(v)) return v.map((x) => this.assistantText(x)).filter(Boolean).join("\n");
    return isRecord(v) && v.type !== "function_call" ? textOfParts(v.content, INPUT_TEXT) : "";
  },
  placeholder: (o) => placeholderOf(o, "input_text"),
  toolResultBlock: (callId, result) => ({ type: "function_call_output", call_id: callId, output: resultText(result) }),
  accumulate(events) {
    let last: unknown;
    const items: unknown[] = [];
    for (const e of events) {
      if (!isRecord(e)) continue;
      if ((e.type === "response.completed" || e.type === "response.incomplete" || e.type === "response.failed") && isRecord(e.response)) last = e.response;
      if (e.type === "response.output_item.done" && isRecord(e.item)) items.push(e.item);
    }
    return last ?? { object: "response", status: "incomplete", output: items };
  },
  notReplayable(body) {
    if (!isRecord(body)) return "the request is not a JSON object";
    if (body.previous_response_id || body.conversation) return "the request continues context the provider holds (previous_response_id / conversation), which a removal can't reach";
    const hosted = arr(body.tools).find((t) => isRecord(t) && t.type !== "function" && t.type !== "custom");
    if (hosted) return `the request enables ${String((hosted as Obj).type)}, a tool the provider runs itself`;
    return null;
  },
};

function responsesCalls(items: unknown): ToolCallOut[] {
  const out: ToolCallOut[] = [];
  for (const it of arr(items)) {
    if (!isRecord(it) || typeof it.call_id !== "string") continue;
    if (it.type === "function_call") out.push({ id: it.call_id, name: String(it.name ?? ""), args: parseArgs(it.arguments) });
    else if (it.type === "custom_tool_call") out.push({ id: it.call_id, name: String(it.name ?? ""), args: { input: it.input ?? "" } });
  }
  return out;
}

// ------------------------------------------------------------------------------ anthropic messages

export const anthropicMessages: Codec = {
  api: "anthropic.messages",
  path: "/v1/messages",
  blocks(body) {
    const out: RequestBlock[] = [];
    if (!isRecord(body)) return out;
    if (typeof body.system === "string") out.push({ path: ["system"], role: "system", value: body.system, removable: true });
    arr(body.system).forEach((b, j) => {
      if (isRecord(b) && typeof b.text === "string") out.push({ path: ["system", j, "text"], role: "system", value: b.text, removable: true });
    });
    arr(body.messages).forEach((m, i) => {
      if (!isRecord(m)) return;
      if (m.role === "assistant") {
        const ids = arr(m.content).flatMap((b) => (isRecord(b) && b.type === "tool_use" && typeof b.id === "string" ? [b.id] : []));
        out.push({ path: ["messages", i], role: "assistant", value: m, callIds: ids, removable: false });
        return;
      }
      if (m.role !== "user") return;
      if (typeof m.content === "string") {
        out.push({ path: ["messages", i, "content"], role: "user", value: m.content, removable: true });
        return;
      }
      arr(m.content).forEach((b, j) => {
        if (!isRecord(b)) return;
        if (b.type === "tool_result") {
          out.push({ path: ["messages", i, "content", j, "content"], role: "tool", value: b.content ?? null, toolCallId: str(b.tool_use_id), isError: b.is_error === true, removable: true });
        } else if (b.type === "text" && typeof b.text === "string") {
          out.push({ path: ["messages", i, "content", j, "text"], role: "user", value: b.text, removable: true });
        } else out.push({ path: ["messages", i, "content", j], role: "user", value: b, removable: true });
      });
    });
    if (Array.isArray(body.tools)) out.push({ path: ["tools"], role: "tools", value: body.tools, removable: false });
    return out;
  },
  callsInRequest(body) {
    if (!isRecord(body)) return [];
    return arr(body.messages).flatMap((m) => (isRecord(m) && m.role === "assistant" ? toolUses(m.content) : []));
  },
  output: (response) => (isRecord(response) ? { role: "assistant", content: Array.isArray(response.content) ? response.content : [] } : null),
  toolCalls: (response) => (isRecord(response) ? toolUses(response.content) : []),
  usage(response) {
    const u = isRecord(response) && isRecord(response.usage) ? response.usage : {};
    const out: UsageOut = { input_tokens: count(u.input_tokens), output_tokens: count(u.output_tokens) };
    for (const k of ["cache_creation_input_tokens", "cache_read_input_tokens"]) if (count(u[k]) !== undefined) out[k] = count(u[k]);
    return out;
  },
  params: (body) => pick(body, ["messages", "system", "tools", "model", "stream"]),
  assistantText: (v) => (isRecord(v) ? textOfParts(v.content, ["text"]) : ""),
  placeholder: (o) => placeholderOf(o, "text"),
  toolResultBlock: (callId, result, isError) => ({ type: "tool_result", tool_use_id: callId, content: resultText(result), ...(isError ? { is_error: true } : {}) }),
  accumulate: accumulateAnthropic,
  notReplayable(body, response) {
    if (!isRecord(body)) return "the request is not a JSON object";
    if (body.mcp_servers !== undefined || body.container !== undefined) return "the request names MCP servers or a container, which the provider runs itself";
    const server = arr(body.tools).find((t) => isRecord(t) && t.type !== undefined && t.type !== "custom");
    if (server) return `the request enables ${String((server as Obj).type)}, a tool the provider runs itself`;
    if (isRecord(response) && arr(response.content).some((b) => isRecord(b) && b.type === "server_tool_use")) return "the provider ran a tool in the recorded response";
    return null;
  },
};

function toolUses(content: unknown): ToolCallOut[] {
  return arr(content)
    .filter((b): b is Obj => isRecord(b) && b.type === "tool_use" && typeof b.id === "string")
    .map((b) => ({ id: b.id as string, name: String(b.name ?? ""), args: b.input ?? {} }));
}

/** An Anthropic message from its stream of events. */
function accumulateAnthropic(events: readonly unknown[]): unknown {
  let msg: Obj = { type: "message", role: "assistant", content: [] };
  const content: Obj[] = [];
  const partial = new Map<number, string>();
  for (const e of events) {
    if (!isRecord(e)) continue;
    const index = typeof e.index === "number" && e.index >= 0 && e.index < 4096 ? e.index : -1;
    switch (e.type) {
      case "message_start":
        if (isRecord(e.message)) msg = { ...e.message };
        break;
      case "content_block_start":
        if (index >= 0 && isRecord(e.content_block)) content[index] = { ...e.content_block };
        break;
      case "content_block_delta": {
        const b = content[index];
        const d = isRecord(e.delta) ? e.delta : {};
        if (!b) break;
        if (d.type === "text_delta" && typeof d.text === "string") b.text = String(b.text ?? "") + d.text;
        else if (d.type === "input_json_delta" && typeof d.partial_json === "string") partial.set(index, (partial.get(index) ?? "") + d.partial_json);
        else if (d.type === "thinking_delta" && typeof d.thinking === "string") b.thinking = String(b.thinking ?? "") + d.thinking;
        else if (d.type === "signature_delta" && typeof d.signature === "string") b.signature = d.signature;
        break;
      }
      case "content_block_stop": {
        const b = content[index];
        const p = partial.get(index);
        if (b && p !== undefined) b.input = parseArgs(p);
        break;
      }
      case "message_delta":
        if (isRecord(e.delta)) Object.assign(msg, pick(e.delta, []));
        if (isRecord(e.usage)) msg.usage = { ...(isRecord(msg.usage) ? msg.usage : {}), ...e.usage };
        break;
    }
  }
  msg.content = content.filter(Boolean);
  return msg;
}

// ------------------------------------------------------------------------------ helpers

// ------------------------------------------------------------------------------ AI SDK language model

/** Tool-result outputs whose `value` is the result itself (text or JSON). */
const AI_SDK_VALUE_OUTPUTS = ["text", "json", "error-text", "error-json"];

/**
 * A call of an AI SDK language model (`doGenerate` / `doStream`, specification v2 to v4): the body
 * is the call options (`prompt`, `tools`, settings) with `model` and `provider` added, the response
 * the model's result (`content`, `finishReason`, `usage`). The prompt is the same in every version:
 * `{role: "system", content: string}`, user and assistant messages of parts, and tool messages of
 * `tool-result` parts whose `output` is `{type, value}`.
 */
export const aiSdkModel: Codec = {
  api: "ai-sdk.model",
  path: "(ai-sdk)",
  blocks(body) {
    const out: RequestBlock[] = [];
    if (!isRecord(body)) return out;
    arr(body.prompt).forEach((m, i) => {
      if (!isRecord(m)) return;
      const role = String(m.role);
      if (role === "system" && typeof m.content === "string") out.push({ path: ["prompt", i, "content"], role: "system", value: m.content, removable: true });
      else if (role === "user") out.push(...contentBlocks(m.content, ["prompt", i], "user", ["text"]));
      else if (role === "assistant") {
        const ids = arr(m.content).map((p) => (isRecord(p) && p.type === "tool-call" ? str(p.toolCallId) : undefined)).filter((x): x is string => !!x);
        out.push({ path: ["prompt", i], role: "assistant", value: m, callIds: ids, removable: false });
      } else if (role === "tool") {
        arr(m.content).forEach((p, j) => {
          if (!isRecord(p) || p.type !== "tool-result") return;
          const o = p.output;
          const isError = isRecord(o) && String(o.type).startsWith("error");
          if (isRecord(o) && AI_SDK_VALUE_OUTPUTS.includes(String(o.type))) {
            out.push({ path: ["prompt", i, "content", j, "output", "value"], role: "tool", value: o.value ?? null, toolCallId: str(p.toolCallId), isError, removable: true });
          } else {
            out.push({ path: ["prompt", i, "content", j, "output"], role: "tool", value: o ?? null, toolCallId: str(p.toolCallId), isError, removable: true });
          }
        });
      }
    });
    if (Array.isArray(body.tools)) out.push({ path: ["tools"], role: "tools", value: body.tools, removable: false });
    return out;
  },
  callsInRequest(body) {
    if (!isRecord(body)) return [];
    return arr(body.prompt).flatMap((m) => (isRecord(m) && m.role === "assistant" ? aiSdkCalls(m.content) : []));
  },
  output: (response) => (isRecord(response) && Array.isArray(response.content) ? { role: "assistant", content: response.content } : null),
  toolCalls: (response) => (isRecord(response) ? aiSdkCalls(response.content) : []),
  usage(response) {
    const u = isRecord(response) && isRecord(response.usage) ? response.usage : {};
    // v2: numbers; v3 and later: {total, …}
    const n = (x: unknown) => count(x) ?? (isRecord(x) ? count(x.total) : undefined);
    return { input_tokens: n(u.inputTokens), output_tokens: n(u.outputTokens) };
  },
  params: (body) => pick(body, ["prompt", "tools", "model"]),
  assistantText: (v) => (isRecord(v) ? textOfParts(v.content, ["text"]) : ""),
  placeholder(original) {
    if (!isRecord(original)) return PLACEHOLDER;
    // a tool output ({type, value}) or a user part (file, image…)
    return "value" in original ? { type: "text", value: PLACEHOLDER } : { type: "text", text: PLACEHOLDER };
  },
  toolResultBlock: (callId, result, isError) => ({ type: "tool-result", toolCallId: callId, toolName: "", output: { type: isError ? "error-text" : "text", value: resultText(result) } }),
  accumulate(events) {
    const content: Obj[] = [];
    const open = new Map<string, Obj>();
    let finishReason: unknown = "unknown";
    let usage: unknown;
    for (const e of events) {
      if (!isRecord(e)) continue;
      const kind = e.type === "text-delta" ? "text" : e.type === "reasoning-delta" ? "reasoning" : undefined;
      if (kind) {
        const key = `${kind}\u0000${String(e.id ?? "")}`;
        let part = open.get(key);
        if (!part) {
          part = { type: kind, text: "" };
          open.set(key, part);
          content.push(part);
        }
        part.text = String(part.text) + String(e.delta ?? e.textDelta ?? "");
      } else if (e.type === "tool-call") content.push({ type: "tool-call", toolCallId: e.toolCallId, toolName: e.toolName, input: e.input ?? e.args ?? "" });
      else if (e.type === "finish") {
        finishReason = e.finishReason;
        usage = e.usage;
      }
    }
    return { content, finishReason, ...(usage ? { usage } : {}) };
  },
  notReplayable: () => "it was recorded at the AI SDK's language-model layer, not on the wire: replay the program instead (causeway test)",
};

function aiSdkCalls(content: unknown): ToolCallOut[] {
  return arr(content)
    .filter((p): p is Obj => isRecord(p) && p.type === "tool-call" && typeof p.toolCallId === "string" && !p.providerExecuted)
    .map((p) => ({ id: p.toolCallId as string, name: String(p.toolName ?? ""), args: typeof p.input === "string" ? parseArgs(p.input) : (p.input ?? {}) }));
}

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
