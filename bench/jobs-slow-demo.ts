/**
 * The demo System for the jobs benchmark (bench/jobs.ts) with a model that costs what a hosted one
 * does: every call first makes one round trip to the fake model server (test/fake-llm/, started
 * with 300 ms of latency) at $CAUSEWAY_BENCH_LLM_URL — the worker's own environment, as every
 * endpoint — then answers with the demo's seeded model, so verdicts are the demo's.
 */
import { System, type ModelCall } from "causeway-vscode";
import { program } from "../examples/demo/agents";
import { TASK } from "../examples/demo/documents";
import { mockModel } from "../examples/demo/models";
import { TOOLS } from "../examples/demo/tools";

async function slowModel(context: unknown[], call: ModelCall) {
  const url = process.env.CAUSEWAY_BENCH_LLM_URL;
  if (!url) throw new Error("CAUSEWAY_BENCH_LLM_URL is not set");
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: JSON.stringify({ model: "bench", messages: [{ role: "user", content: `call ${call.seed} ${context.length}` }] }),
  });
  await res.arrayBuffer();
  return mockModel(context, call);
}

export const SYSTEM = new System({
  program,
  models: { mock: slowModel },
  tools: TOOLS,
  task: TASK,
  name: "bench/jobs-slow-demo.ts:SYSTEM",
  sensitiveTools: ["issue_refund", "send_email", "export_customers"],
});
