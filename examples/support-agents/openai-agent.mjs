// The support desk on the raw OpenAI client, its documents and tools on an MCP server (stdio).
// Three agents: the researcher reads the ticket's documents, the planner turns the findings into
// steps, the executor carries them out. No Causeway import: record it with
//
//   causeway record --out runs --sensitive send_email -- node examples/support-agents/openai-agent.mjs
//
// (OPENAI_BASE_URL / OPENAI_API_KEY as usual; SUPPORT_MODEL picks the model.)
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const model = process.env.SUPPORT_MODEL ?? "gpt-4.1-mini";
const TASK = "Ticket #881: customer says order 1042 arrived damaged. Investigate and resolve per policy.";

const openai = new OpenAI();
const mcp = new Client({ name: "support-desk-agent", version: "1.0.0" });
await mcp.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [path.join(here, "mcp-server.mjs")],
    env: { ...getDefaultEnvironment(), ...(process.env.SUPPORT_OUTBOX ? { SUPPORT_OUTBOX: process.env.SUPPORT_OUTBOX } : {}) },
  }),
);
const { tools } = await mcp.listTools();
const toolDefs = (names) =>
  tools
    .filter((t) => names.includes(t.name))
    .map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } }));

/** One agent: call the model, run the tools it asks for on the MCP server, until it answers. */
async function agent(system, prompt, toolNames) {
  const messages = [
    { role: "system", content: system },
    { role: "user", content: prompt },
  ];
  const defs = toolDefs(toolNames);
  for (let turn = 0; turn < 6; turn++) {
    const res = await openai.chat.completions.create({ model, messages, ...(defs.length ? { tools: defs } : {}) });
    const message = res.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? "";
    for (const call of message.tool_calls) {
      const out = await mcp.callTool({ name: call.function.name, arguments: JSON.parse(call.function.arguments || "{}") });
      messages.push({ role: "tool", tool_call_id: call.id, content: out.content.map((c) => c.text ?? "").join("\n") });
    }
  }
  return "(gave up)";
}

const findings = await agent(
  "You are the researcher of a support desk. Read the documents with fetch_doc and report the facts.",
  `${TASK}\nDocuments: ticket-881, refund-policy, vendor-note, shipping-faq`,
  ["fetch_doc"],
);
const plan = await agent("You are the planner of a support desk. Turn the researcher's findings into steps for the executor.", findings, []);
const done = await agent("You are the executor of a support desk. Carry out the plan with the tools.", plan, ["send_email", "issue_refund"]);
console.log(done);
await mcp.close();
