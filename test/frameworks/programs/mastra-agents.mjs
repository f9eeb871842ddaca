// Two Mastra agents (Agent from @mastra/core, named by the framework) on the AI SDK's OpenAI
// provider: a researcher that reads the documents and an executor handed the researcher's brief
// inside text. No Causeway import. Mastra needs Node >= 22.
import { Agent } from "@mastra/core/agent";
import { createOpenAI } from "@ai-sdk/openai";
import { fetchDoc, sendEmail } from "./mastra-tools.mjs";
import { EXECUTOR_PREFIX, TASK } from "./docs.mjs";

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = openai.chat("gpt-4.1-mini");
const researcher = new Agent({
  id: "researcher",
  name: "researcher",
  model,
  tools: { fetch_doc: fetchDoc },
  instructions: "Read the documents named and report the facts.",
});
const executor = new Agent({ id: "executor", name: "executor", model, tools: { send_email: sendEmail }, instructions: "Carry out the brief with the tools." });

const brief = (await researcher.generate(TASK, { maxSteps: 4 })).text;
const done = await executor.generate(EXECUTOR_PREFIX + brief, { maxSteps: 4 });
console.log(done.text);
