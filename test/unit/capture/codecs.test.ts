/**
 * The wire-format codecs: which parts of a request become context items and where they sit; a
 * streamed response rebuilds to the plain one; a recorded request rebuilds exactly; and bodies of
 * any shape (they come from agents and upstreams) never make the codecs or the recorder throw.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { canonical } from "../../../core/log/hash";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { CODECS } from "../../../core/adapters/codecs";
import { PLACEHOLDER, type Codec } from "../../../core/adapters/codec";
import { aiSdkModel } from "../../../core/adapters/codec-ai-sdk";
import { anthropicMessages } from "../../../core/adapters/codec-anthropic";
import { openaiChat } from "../../../core/adapters/codec-openai-chat";
import { openaiResponses } from "../../../core/adapters/codec-openai-responses";
import { ConversationRecorder, openRun, runDir } from "../../../core/adapters/shared";
import { rebuildRequest } from "../../../core/replay/endpoint-replay";
import { anthropicWire, chatWire, responsesWire, type Wire } from "../../fake-llm/wire";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const REQUESTS: [Codec, Wire, Record<string, unknown>][] = [
  [
    openaiChat,
    chatWire,
    {
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Read https://x.example" },
            { type: "image_url", image_url: { url: "data:," } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "fetch_page", arguments: '{"url":"https://x.example"}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: "page text" },
      ],
      tools: [{ type: "function", function: { name: "fetch_page", parameters: {} } }],
      temperature: 0.5,
    },
  ],
  [
    openaiResponses,
    responsesWire,
    {
      model: "m",
      instructions: "Be brief.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Read https://x.example" }] },
        { type: "function_call", call_id: "c1", name: "fetch_page", arguments: '{"url":"https://x.example"}' },
        { type: "function_call_output", call_id: "c1", output: "page text" },
      ],
      tools: [{ type: "function", name: "fetch_page", parameters: {} }],
    },
  ],
  [
    anthropicMessages,
    anthropicWire,
    {
      model: "m",
      max_tokens: 10,
      system: [{ type: "text", text: "Be brief." }],
      messages: [
        { role: "user", content: "Read https://x.example" },
        { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "fetch_page", input: { url: "https://x.example" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "page text" }] },
      ],
      tools: [{ name: "fetch_page", input_schema: { type: "object" } }],
    },
  ],
];

describe("codecs", () => {
  it("find every system prompt, message block, tool result and tool definition, with its place", () => {
    const roles = (c: Codec, body: unknown) => c.blocks(body).map((b) => `${b.role}@${b.path.join(".")}${b.toolCallId ? `#${b.toolCallId}` : ""}`);
    expect(roles(openaiChat, REQUESTS[0][2])).toEqual([
      "system@messages.0.content",
      "user@messages.1.content.0.text",
      "user@messages.1.content.1",
      "assistant@messages.2",
      "tool@messages.3.content#c1",
      "tools@tools",
    ]);
    expect(roles(openaiResponses, REQUESTS[1][2])).toEqual([
      "system@instructions",
      "user@input.0.content.0.text",
      "assistant@input.1",
      "tool@input.2.output#c1",
      "tools@tools",
    ]);
    expect(roles(anthropicMessages, REQUESTS[2][2])).toEqual([
      "system@system.0.text",
      "user@messages.0.content",
      "assistant@messages.1",
      "tool@messages.2.content.0.content#c1",
      "tools@tools",
    ]);
    for (const [c, , body] of REQUESTS) expect(c.callsInRequest(body)).toEqual([{ id: "c1", name: "fetch_page", args: { url: "https://x.example" } }]);
  });

  for (const [codec, wire, body] of REQUESTS) {
    it(`${codec.api}: a streamed response rebuilds to the plain one`, () => {
      const reply = { text: "Sending it.", calls: [{ name: "send_email", args: { to: "a@b.example" } }] };
      const plain = wire.write(body, reply, "k");
      const events = wire
        .stream({ ...body, stream_options: { include_usage: true } }, plain)
        .map(([, d]) => d)
        .filter((d) => d !== "[DONE]");
      const rebuilt = codec.accumulate(events);
      expect(codec.toolCalls(rebuilt)).toEqual(codec.toolCalls(plain));
      expect(codec.assistantText(codec.output(rebuilt))).toBe(codec.assistantText(codec.output(plain)));
      expect(codec.usage(rebuilt).output_tokens).toBe(codec.usage(plain).output_tokens);
    });

    it(`${codec.api}: the recorded request rebuilds exactly`, async () => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "cw-codecs-"));
      dirs.push(out);
      const rt = openRun({ out, runId: "r", untrustedTools: ["fetch_page"] });
      const rec = new ConversationRecorder(rt.agent("a"));
      // the history's tool call came from an earlier response of this agent
      rec.exchange(
        codec,
        { model: "m", messages: [], input: [] },
        { response: wire.write({}, { text: "", calls: [{ name: "fetch_page", args: { url: "https://x.example" } }] }, "seed") },
      );
      rec.exchange(codec, body, { response: wire.write(body, { text: "done", calls: [] }, "k") });
      await rt.finish();
      const m = new RunModel(readRun(runDir(rt)!));
      const r = rebuildRequest(m, m.decisions[1].seq);
      expect(canonical(r.body)).toBe(canonical(body));
    });
  }

  it("never throw on bodies of any shape", () => {
    const junk: unknown[] = [
      null,
      3,
      "x",
      [],
      {},
      { messages: 5 },
      { messages: [null, 1, "s", { role: "tool" }, { role: "assistant", tool_calls: [null, { id: 3 }] }] },
      { input: [{ type: "function_call" }, { role: "user", content: [1, null] }] },
      { system: [null], messages: [{ role: "user", content: [{ type: "tool_result" }, null] }], tools: 7 },
    ];
    for (const c of Object.values(CODECS)) {
      for (const j of junk) {
        expect(() => [
          c.blocks(j),
          c.callsInRequest(j),
          c.output(j),
          c.toolCalls(j),
          c.usage(j),
          c.params(j),
          c.accumulate([j, { choices: [{ delta: { tool_calls: [{ index: 1e9 }] } }] }, { type: "content_block_delta", index: -1 }]),
          c.notReplayable(j, j),
        ]).not.toThrow();
      }
    }
  });

  it("the recorder records junk exchanges without throwing", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "cw-codecs-"));
    dirs.push(out);
    const rt = openRun({ out, runId: "junk" });
    const rec = new ConversationRecorder(rt.agent("a"));
    for (const c of Object.values(CODECS)) {
      rec.exchange(
        c,
        {
          messages: [
            { role: "tool", tool_call_id: "zz", content: { deep: [1, 2] } },
            { role: "assistant", tool_calls: [{ id: "q", function: { name: "t", arguments: "not json" } }] },
          ],
        },
        { response: { choices: "no" } },
      );
      rec.exchange(c, null, { error: "HTTP 500" });
    }
    rec.closePending();
    await rt.finish();
    expect(readRun(runDir(rt)!, { checkBlobs: true }).problems).toEqual([]);
  });

  it("ai-sdk.model: the AI SDK's language-model prompt (the same in ai 5, 6 and 7) and its stream parts", async () => {
    const body = {
      model: "m",
      provider: "openai.chat",
      prompt: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Read https://x.example" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reading." },
            { type: "tool-call", toolCallId: "c1", toolName: "fetch_page", input: { url: "https://x.example" } },
          ],
        },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "fetch_page", output: { type: "text", value: "page text" } }] },
      ],
      tools: [{ type: "function", name: "fetch_page", inputSchema: {} }],
      seed: 7,
    };
    const roles = aiSdkModel.blocks(body).map((b) => `${b.role}@${b.path.join(".")}${b.toolCallId ? `#${b.toolCallId}` : ""}`);
    expect(roles).toEqual([
      "system@prompt.0.content",
      "user@prompt.1.content.0.text",
      "assistant@prompt.2",
      "tool@prompt.3.content.0.output.value#c1",
      "tools@tools",
    ]);
    expect(aiSdkModel.callsInRequest(body)).toEqual([{ id: "c1", name: "fetch_page", args: { url: "https://x.example" } }]);
    expect(aiSdkModel.placeholder("page text")).toBe(PLACEHOLDER);
    // a streamed step (v3 usage) rebuilds to the step's result
    const parts = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "0" },
      { type: "text-delta", id: "0", delta: "Send" },
      { type: "text-delta", id: "0", delta: "ing." },
      { type: "tool-call", toolCallId: "c2", toolName: "send_email", input: '{"to":"a@b.example"}' },
      { type: "finish", finishReason: { unified: "tool-calls" }, usage: { inputTokens: { total: 9 }, outputTokens: { total: 4 } } },
    ];
    const rebuilt = aiSdkModel.accumulate(parts);
    expect(aiSdkModel.assistantText(aiSdkModel.output(rebuilt))).toBe("Sending.");
    expect(aiSdkModel.toolCalls(rebuilt)).toEqual([{ id: "c2", name: "send_email", args: { to: "a@b.example" } }]);
    expect(aiSdkModel.usage(rebuilt)).toEqual({ input_tokens: 9, output_tokens: 4 });
    expect(aiSdkModel.usage({ usage: { inputTokens: 3, outputTokens: 2 } })).toEqual({ input_tokens: 3, output_tokens: 2 }); // v2
    // recorded: the tool result is the untrusted input, the request rebuilds, but a decision replay is refused
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "cw-codecs-"));
    dirs.push(out);
    const rt = openRun({ out, runId: "ai", untrustedTools: ["fetch_page"] });
    const rec = new ConversationRecorder(rt.agent("a"));
    rec.exchange(
      aiSdkModel,
      { model: "m", prompt: [] },
      {
        response: {
          content: [
            { type: "text", text: "Reading." },
            { type: "tool-call", toolCallId: "c1", toolName: "fetch_page", input: '{"url":"https://x.example"}' },
          ],
        },
      },
    );
    rec.exchange(aiSdkModel, body, { response: { content: [{ type: "text", text: "done" }] } });
    await rt.finish();
    const m = new RunModel(readRun(runDir(rt)!));
    const d = m.decisions[1];
    expect(d.seed).toBe(7);
    const r = rebuildRequest(m, d.seq);
    expect(canonical(r.body)).toBe(canonical(body));
    expect(r.codec.notReplayable(r.body, null)).toMatch(/AI SDK/);
  });
});
