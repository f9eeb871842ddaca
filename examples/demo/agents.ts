/**
 * The demo's three agents: the researcher reads the ticket, the refund policy, a vendor note and a
 * shipping FAQ, looks up the order and sends a summary to the planner; the planner turns it into
 * steps for the executor; the executor runs them as tool calls.
 */
import type { Runtime } from "causeway-vscode";
import { DOCS } from "./documents";

export async function program(rt: Runtime): Promise<{ tools_run: string[] }> {
  const researcher = rt.agent("researcher", { role: "gathers facts" });
  const planner = rt.agent("planner", { parent: "researcher", role: "decides steps" });
  const executor = rt.agent("executor", { parent: "planner", role: "runs tools" });

  const docs = DOCS.map((d) => researcher.observe(d.text, { source: d.source, trust: d.trust }));
  const order = await researcher.act("lookup_order", { order_id: 1042 });
  const summary = await researcher.decide([rt.taskRef!, ...docs, order], { model: "mock", purpose: "summarize" });
  researcher.send("planner", summary);

  const plan = await planner.decide([rt.taskRef!, ...planner.inbox()], { model: "mock", purpose: "plan" });
  planner.send("executor", plan);

  const calls = await executor.decide(executor.inbox(), { model: "mock", purpose: "execute" });
  const done: string[] = [];
  for (const c of (calls.value as { calls: { tool: string; args: Record<string, unknown> }[] }).calls) {
    await executor.act(c.tool, c.args, { decision: calls });
    done.push(c.tool);
  }
  return { tools_run: done };
}
