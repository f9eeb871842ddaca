/**
 * A benchmark scenario as a re-executable System: researchers → planner (→ reviewer) → executor.
 * The language model ("llm") is the simulated one; the executor's "runner" only runs the plan.
 */
import { System, type Item, type Runtime } from "causeway-vscode";
import type { Scenario } from "./scenarios";
import { CallCounter, runnerModel, simModel } from "./sim";

export function buildSystem(sc: Scenario, counter: CallCounter = new CallCounter()): System {
  const program = async (rt: Runtime) => {
    const planner = rt.agent("planner", { role: "decides steps" });
    const executor = rt.agent("executor", { parent: "planner", role: "runs tools" });
    for (const [name, docs] of Object.entries(sc.researchers)) {
      const r = rt.agent(name, { role: "reads sources" });
      const items: Item[] = docs.map((d) => r.observe(d.text, { source: d.source, trust: d.trust }));
      for (const [tool, args] of sc.lookups[name] ?? []) items.push(await r.act(tool, args));
      const summary = await r.decide([rt.taskRef!, ...items], { model: "llm", purpose: "summarize" });
      r.send("planner", summary);
    }
    const plan = await planner.decide([rt.taskRef!, ...planner.inbox()], { model: "llm", purpose: "plan" });
    if (sc.reviewer) {
      const reviewer = rt.agent("reviewer", { parent: "planner", role: "reviews plans" });
      planner.send("reviewer", plan);
      const review = await reviewer.decide([rt.taskRef!, ...reviewer.inbox()], { model: "llm", purpose: "review" });
      planner.send("executor", plan);
      reviewer.send("executor", review);
    } else planner.send("executor", plan);
    const calls = await executor.decide(executor.inbox(), { model: "runner", purpose: "execute" });
    const done: string[] = [];
    for (const c of (calls.value as { calls: { tool: string; args: Record<string, unknown> }[] }).calls) {
      await executor.act(c.tool, c.args, { decision: calls });
      done.push(c.tool);
    }
    return { tools_run: done };
  };
  return new System({
    program,
    models: { llm: simModel(sc.planner, counter), runner: runnerModel(counter) },
    tools: sc.tools,
    task: sc.task,
    name: `bench:${sc.name}`,
    sensitiveTools: sc.sensitive,
  });
}

/** Language-model calls one run of the scenario makes (researchers, planner, reviewer). */
export function llmCallsPerRun(sc: Scenario): number {
  return Object.keys(sc.researchers).length + 1 + (sc.reviewer ? 1 : 0);
}
