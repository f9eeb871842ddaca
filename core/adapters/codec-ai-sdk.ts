/** The AI SDK's language-model calls, taken above the wire by the preload. */
import { isRecord } from "../util/guards";
import { type Codec, type RequestBlock, type ToolCallOut, PLACEHOLDER } from "./codec";
import { type Obj, arr, str, count, parseArgs, resultText, textOfParts, pick, contentBlocks } from "./codec-parts";

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
        const ids = arr(m.content)
          .map((p) => (isRecord(p) && p.type === "tool-call" ? str(p.toolCallId) : undefined))
          .filter((x): x is string => !!x);
        out.push({ path: ["prompt", i], role: "assistant", value: m, callIds: ids, removable: false });
      } else if (role === "tool") {
        arr(m.content).forEach((p, j) => {
          if (!isRecord(p) || p.type !== "tool-result") return;
          const o = p.output;
          const isError = isRecord(o) && String(o.type).startsWith("error");
          if (isRecord(o) && AI_SDK_VALUE_OUTPUTS.includes(String(o.type))) {
            out.push({
              path: ["prompt", i, "content", j, "output", "value"],
              role: "tool",
              value: o.value ?? null,
              toolCallId: str(p.toolCallId),
              isError,
              removable: true,
            });
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
  toolResultBlock: (callId, result, isError) => ({
    type: "tool-result",
    toolCallId: callId,
    toolName: "",
    output: { type: isError ? "error-text" : "text", value: resultText(result) },
  }),
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
