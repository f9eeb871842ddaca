// Find the cause without the program (rung 2) on the support-desk examples recorded through the
// gateway: each example runs unmodified with its base URL pointed at the gateway in front of the
// fake model server (answering after LATENCY ms); then
// `causeway attribute RUN --target tool=send_email,arg~vendor-compliance --workers W --json` runs
// with no program, the recorded requests re-sent to the fake server, and is timed. Reports model
// calls, wall time and the causes, beside the program replays of the same examples
// (bench/results/*-unmodified.json, the latest).
//
//   node esbuild.mjs && node bench/agentless.mjs [--latency 300] [--workers 8] [--subject NAME --note TEXT]
// Results: bench/results/<date>-<subject, default agentless>.{json,md}; --note adds a line on how
// the build measured differs (e.g. another branch merged in).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { spawnFakeModelServer } from "../test/fake-llm/spawn.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const CLI = path.join(ROOT, "dist/cli.js");
const { startGateway } = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const LATENCY = Number(arg("--latency", 300));
const WORKERS = Number(arg("--workers", 8));
const SUBJECT = arg("--subject", "agentless");
const NOTE = arg("--note", "");
if (!/^[a-z0-9-]+$/.test(SUBJECT)) throw new Error("--subject: lowercase letters, digits and dashes");
const TARGET = "tool=send_email,arg~vendor-compliance";
const EXAMPLES = [
  { name: "openai", command: ["node", "examples/support-agents/openai-agent.mjs"] },
  { name: "anthropic", command: ["node", "examples/support-agents/anthropic-agent.cjs"] },
];

const fake = await spawnFakeModelServer({ followRate: 0.8, latencyMs: LATENCY });
const url = fake.url;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-bench-agentless-"));

function run(argv, env) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Records the example through a gateway until a recording has the target (the fake model draws anew each time). */
async function record(ex) {
  for (let attempt = 1; attempt <= 6; attempt++) {
    const runId = `${ex.name}-${attempt}`;
    const gw = await startGateway({ upstream: url, outDir: tmp, port: 0, runId, sensitiveTools: ["send_email"], untrustedTools: ["fetch_doc"] });
    const outbox = path.join(tmp, `${runId}-outbox.jsonl`);
    const r = await run(ex.command, {
      OPENAI_BASE_URL: `${gw.url}/v1`,
      OPENAI_API_KEY: "recording",
      ANTHROPIC_BASE_URL: gw.url,
      ANTHROPIC_API_KEY: "recording",
      SUPPORT_OUTBOX: outbox,
    });
    await gw.close();
    if (r.code !== 0) throw new Error(`${ex.name} failed under the gateway: ${r.stderr}`);
    if (fs.existsSync(outbox) && fs.readFileSync(outbox, "utf8").includes("vendor-compliance")) return { dir: path.join(tmp, runId), attempts: attempt };
  }
  throw new Error(`${ex.name}: no recording had the target in 6 attempts`);
}

/** The latest program-replay figures of the same examples (bench/unmodified.mjs). */
function programFigures() {
  const files = fs
    .readdirSync(path.join(ROOT, "bench/results"))
    .filter((f) => /-unmodified\.json$/.test(f))
    .sort();
  if (!files.length) return { file: null, rows: [] };
  const file = `bench/results/${files.at(-1)}`;
  return { file, rows: JSON.parse(fs.readFileSync(path.join(ROOT, file), "utf8")).rows ?? [] };
}

const rows = [];
try {
  for (const ex of EXAMPLES) {
    const { dir, attempts } = await record(ex);
    const t0 = performance.now();
    const r = await run([process.execPath, CLI, "attribute", dir, "--target", TARGET, "--workers", String(WORKERS), "--json"], {
      OPENAI_BASE_URL: `${url}/v1`,
      OPENAI_API_KEY: "fake",
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: "fake",
    });
    const seconds = (performance.now() - t0) / 1000;
    if (r.code !== 0) throw new Error(`attribute on ${ex.name} failed: ${r.stderr}`);
    const a = JSON.parse(r.stdout);
    rows.push({
      example: ex.command.join(" "),
      rung: a.rung,
      model_calls: a.model_calls,
      naive_model_calls: a.naive_model_calls,
      wall_s: Math.round(seconds * 10) / 10,
      causes: a.causes.map((c) => `${c.spec} ${c.role} ${c.effect >= 0 ? "+" : ""}${c.effect.toFixed(2)} [${c.ci.map((x) => x.toFixed(2)).join(", ")}]`),
      ruled_out: a.ruled_out,
      inconclusive: a.inconclusive,
      recordings: attempts,
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
} finally {
  fake.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}

const program = programFigures();
const date = new Date().toISOString().slice(0, 10);
const load = os.loadavg().map((x) => Math.round(x * 10) / 10);
const result = {
  date,
  note: NOTE || undefined,
  load_average: load,
  latency_ms: LATENCY,
  workers: WORKERS,
  cpus: os.cpus().length,
  node: process.version,
  target: TARGET,
  rows,
  program_replays: { file: program.file, rows: program.rows.filter((p) => rows.some((r) => r.example === p.example)) },
};
const beside = (r) => program.rows.find((p) => p.example === r.example);
const md = [
  `# Find the cause without the program (${date})`,
  "",
  `Each example recorded through the gateway (no program named), then \`causeway attribute RUN --target "${TARGET}" --workers ${WORKERS} --json\` with the recorded requests re-sent (rung 2) to the fake model server answering after ${LATENCY} ms; ${os.cpus().length} CPUs (shared, load average ${load.join(", ")} at the end), Node ${process.version}.`,
  ...(NOTE ? [NOTE] : []),
  `Command: \`node bench/agentless.mjs --latency ${LATENCY} --workers ${WORKERS}${SUBJECT !== "agentless" ? ` --subject ${SUBJECT}` : ""}\`. The program replays of the same examples (rung 3) are from ${program.file ? `[${path.basename(program.file).replace(/\.json$/, ".md")}](${path.basename(program.file).replace(/\.json$/, ".md")})` : "no results file"}.`,
  "",
  "| example | rung 2: model calls | rung 2: wall time | rung 3: model calls | rung 3: wall time | causes (rung 2) |",
  "|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| \`${r.example}\` | ${r.model_calls} | ${r.wall_s} s | ${beside(r)?.model_calls ?? "–"} | ${beside(r) ? `${beside(r).wall_s} s` : "–"} | ${r.causes.join("; ")} |`,
  ),
  "",
].join("\n");
fs.mkdirSync(path.join(ROOT, "bench/results"), { recursive: true });
fs.writeFileSync(path.join(ROOT, `bench/results/${date}-${SUBJECT}.json`), JSON.stringify(result, null, 1) + "\n");
fs.writeFileSync(path.join(ROOT, `bench/results/${date}-${SUBJECT}.md`), md);
console.log(md);
