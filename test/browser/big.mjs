// A run big enough to open grouped (more than 600 graph nodes): eight agents passing work around,
// 160 inputs, an e-mail per input. Used by the browser tests (the static report) and the
// end-to-end tests (the VS Code webview); the SDK is passed in (dist/lib/index.js).

/** Records the run as <root>/<runId>. @param {{ System: any }} sdk */
export async function recordBig(sdk, root, runId = "big") {
  const system = new sdk.System({
    name: "big",
    task: "Handle every request per policy.",
    sensitiveTools: ["send_email"],
    models: { sim: (context, call) => ({ note: `${call.agent} ${call.purpose}: ${context.length} items` }) },
    tools: { lookup: ({ id }) => ({ id, total: id * 3 }), send_email: ({ to }) => ({ queued: true, to }) },
    program: async (rt) => {
      const agents = Array.from({ length: 8 }, (_, i) => rt.agent(`agent-${i}`, { parent: i ? "agent-0" : undefined }));
      for (let i = 0; i < 160; i++) {
        const [a, b] = [agents[i % 8], agents[(i + 1) % 8]];
        const input = a.observe(`Request ${i}: reply to user-${i}@example.com.`, { source: `inbox:item-${i}`, trust: i % 4 ? "untrusted" : "trusted" });
        const found = await a.act("lookup", { id: i });
        const d1 = await a.decide([rt.taskRef, input, found, ...a.inbox().slice(-1)], { model: "sim", purpose: "triage" });
        a.send(b.name, d1);
        const d2 = await b.decide([rt.taskRef, ...b.inbox().slice(-1)], { model: "sim", purpose: "act" });
        await b.act("send_email", { to: `user-${i}@example.com` }, { decision: d2 });
      }
    },
  });
  await system.run({ seed: 0, outDir: root, runId });
}
