// A big run whose traced lineages are long (1,461 graph nodes): a lead and eight workers, each
// worker's and the lead's calls reading their previous result, so tracing one of worker-3's calls
// draws LINEAGE_MAX nodes one by one. Used by the layout unit test
// (test/unit/webview/traced-layout.test.ts) and the browser test of the traced graph; the SDK is
// passed in (core/index.ts or dist/lib/index.js).

/** Records the run as <root>/<runId>. @param {{ System: any }} sdk */
export async function recordWorkers(sdk, root, runId = "workers", rounds = 243) {
  const system = new sdk.System({
    name: "workers",
    task: "Handle every request per policy.",
    sensitiveTools: ["send_email"],
    models: { sim: (context, call) => ({ note: `${call.agent} ${call.purpose}: ${context.length} items` }) },
    tools: { lookup: ({ id }) => ({ id, total: id * 3 }), send_email: ({ to }) => ({ queued: true, to }) },
    program: async (rt) => {
      const lead = rt.agent("lead");
      const workers = Array.from({ length: 8 }, (_, i) => rt.agent(`worker-${i}`, { parent: "lead" }));
      const policy = [
        lead.observe("Reply within a day.", { source: "kb:policy", trust: "trusted" }),
        lead.observe("Escalate refunds.", { source: "kb:refunds", trust: "trusted" }),
      ];
      const last = new Map();
      let sent;
      for (let i = 0; i < rounds; i++) {
        const w = workers[i % 8];
        const input = w.observe(`Request ${i}: reply to user-${i}@example.com.`, { source: `inbox:item-${i}`, trust: i % 4 ? "untrusted" : "trusted" });
        const prev = last.get(w.name);
        const d = await w.decide([rt.taskRef, input, ...(prev ? [prev] : [])], { model: "sim", purpose: "work" });
        last.set(w.name, await w.act("lookup", { id: i }, { decision: d }));
        w.send("lead", d);
        const ld = await lead.decide([rt.taskRef, ...policy, ...lead.inbox().slice(-1), ...(sent ? [sent] : [])], { model: "sim", purpose: "reply" });
        sent = await lead.act("send_email", { to: `user-${i}@example.com` }, { decision: ld });
      }
    },
  });
  await system.run({ seed: 0, outDir: root, runId });
}
