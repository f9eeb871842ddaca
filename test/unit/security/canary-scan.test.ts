/**
 * Credentials never reach disk, checked the way an attacker would look for them: a fake upstream
 * on loopback echoes every credential it receives (all headers, the query string) in a successful
 * answer and in a 401 error body; the same calls are recorded through the gateway (the CLI's, with
 * SOME_TOKEN in its environment) and through the preload (an unmodified program on the openai
 * package with `apiKey`, `defaultQuery: {key}` and SOME_TOKEN in its environment). Then every file
 * the recording wrote (each run folder walked recursively, every blob), `alerts --json`, the static
 * report and everything the commands printed are read: no canary may appear anywhere, and
 * `[redacted]` must stand where each secret was. The runs still verify (redaction happens before
 * hashing).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEchoUpstream, type EchoUpstream } from "../../fake-llm/echo-credentials";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const CLI = path.join(ROOT, "dist/cli.js");
const canary = (n: number) => `cwcanary${n}-${randomBytes(10).toString("hex")}`;
/** apiKey (Authorization: Bearer), the query key, an environment variable. */
const CANARY1 = canary(1);
const CANARY2 = canary(2);
const CANARY3 = canary(3);
/** The gateway leg also sends an x-api-key header. */
const CANARY4 = canary(4);
const CANARIES = { CANARY1, CANARY2, CANARY3, CANARY4 };

interface Done {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Done> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** Every file under a folder, recursively. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** What was scanned: a name (file path or "stdout of …") → its text. */
const scanned = new Map<string, string>();
const note = (name: string, text: string) => scanned.set(name, text);

/** Each canary found, with where. */
function leaks(): string[] {
  const found: string[] = [];
  for (const [name, text] of scanned) for (const [label, c] of Object.entries(CANARIES)) if (text.includes(c)) found.push(`${label} in ${name}`);
  return found;
}

let echo: EchoUpstream;
let tmp: string;
const runs: Record<string, string> = {};

beforeAll(async () => {
  echo = await startEchoUpstream();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-canary-"));

  // ---- the gateway (the CLI's), the client's key in a header, another in the query string
  const gw = spawn(process.execPath, [CLI, "gateway", "--upstream", echo.url, "--out", path.join(tmp, "gateway"), "--port", "0", "--run-id", "gw", "--json"], {
    cwd: ROOT,
    env: { ...process.env, SOME_TOKEN: CANARY3 },
  });
  let gwOut = "";
  let gwErr = "";
  gw.stderr.on("data", (c) => (gwErr += c));
  const lines = readline.createInterface({ input: gw.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on("line", (l) => {
      gwOut += l + "\n";
      try {
        const j = JSON.parse(l);
        if (j.event === "listening") resolve(j.url);
      } catch {
        /* not JSON */
      }
    });
    gw.on("exit", () => reject(new Error(`the gateway exited: ${gwErr}`)));
  });
  const client = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: CANARY1,
    defaultQuery: { key: CANARY2 },
    defaultHeaders: { "x-api-key": CANARY4, "x-causeway-agent": "buyer" },
    maxRetries: 0,
  });
  const system = { role: "system" as const, content: "You are a careful assistant." };
  const first = await client.chat.completions.create({ model: "echo-1", messages: [system, { role: "user", content: `debug dump: SOME_TOKEN=${CANARY3}` }] });
  expect(first.choices[0].message.content).toContain(CANARY1); // the upstream really echoes
  await expect(
    client.chat.completions.create({
      model: "echo-1",
      messages: [system, { role: "user", content: "hello" }, first.choices[0].message, { role: "user", content: "now fail please" }],
    }),
  ).rejects.toThrow(/401/);
  const exited = new Promise<void>((resolve) => gw.on("exit", () => resolve()));
  gw.kill("SIGTERM");
  await exited;
  note("stdout of causeway gateway", gwOut);
  note("stderr of causeway gateway", gwErr);
  runs.gateway = path.join(tmp, "gateway", "gw");

  // ---- the preload: an unmodified program, its key in code, another in defaultQuery, a third in its environment
  const rec = await cli(["record", "--out", path.join(tmp, "preload"), "--run-id", "pre", "--", "node", "test/unit/security/fixtures/canary-agent.mjs"], {
    ECHO_BASE_URL: `${echo.url}/v1`,
    CW_CANARY_ONE: CANARY1,
    CW_CANARY_TWO: CANARY2,
    SOME_TOKEN: CANARY3,
  });
  expect(rec.code, rec.stderr).toBe(0);
  expect(rec.stdout).toContain("second call failed with HTTP 401");
  note("stdout of causeway record", rec.stdout);
  note("stderr of causeway record", rec.stderr);
  runs.preload = path.join(tmp, "preload", "pre");
  // both legs reached the upstream with every credential (else the scan would prove nothing)
  expect(echo.requests).toHaveLength(4);
  for (const r of echo.requests) {
    expect(r.headers.authorization).toBe(`Bearer ${CANARY1}`);
    expect(r.url).toContain(`key=${CANARY2}`);
  }

  // ---- what a reader of the runs is shown: alerts --json, the static report, verify
  for (const [leg, dir] of Object.entries(runs)) {
    const alerts = await cli(["alerts", dir, "--json"]);
    expect(alerts.code, alerts.stderr).toBe(0);
    note(`stdout of causeway alerts --json (${leg})`, alerts.stdout);
    note(`stderr of causeway alerts --json (${leg})`, alerts.stderr);
    const verify = await cli(["verify", dir]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }
  const report = path.join(tmp, "report.html");
  const rep = await cli(["report", tmp, "-o", report]);
  expect(rep.code, rep.stderr).toBe(0);
  note("stdout of causeway report", rep.stdout + rep.stderr);
  // every file written under the temporary root: both run folders (events, every blob, anything else) and the report
  for (const f of walk(tmp)) note(f, fs.readFileSync(f, "latin1"));
}, 240_000);

afterAll(async () => {
  await echo?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const blobsOf = (dir: string) => walk(path.join(dir, "blobs")).map((f) => fs.readFileSync(f, "utf8"));

describe("canary scan: no credential reaches any file a recording writes", () => {
  it("no canary appears in any run file, blob, alerts --json output, the static report or printed line", () => {
    const files = [...scanned.keys()];
    expect(files.filter((f) => f.includes(`${path.sep}blobs${path.sep}`)).length).toBeGreaterThan(8);
    expect(files.some((f) => f.endsWith("report.html"))).toBe(true);
    expect(leaks(), `scanned ${files.length} files and outputs:\n  ${files.join("\n  ")}`).toEqual([]);
  });

  for (const leg of ["gateway", "preload"]) {
    it(`${leg}: [redacted] stands where each secret was (the URL's key, the echoed headers, the error body)`, () => {
      const blobs = blobsOf(runs[leg]);
      const request = blobs.find((b) => b.includes('"url"') && b.includes("chat/completions"));
      expect(request, "the recorded request").toBeDefined();
      expect(request).toContain("key=[redacted]");
      // the successful answer quoted the Authorization header, the query and the prompt
      expect(blobs.some((b) => b.includes("Bearer [redacted]") && b.includes("key=[redacted]") && b.includes("SOME_TOKEN=[redacted]"))).toBe(true);
      // the 401 error body quoted them too
      const error = blobs.find((b) => b.includes("HTTP 401") && b.includes("Incorrect API key provided"));
      expect(error, "the recorded error").toBeDefined();
      expect(error).toContain("Bearer [redacted]");
      const events = fs.readFileSync(path.join(runs[leg], "events.jsonl"), "utf8");
      expect(events).toContain('"status": "error"');
    });
  }
});
