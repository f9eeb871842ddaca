// The synthetic multi-agent runs of the large-run benchmarks (webview-graph.mjs, report.mjs),
// recorded with the SDK: seeded, with simulated models and fake tools.
//   team   the issue's run: 10 agents passing work around, 200 inputs from four source families in
//          1,473 events (the number of inputs scales with the events asked for);
//   queue  a three-agent support system working through a queue of tickets in one run;
//   mesh   the worst case: 12 agents in a ring, every model call seeing the last messages.

/** The workloads by name, each a function of the number of events giving a System of the SDK `sdk`. */
export function workloads(sdk) {
  const model = (context, call) => ({ note: `${call.agent} ${call.purpose} ${call.seed % 1000}: ${context.length} items`, steps: call.seed % 3 });
  const tools = {
    lookup_order: ({ id }) => ({ id, total: (id * 37) % 500 }),
    issue_refund: ({ id, amount }) => ({ refund: `rf_${id}`, amount }),
    send_email: ({ to }) => ({ queued: true, to }),
    escalate: ({ id }) => ({ ticket: `esc-${id}` }),
  };

  /** A support system working through a queue of tickets: about 10 events per ticket. */
  function queue(events) {
    const tickets = Math.max(1, Math.round((events - 6) / 10.25));
    return new sdk.System({
      name: "bench:queue",
      task: "Work through the ticket queue and resolve each ticket per policy.",
      sensitiveTools: ["issue_refund", "send_email"],
      models: { sim: model },
      tools,
      program: async (rt) => {
        const researcher = rt.agent("researcher", { role: "reads tickets" });
        const planner = rt.agent("planner", { parent: "researcher", role: "plans" });
        const executor = rt.agent("executor", { parent: "planner", role: "acts" });
        const policy = researcher.observe("Refund policy: damaged items under $200 are refunded; notify the customer.", {
          source: "kb:refund_policy.md",
          trust: "trusted",
        });
        for (let t = 0; t < tickets; t++) {
          const ticket = researcher.observe(`Ticket ${t}: order ${1000 + t} arrived damaged; write to customer-${t}@example.com.`, {
            source: `inbox:ticket-${t}`,
            trust: "untrusted",
          });
          const page = researcher.observe(`Vendor note ${t % 9}: batch ${t % 5} had packaging problems.`, {
            source: `vendor:notes/${t % 9}`,
            trust: "untrusted",
          });
          const order = await researcher.act("lookup_order", { id: 1000 + t });
          const notes = researcher.inbox().slice(-1);
          const summary = await researcher.decide([rt.taskRef, ticket, policy, page, order, ...notes], { model: "sim", purpose: "summarize" });
          researcher.send("planner", summary);
          const plan = await planner.decide([rt.taskRef, ...planner.inbox().slice(-1)], { model: "sim", purpose: "plan" });
          planner.send("executor", plan);
          const calls = await executor.decide(executor.inbox().slice(-1), { model: "sim", purpose: "execute" });
          if (t % 7 === 3) await executor.act("escalate", { id: t }, { decision: calls });
          else await executor.act("issue_refund", { id: 1000 + t, amount: (t * 37) % 200 }, { decision: calls });
          await executor.act("send_email", { to: `customer-${t}@example.com` }, { decision: calls });
          if (t % 4 === 0) executor.send("researcher", calls); // shared notes across tickets
        }
        return { tickets };
      },
    });
  }

  /** The worst case: 12 agents in a ring; 6 events per agent per round. */
  function mesh(events) {
    const AGENTS = 12;
    const rounds = Math.max(1, Math.round((events - 4 - AGENTS) / 6 / AGENTS));
    return new sdk.System({
      name: "bench:mesh",
      task: "Reconcile the accounts of every region and report discrepancies.",
      sensitiveTools: ["issue_refund", "send_email"],
      models: { sim: model },
      tools,
      program: async (rt) => {
        const agents = Array.from({ length: AGENTS }, (_, i) =>
          rt.agent(`agent-${String(i).padStart(2, "0")}`, { role: `region ${i}`, parent: i ? `agent-${String(i - 1).padStart(2, "0")}` : undefined }),
        );
        for (let r = 0; r < rounds; r++) {
          for (let i = 0; i < AGENTS; i++) {
            const a = agents[i];
            const doc = a.observe(`Ledger ${r}/${i}: balances for region ${i}, batch ${r}.`, { source: `ledger:${i}/${r}`, trust: "trusted" });
            const web = a.observe(`Forum post ${r}/${i}; contact ops-${(r * 7 + i) % 13}@example.com.`, { source: `web:forum/${i}-${r}`, trust: "untrusted" });
            const found = await a.act("lookup_order", { id: r * AGENTS + i });
            const out = await a.decide([rt.taskRef, doc, web, found, ...a.inbox().slice(-2)], { model: "sim", purpose: "reconcile" });
            a.send(agents[(i + 1) % AGENTS].name, out);
            const tool = ["send_email", "issue_refund", "escalate"][(r + i) % 3];
            await a.act(tool, tool === "send_email" ? { to: `ops-${(r * 7 + i) % 13}@example.com` } : { id: r * AGENTS + i, amount: r }, { decision: out });
          }
        }
        return { rounds };
      },
    });
  }

  /** The issue's run: 10 agents, work passed from one to the next, ~7.3 events per input. */
  function team(events) {
    const AGENTS = 10;
    const inputs = Math.max(1, Math.round((events - 13) / 7.3));
    const families = [
      ["inbox", "untrusted"],
      ["web", "untrusted"],
      ["vendor", "untrusted"],
      ["kb", "trusted"],
    ];
    return new sdk.System({
      name: "bench:team",
      task: "Handle every request in the queue per policy, passing work to the agent that owns it.",
      sensitiveTools: ["issue_refund", "send_email"],
      models: { sim: model },
      tools: { ...tools, log_note: ({ id }) => ({ noted: id }) },
      program: async (rt) => {
        const agents = Array.from({ length: AGENTS }, (_, i) =>
          rt.agent(`agent-${String(i).padStart(2, "0")}`, { role: `desk ${i}`, parent: i ? "agent-00" : undefined }),
        );
        for (let i = 0; i < inputs; i++) {
          const a = agents[i % AGENTS];
          const b = agents[(i + 1) % AGENTS];
          const [family, trust] = families[i % families.length];
          const input = a.observe(`Request ${i}: order ${2000 + i}; reply to user-${i}@example.com.`, { source: `${family}:item-${i}`, trust });
          const found = await a.act("lookup_order", { id: 2000 + i });
          const d1 = await a.decide([rt.taskRef, input, found, ...a.inbox().slice(-1)], { model: "sim", purpose: "triage" });
          a.send(b.name, d1);
          const d2 = await b.decide([rt.taskRef, ...b.inbox().slice(-1)], { model: "sim", purpose: "act" });
          await b.act(i % 5 === 2 ? "escalate" : "issue_refund", { id: 2000 + i, amount: (i * 37) % 200 }, { decision: d2 });
          await b.act("log_note", { id: i }, { decision: d2 });
          if (i % 10 < 3) await b.act("send_email", { to: `user-${i}@example.com` }, { decision: d2 });
        }
        return { inputs };
      },
    });
  }

  return { team, queue, mesh };
}
