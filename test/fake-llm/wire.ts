/**
 * The wire formats the fake servers speak, close enough to the real APIs that the official
 * `openai` and `@anthropic-ai/sdk` clients work against them unmodified: requests are read into a
 * {@link Conversation}; a {@link Reply} is written as a response object, or as the server-sent
 * events of a streamed one.
 */
import { createHash } from "node:crypto";
import { tokens, type Conversation, type Reply, type Turn } from "./policy";

type Obj = Record<string, any>;
const arr = (x: unknown): any[] => (Array.isArray(x) ? x : []);
const textOf = (c: unknown): string =>
  typeof c === "string"
    ? c
    : arr(c)
        .map((p) => (typeof p?.text === "string" ? p.text : typeof p === "string" ? p : ""))
        .filter(Boolean)
        .join("\n");
const parse = (s: unknown): Record<string, unknown> => {
  try {
    const v = typeof s === "string" ? JSON.parse(s) : s;
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
};

export function hashId(prefix: string, ...parts: unknown[]): string {
  return prefix + createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);
}

export interface Wire {
  read(body: Obj): Conversation;
  write(body: Obj, reply: Reply, key: string): Obj;
  /** Server-sent events of the same response: [event name or null, data]. */
  stream(body: Obj, response: Obj): [string | null, unknown][];
}

// ------------------------------------------------------------------------------ chat completions

export const chatWire: Wire = {
  read(body) {
    const turns: Turn[] = [];
    let system = "";
    for (const m of arr(body.messages)) {
      if (m?.role === "system" || m?.role === "developer") system += textOf(m.content) + "\n";
      else if (m?.role === "user") turns.push({ role: "user", text: textOf(m.content) });
      else if (m?.role === "tool") turns.push({ role: "tool", id: String(m.tool_call_id), text: textOf(m.content) });
      else if (m?.role === "assistant") {
        turns.push({
          role: "assistant",
          text: textOf(m.content),
          calls: arr(m.tool_calls).map((c) => ({ name: String(c?.function?.name), args: parse(c?.function?.arguments) })),
        });
      }
    }
    return { system, turns, tools: arr(body.tools).map((t) => String(t?.function?.name ?? t?.name)) };
  },
  write(body, reply, key) {
    const calls = reply.calls.map((c, i) => ({ id: hashId("call_", key, i), type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    const message: Obj = { role: "assistant", content: calls.length ? null : reply.text, refusal: null, annotations: [] };
    if (calls.length) message.tool_calls = calls;
    const prompt = tokens(JSON.stringify(body.messages ?? ""));
    const completion = tokens(reply.text + JSON.stringify(calls));
    return {
      id: hashId("chatcmpl-", key),
      object: "chat.completion",
      created: 1767225600,
      model: body.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? "tool_calls" : "stop" }],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      system_fingerprint: "fp_fake",
    };
  },
  stream(body, r) {
    const base = { id: r.id, object: "chat.completion.chunk", created: r.created, model: r.model, system_fingerprint: "fp_fake" };
    const msg = r.choices[0].message;
    const chunk = (delta: Obj, finish: string | null = null) =>
      [null, { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }] as [null, Obj];
    const out: [string | null, unknown][] = [chunk({ role: "assistant", content: "", refusal: null })];
    if (msg.content) for (const piece of split(msg.content, 3)) out.push(chunk({ content: piece }));
    arr(msg.tool_calls).forEach((c, index) => {
      out.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] }));
      for (const piece of split(c.function.arguments, 2)) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    out.push(chunk({}, r.choices[0].finish_reason));
    if (body.stream_options?.include_usage) out.push([null, { ...base, choices: [], usage: r.usage }]);
    out.push([null, "[DONE]"]);
    return out;
  },
};

// ------------------------------------------------------------------------------ responses

