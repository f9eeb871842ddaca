// Starts the fake model server (server.ts: the OpenAI and Anthropic APIs on loopback) as a child
// process on a free port, for the end-to-end scenarios and the benchmarks that run real programs
// against it. Resolves once the server says where it listens.
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

/**
 * `followRate` (0–1) and `latencyMs` are server.ts's optional arguments (how often the model
 * follows a planted instruction; how long each answer takes). Returns { url, stop() }; `url` has
 * no /v1 (the OpenAI clients' base URL is `${url}/v1`, Anthropic's is `url`).
 */
export async function spawnFakeModelServer({ followRate, latencyMs } = {}) {
  const args = [path.join(ROOT, "test/fake-llm/run-example.cjs"), path.join(ROOT, "test/fake-llm/server.ts"), "0"];
  if (followRate !== undefined || latencyMs !== undefined) args.push(String(followRate ?? 0.8), String(latencyMs ?? 0)); // server.ts's defaults
  const fake = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    fake.stdout.on("data", (c) => {
      out += c;
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    fake.on("exit", () => reject(new Error(`the fake model server exited: ${out}`)));
  });
  return { url, stop: () => fake.kill() };
}
