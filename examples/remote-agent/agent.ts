/**
 * A remote agent: the OpenAI support agent, recorded by the adapter and shipped as it runs to a
 * collector (`causeway serve`) with an HttpSink, instead of being written to a local folder. Open
 * the collector's folder in VS Code and the run grows in the Runs view as the agent works.
 *
 *   CAUSEWAY_TOKEN=dev-token causeway serve runs-remote                           # terminal 1
 *   CAUSEWAY_TOKEN=dev-token OPENAI_API_KEY=... CAUSEWAY_MODEL=gpt-4.1-mini \
 *     node test/fake-llm/run-example.cjs examples/remote-agent/agent.ts [--step] [--run-id ID]   # terminal 2
 *
 * Environment: CAUSEWAY_COLLECTOR (default http://127.0.0.1:7788), CAUSEWAY_TOKEN (required),
 * OPENAI_BASE_URL / OPENAI_API_KEY (the fake server of test/fake-llm, or a real endpoint).
 * `--step` waits for Enter before each model call, to watch the run arrive one step at a time.
 */
import readline from "node:readline";
import OpenAI from "openai";
import { HttpSink, openRun, traceOpenAI } from "causeway-vscode";
import { supportLoop } from "../openai-agent/agent";

export async function main(args: string[]): Promise<number> {
  const token = process.env.CAUSEWAY_TOKEN;
  if (!token) {
    console.error("set CAUSEWAY_TOKEN to the collector's token");
    return 2;
  }
  const collector = process.env.CAUSEWAY_COLLECTOR ?? "http://127.0.0.1:7788";
  const at = args.indexOf("--run-id");
  const runId = at >= 0 ? args[at + 1] : `remote-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`;
  const step = args.includes("--step");
  const rl = step ? readline.createInterface({ input: process.stdin }) : undefined;
  const lines = rl?.[Symbol.asyncIterator]();

  const sink = new HttpSink(collector, token, { onError: (err) => console.error(`collector: ${err.message}`) });
  const rt = openRun({ sink, runId, sensitiveTools: ["send_email"], untrustedTools: ["fetch_page"] });
  const ai = traceOpenAI(new OpenAI({ maxRetries: 1 }), rt.agent("support", { role: "answers customers" }));
  let answer = "";
  try {
    answer = await supportLoop(ai, (call, fn) => ai.runTool(call, fn), {
      model: process.env.CAUSEWAY_MODEL ?? "gpt-4.1-mini",
      beforeCall: lines
        ? async (turn) => {
            console.log(`step ${turn + 1}: ${sink.delivered} events delivered; press Enter for the next model call`);
            await lines.next();
          }
        : undefined,
    });
  } finally {
    await rt.finish({ answer }); // sends the rest; throws if the collector refused anything
    rl?.close();
  }
  console.log(`shipped ${runId} to ${collector} (${sink.delivered} events)\nanswer: ${answer}`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    },
  );
}