export const responsesWire: Wire = {
  read(body) {
    const turns: Turn[] = [];
    let system = typeof body.instructions === "string" ? body.instructions + "\n" : "";
    if (typeof body.input === "string") turns.push({ role: "user", text: body.input });
    for (const it of arr(body.input)) {
      const type = it?.type ?? "message";
      if (type === "message" && (it.role === "system" || it.role === "developer")) system += textOf(it.content) + "\n";
      else if (type === "message" && it.role === "user") turns.push({ role: "user", text: textOf(it.content) });
      else if (type === "message" && it.role === "assistant") turns.push({ role: "assistant", text: textOf(it.content), calls: [] });
      else if (type === "function_call") turns.push({ role: "assistant", text: "", calls: [{ name: String(it.name), args: parse(it.arguments) }] });
      else if (type === "function_call_output") turns.push({ role: "tool", id: String(it.call_id), text: textOf(it.output) });
    }
    return { system, turns, tools: arr(body.tools).map((t) => String(t?.name)) };
  },
  write(body, reply, key) {
    const output: Obj[] = [];
    if (reply.text && !reply.calls.length) {
      output.push({
        type: "message",
        id: hashId("msg_", key),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: reply.text, annotations: [], logprobs: [] }],
      });
    }
    reply.calls.forEach((c, i) =>
      output.push({
        type: "function_call",
        id: hashId("fc_", key, i),
        call_id: hashId("call_", key, i),
        name: c.name,
        arguments: JSON.stringify(c.args),
        status: "completed",
      }),
    );
    const input = tokens(JSON.stringify(body.input ?? "") + (body.instructions ?? ""));
    const out = tokens(JSON.stringify(output));
    return {
      id: hashId("resp_", key),
      object: "response",
      created_at: 1767225600,
      status: "completed",
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      model: body.model,
      output,
      parallel_tool_calls: true,
      tool_choice: body.tool_choice ?? "auto",
      tools: body.tools ?? [],
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: out,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + out,
      },
    };
  },
  stream(_body, r) {
    let seq = 0;
    const ev = (type: string, data: Obj): [string, Obj] => [type, { type, sequence_number: seq++, ...data }];
    const out: [string | null, unknown][] = [ev("response.created", { response: { ...r, status: "in_progress", output: [], usage: null } })];
    arr(r.output).forEach((item, output_index) => {
      if (item.type === "message") {
        out.push(ev("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } }));
        const text = item.content[0].text;
        out.push(
          ev("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }),
        );
        for (const delta of split(text, 3))
          out.push(ev("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] }));
        out.push(ev("response.output_text.done", { item_id: item.id, output_index, content_index: 0, text, logprobs: [] }));
        out.push(ev("response.content_part.done", { item_id: item.id, output_index, content_index: 0, part: item.content[0] }));
      } else {
        out.push(ev("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } }));
        for (const delta of split(item.arguments, 2)) out.push(ev("response.function_call_arguments.delta", { item_id: item.id, output_index, delta }));
        out.push(ev("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments }));
      }
      out.push(ev("response.output_item.done", { output_index, item }));
    });
    out.push(ev("response.completed", { response: r }));
    return out;
  },
};

// ------------------------------------------------------------------------------ anthropic messages

export const anthropicWire: Wire = {
  read(body) {
    const turns: Turn[] = [];
    const system = typeof body.system === "string" ? body.system : textOf(body.system);
    for (const m of arr(body.messages)) {
      if (m?.role === "assistant") {
        const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : arr(m.content);
        turns.push({
          role: "assistant",
          text: textOf(blocks.filter((b) => b?.type === "text")),
          calls: blocks.filter((b) => b?.type === "tool_use").map((b) => ({ name: String(b.name), args: parse(b.input) })),
        });
      } else if (m?.role === "user") {
        if (typeof m.content === "string") turns.push({ role: "user", text: m.content });
        for (const b of arr(m.content)) {
          if (b?.type === "tool_result") turns.push({ role: "tool", id: String(b.tool_use_id), text: textOf(b.content) });
          else if (b?.type === "text") turns.push({ role: "user", text: String(b.text) });
        }
      }
    }
    return { system, turns, tools: arr(body.tools).map((t) => String(t?.name)) };
  },
  write(body, reply, key) {
    const content: Obj[] = [];
    if (reply.text) content.push({ type: "text", text: reply.text });
    reply.calls.forEach((c, i) => content.push({ type: "tool_use", id: hashId("toolu_", key, i), name: c.name, input: c.args }));
    return {
      id: hashId("msg_", key),
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: reply.calls.length ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: tokens(JSON.stringify(body.messages ?? "") + JSON.stringify(body.system ?? "")),
        output_tokens: tokens(JSON.stringify(content)),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
  },
  stream(_body, r) {
    const out: [string | null, unknown][] = [
      ["message_start", { type: "message_start", message: { ...r, content: [], stop_reason: null, usage: { ...r.usage, output_tokens: 1 } } }],
      ["ping", { type: "ping" }],
    ];
    arr(r.content).forEach((b, index) => {
      if (b.type === "text") {
        out.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
        for (const text of split(b.text, 3)) out.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }]);
      } else {
        out.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } }]);
        for (const partial_json of split(JSON.stringify(b.input), 2))
          out.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }]);
      }
      out.push(["content_block_stop", { type: "content_block_stop", index }]);
    });
    out.push([
      "message_delta",
      { type: "message_delta", delta: { stop_reason: r.stop_reason, stop_sequence: null }, usage: { output_tokens: r.usage.output_tokens } },
    ]);
    out.push(["message_stop", { type: "message_stop" }]);
    return out;
  },
};

/** Splits text into about n pieces (streams deliver text in parts). */
function split(s: string, n: number): string[] {
  if (!s) return [];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}
