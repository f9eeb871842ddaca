// Two LlamaIndex.TS agents (agent() from @llamaindex/workflow, named by the framework): a
// researcher that reads the documents and an executor handed the researcher's brief inside text.
// No Causeway import.
import { agent } from "@llamaindex/workflow";
import { OpenAI } from "@llamaindex/openai";
import { fetchDoc, sendEmail } from "./llamaindex-tools.mjs";
import { EXECUTOR_PREFIX, TASK } from "./docs.mjs";

const llm = new OpenAI({ model: "gpt-4.1-mini", baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const researcher = agent({ name: "researcher", llm, tools: [fetchDoc], systemPrompt: "Read the documents named and report the facts." });
const executor = agent({ name: "executor", llm, tools: [sendEmail], systemPrompt: "Carry out the brief with the tools." });

const brief = String((await researcher.run(TASK)).data.result);
const done = await executor.run(EXECUTOR_PREFIX + brief);
console.log(String(done.data.result));
