/** OpenAI responses (`/responses`): requests, responses and streamed events. */
import { isRecord } from "../util/guards";
import type { Codec, RequestBlock, ToolCallOut } from "./codec";
import { type Obj, arr, str, count, parseArgs, resultText, textOfParts, pick, placeholderOf, contentBlocks, CHAT_ROLES } from "./codec-parts";

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
    if (Array.isArray(v))
      return v
        .map((x) => this.assistantText(x))
        .filter(Boolean)
        .join("\n");
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
    if (body.previous_response_id || body.conversation)
      return "the request continues context the provider holds (previous_response_id / conversation), which a removal can't reach";
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
