// The support desk on the raw Anthropic client (CommonJS), its documents and tools on an MCP
// server (stdio). The ticket is read as an MCP resource; the researcher reads the other documents
// with fetch_doc; the executor's answer is streamed. No Causeway import: record it with
//
//   causeway record --out runs --sensitive send_email -- node examples/support-agents/anthropic-agent.cjs
//
// (ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY as usual; SUPPORT_MODEL picks the model.)
"use strict";
const path = require("node:path");
const Anthropic = require("@anthropic-ai/sdk");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = require("@modelcontextprotocol/sdk/client/stdio.js");

const model = process.env.SUPPORT_MODEL || "claude-sonnet-4-6";
const TASK = "Ticket #881: customer says order 1042 arrived damaged. Investigate and resolve per policy.";

async function main() {
  const claude = new Anthropic();
  const mcp = new Client({ name: "support-desk-agent", version: "1.0.0" });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(__dirname, "mcp-server.mjs")],
      env: { ...getDefaultEnvironment(), ...(process.env.SUPPORT_OUTBOX ? { SUPPORT_OUTBOX: process.env.SUPPORT_OUTBOX } : {}) },
    }),
  );
  const { tools } = await mcp.listTools();
  const toolDefs = (names) =>
    tools.filter((t) => names.includes(t.name)).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));

  /** One agent: call the model, run the tools it asks for on the MCP server, until it answers. */
  async function agent(system, content, toolNames, stream = false) {
    const messages = [{ role: "user", content }];
    const defs = toolDefs(toolNames);
    for (let turn = 0; turn < 6; turn++) {
      const body = { model, max_tokens: 1024, system, messages, ...(defs.length ? { tools: defs } : {}) };
      const res = stream ? await claude.messages.stream(body).finalMessage() : await claude.messages.create(body);
      messages.push({ role: "assistant", content: res.content });
      const uses = res.content.filter((b) => b.type === "tool_use");
      if (!uses.length)
        return res.content
          .filter((b) => b.type === "text")
          .map((b) => b.text)
          .join("\n");
      const results = [];
      for (const use of uses) {
        const out = await mcp.callTool({ name: use.name, arguments: use.input });
        results.push({
          type: "tool_result",
          tool_use_id: use.id,
          content: out.content.map((c) => c.text || "").join("\n"),
          ...(out.isError ? { is_error: true } : {}),
        });
      }
      messages.push({ role: "user", content: results });
    }
    return "(gave up)";
  }

  const ticket = await mcp.readResource({ uri: "support://docs/ticket-881" });
  const findings = await agent(
    "You are the researcher of a support desk. Read the documents with fetch_doc and report the facts.",
    [
      { type: "text", text: ticket.contents[0].text },
      { type: "text", text: `${TASK}\nDocuments: refund-policy, vendor-note, shipping-faq` },
    ],
    ["fetch_doc"],
  );
  const plan = await agent("You are the planner of a support desk. Turn the researcher's findings into steps for the executor.", findings, []);
  const done = await agent("You are the executor of a support desk. Carry out the plan with the tools.", plan, ["send_email", "issue_refund"], true);
  console.log(done);
  await mcp.close();
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exitCode = 1;
});
