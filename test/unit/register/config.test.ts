/** The preload's configuration: agent names from system prompts, declared tool modules, standalone use. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, parseToolSpecs, relativeArg, versionOk } from "../../../core/register/config";
import { agentFromPrompt } from "../../../core/adapters/agent-names";
import { anthropicMessages } from "../../../core/adapters/codec-anthropic";
import { openaiChat } from "../../../core/adapters/codec-openai-chat";
import { clientKind } from "../../../core/register/hooks";

describe("agent names", () => {
  it("come from the system prompt, the same every time", () => {
    const chat = (system: string) =>
      openaiChat.blocks({
        model: "m",
        messages: [
          { role: "system", content: system },
          { role: "user", content: "hi" },
        ],
      });
    expect(agentFromPrompt(chat("You are the researcher of a support desk."))).toBe("researcher");
    expect(agentFromPrompt(chat("You are a helpful planner."))).toBe("planner");
    expect(agentFromPrompt(anthropicMessages.blocks({ model: "m", system: "You are the executor.", messages: [] }))).toBe("executor");
    const generic = agentFromPrompt(chat("Answer briefly."));
    expect(generic).toMatch(/^agent-answer-briefly-[0-9a-f]{4}$/);
    expect(agentFromPrompt(chat("Answer briefly."))).toBe(generic);
    expect(agentFromPrompt(chat("Answer at length."))).not.toBe(generic);
    expect(agentFromPrompt(openaiChat.blocks({ model: "m", messages: [{ role: "user", content: "hi" }] }))).toBe("agent");
  });

  it("are never a common word: a sentence after 'you are' is not a role", () => {
    const chat = (system: string) =>
      openaiChat.blocks({
        model: "m",
        messages: [
          { role: "system", content: system },
          { role: "user", content: "hi" },
        ],
      });
    expect(agentFromPrompt(chat("You are given a customer ticket and three documents."))).toMatch(/^agent-you-are-given-[0-9a-f]{4}$/);
    for (const p of [
      "You are now in charge of refunds.",
      "You are responsible for the ticket.",
      "You are tasked with triage.",
      "You are working on a ticket.",
      "You are an AI assistant.",
      "You are a helpful assistant.",
    ]) {
      expect(agentFromPrompt(chat(p)), p).toMatch(/^agent-you-are-[a-z]+-[0-9a-f]{4}$/);
    }
    // a later sentence that names the role still names it
    expect(agentFromPrompt(chat("You are given a ticket. You are the triager of the desk."))).toBe("triager");
    expect(agentFromPrompt(chat("Your role is that of the reviewer."))).toBe("reviewer");
    expect(agentFromPrompt(chat("Act as a senior analyst."))).toBe("analyst");
    expect(agentFromPrompt(chat("Role: summariser\nKeep it short."))).toBe("summariser");
    expect(agentFromPrompt(chat("You're the dispatcher."))).toBe("dispatcher");
  });
});

describe("declared tool modules", () => {
  it("parse FILE:EXPORT[,EXPORT] and reject what names nothing", () => {
    expect(parseToolSpecs(["lib/tools.mjs:fetch_doc,send_email", "x.cjs:a;x.cjs:b"])).toEqual({
      "lib/tools.mjs": ["fetch_doc", "send_email"],
      "x.cjs": ["a", "b"],
    });
    expect(() => parseToolSpecs(["lib/tools.mjs"])).toThrow(/FILE:EXPORT/);
    expect(() => parseToolSpecs(["lib/tools.mjs:"])).toThrow(/names no export/);
    expect(() => parseToolSpecs(["lib/tools.mjs:fetch-doc"])).toThrow(/"fetch-doc" is not an export name/);
    expect(() => parseToolSpecs(["lib/tools.mjs:default"])).toThrow(/default export can't be declared/);
  });
});

describe("standalone configuration", () => {
  it("is off without CAUSEWAY_OUT or a causeway key, and records the command relative to the root", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-cfg-"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "x" }));
    expect(loadConfig({}, dir, ["node", path.join(dir, "agent.mjs")])).toBeNull();
    fs.writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: "x", causeway: { out: "runs", sensitiveTools: ["send_email"], tools: { "tools.mjs": ["fetch_doc"] } } }),
    );
    const c = loadConfig({ CAUSEWAY_SEED: "7", SECRET: "s3cr3t" }, dir, ["node", path.join(dir, "agent.mjs"), path.join(dir, "data.txt"), "--flag"])!;
    expect(c.program).toBe("node agent.mjs data.txt --flag");
    expect(c.seed).toBe(7);
    expect(c.sensitive).toEqual(["send_email"]);
    expect(c.tools).toEqual({ "tools.mjs": ["fetch_doc"] });
    expect(c.dir!.startsWith(path.join(dir, "runs", "agent-"))).toBe(true);
    expect(JSON.stringify(c)).not.toContain("s3cr3t");
    expect(relativeArg("/elsewhere/file", dir)).toBe("/elsewhere/file");
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("supported packages", () => {
  it("knows the client files and their versions", () => {
    expect(clientKind("file:///p/node_modules/openai/client.mjs")).toBe("openai");
    expect(clientKind("/p/node_modules/@anthropic-ai/sdk/client.js")).toBe("anthropic");
    expect(clientKind("/p/node_modules/@modelcontextprotocol/sdk/dist/cjs/client/index.js")).toBe("mcp");
    expect(clientKind("file:///p/node_modules/@langchain/langgraph/dist/pregel/index.js")).toBe("langgraph");
    expect(clientKind("/p/node_modules/@langchain/langgraph/dist/pregel/index.cjs")).toBe("langgraph");
    expect(clientKind("/p/node_modules/openai/resources/chat.mjs")).toBeUndefined();
    expect(clientKind("file:///p/node_modules/@openai/agents-core/dist/index.mjs")).toBe("openai-agents");
    expect(clientKind("/p/node_modules/@openai/agents-core/dist/index.js")).toBe("openai-agents");
    expect(clientKind("/p/node_modules/@openai/agents-core/dist/agent.mjs")).toBeUndefined();
    expect(clientKind("file:///p/node_modules/@llamaindex/workflow/dist/index.js")).toBe("llamaindex");
    expect(clientKind("/p/node_modules/@llamaindex/workflow/dist/index.cjs")).toBe("llamaindex");
    expect(clientKind("file:///p/node_modules/@mastra/core/dist/agent/index.js")).toBe("mastra");
    expect(clientKind("/p/node_modules/@mastra/core/dist/agent-BOxKOk3n.js")).toBeUndefined();
    expect(versionOk("mastra", "1.71.0")).toBe(true);
    expect(versionOk("mastra", "0.24.9")).toBe(false);
    expect(versionOk("llamaindex", "1.1.24")).toBe(true);
    expect(versionOk("openai", "6.49.0")).toBe(true);
    expect(versionOk("openai", "3.3.0")).toBe(false);
    expect(versionOk("openai", "7.59.0")).toBe(true);
    expect(versionOk("openai-agents", "0.20.0")).toBe(true);
    expect(versionOk("openai-agents", "1.0.0")).toBe(false);
    expect(versionOk("anthropic", "0.39.0")).toBe(true);
    expect(versionOk("mcp", "2.0.0")).toBe(false);
  });
});
