/** OpenAI chat completions (`/chat/completions`): requests, responses and streamed chunks. */
import { isRecord } from "../util/guards";
import type { Codec, RequestBlock, ToolCallOut } from "./codec";
import { type Obj, arr, str, count, parseArgs, resultText, textOfParts, pick, placeholderOf, contentBlocks, CHAT_ROLES } from "./codec-parts";

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
        const ids = arr(m.tool_calls)
          .map((c) => (isRecord(c) ? str(c.id) : undefined))
          .filter((x): x is string => !!x);
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
