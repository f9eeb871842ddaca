/** Anthropic messages (`/v1/messages`): requests, responses and streamed events. */
import { isRecord } from "../util/guards";
import type { Codec, RequestBlock, ToolCallOut, UsageOut } from "./codec";
import { type Obj, arr, str, count, parseArgs, resultText, textOfParts, pick, placeholderOf } from "./codec-parts";

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
          out.push({
            path: ["messages", i, "content", j, "content"],
            role: "tool",
            value: b.content ?? null,
            toolCallId: str(b.tool_use_id),
            isError: b.is_error === true,
            removable: true,
          });
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
  toolResultBlock: (callId, result, isError) => ({
    type: "tool_result",
    tool_use_id: callId,
    content: resultText(result),
    ...(isError ? { is_error: true } : {}),
  }),
  accumulate: accumulateAnthropic,
  notReplayable(body, response) {
    if (!isRecord(body)) return "the request is not a JSON object";
    if (body.mcp_servers !== undefined || body.container !== undefined) return "the request names MCP servers or a container, which the provider runs itself";
    const server = arr(body.tools).find((t) => isRecord(t) && t.type !== undefined && t.type !== "custom");
    if (server) return `the request enables ${String((server as Obj).type)}, a tool the provider runs itself`;
    if (isRecord(response) && arr(response.content).some((b) => isRecord(b) && b.type === "server_tool_use"))
      return "the provider ran a tool in the recorded response";
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
