/**
 * The CLI's contract over every command it lists: `--help` exits 0 with the usage line, a usage
 * error exits 2 with one line on stderr, and `--json` (where the usage offers it) prints JSON that
 * parses — one document, or JSON Lines for the long-running commands — and the README names
 * exactly the commands that take it.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import OpenAI from "openai";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";
import { runOpenAIAgent } from "../../examples/openai-agent/agent";
import { readRun } from "../../core/log/reader";
import { RunModel } from "../../core/graph/model";

const ROOT = path.resolve(__dirname, "../..");
const CLI = path.join(ROOT, "dist/cli.js");
const FIX = path.join(ROOT, "test/fixtures/causeway-py-demo/demo-seed0");

function cli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, encoding: "utf8", env: opts.env ?? process.env });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** The same, without blocking this process's event loop (for commands that talk to a server in it). */
function cliAsync(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("close", (code) => resolve({ code: code ?? -1, out, err }));
  });
}

/** Starts a long-running command, waits for its first JSON line, stops it with SIGTERM; all lines must parse. */
function jsonLines(
  args: string[],
  until: (lines: Record<string, unknown>[]) => boolean,
): Promise<{ lines: Record<string, unknown>[]; code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CLI, ...args], { cwd: ROOT });
    let buf = "";
    let err = "";
    const lines: Record<string, unknown>[] = [];
    let stopping = false;
    c.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          c.kill("SIGKILL");
          reject(new Error(`not JSON: ${line}`));
          return;
        }
      }
      if (!stopping && until(lines)) {
        stopping = true;
        c.kill("SIGTERM");
      }
    });
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("close", (code) => (buf.trim() ? reject(new Error(`unterminated output: ${buf}`)) : resolve({ lines, code, err })));
  });
}

const commands = (): string[] =>
  cli(["--help"])
    .out.split("\n")
    .map((l) => /^ {2}([a-z][a-z-]*) /.exec(l)?.[1])
    .filter((x): x is string => !!x);

describe("the CLI's contract", () => {
  let tmp: string;
  let runs: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-contract-"));
    runs = path.join(tmp, "runs");
    const r = cli(["record", "causeway:demo", "--out", runs, "--seed", "0"]);
    expect(r.code, r.err).toBe(0);
  }, 60_000);
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("lists its commands, and every one answers --help with its usage and exit 0", () => {
    const names = commands();
    expect(names).toEqual(
      expect.arrayContaining([
        "demo",
        "record",
        "verify",
        "alerts",
        "taint",
        "graph",
        "test",
        "attribute",
        "matrix",
        "replay",
        "index",
        "report",
        "gateway",
        "serve",
        "watch",
        "import",
        "test-endpoint",
      ]),
    );
    for (const name of names) {
      const r = cli([name, "--help"]);
      expect(r.code, name).toBe(0);
      expect(r.out, name).toMatch(new RegExp(`^usage: causeway ${name}\\b`));
    }
  });

  it("answers a usage error with exit 2 and one line, for every command", () => {
    for (const name of commands()) {
      const r = cli([name, "--no-such-option"]);
      expect(r.code, name).toBe(2);
      expect(r.err.trim().split("\n"), name).toHaveLength(1);
      expect(r.err, name).toMatch(new RegExp(`^causeway ${name}: `));
    }
  });

  it("record: a missing :EXPORT, an unknown export and a missing file are usage errors", () => {
    const cases: [string[], RegExp][] = [
      [["record", "examples/demo/system.ts", "--out", runs], /not MODULE:EXPORT/],
      [["record", "examples/demo/system.ts:NOPE", "--out", runs], /no System named "NOPE"/],
      [["record", "no/such/file.ts:SYSTEM", "--out", runs], /not found; tried .*no\/such\/file\.ts/],
    ];
    for (const [args, msg] of cases) {
      const r = cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(msg);
    }
  });

  it("record: a seed whose run exists is recorded under a new id, and says so", () => {
    const again = cli(["record", "causeway:demo", "--out", runs, "--seed", "0"]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/note: a run demo-seed0 already exists in .*; this one is demo-seed0-2/);
    const j = cli(["record", "causeway:demo", "--out", runs, "--seed", "0", "--json"]);
    expect(JSON.parse(j.out)).toMatchObject({ run_id: "demo-seed0-3", note: expect.stringContaining("this one is demo-seed0-3") });
    const fresh = cli(["record", "causeway:demo", "--out", runs, "--seed", "5", "--json"]);
    expect(JSON.parse(fresh.out)).toMatchObject({ run_id: "demo-seed5", note: null });
  });

  it("resolves a run's program against the working directory, never next to the run, and names the file on stderr", () => {
    const proj = path.join(tmp, "proj");
    fs.mkdirSync(path.join(proj, "examples/quickstart"), { recursive: true });
    fs.copyFileSync(path.join(ROOT, "examples/quickstart/quickstart.ts"), path.join(proj, "examples/quickstart/quickstart.ts"));
    const spec = "examples/quickstart/quickstart.ts:SYSTEM";
    const rec = cli(["record", spec, "--out", "runs", "--json"], { cwd: proj });
    expect(rec.code, rec.err).toBe(0);
    const run = (JSON.parse(rec.out) as { run: string }).run;
    const r = cli(["replay", path.resolve(proj, run), "--allow-program", spec, "--json"], { cwd: proj });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ diffs: [] }); // stdout holds the result alone
    expect(r.err).toContain(`causeway: replaying with ${path.join(proj, "examples/quickstart/quickstart.ts")} (export SYSTEM, sha256 `);
    // from another folder the program beside the run is not looked for: the error names the one path tried
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "cw-elsewhere-"));
    const miss = cli(["replay", path.resolve(proj, run), "--allow-program", spec], { cwd: elsewhere });
    expect(miss.code).toBe(2);
    expect(miss.err).toContain(path.join(elsewhere, "examples/quickstart/quickstart.ts"));
    expect(miss.err).not.toContain(proj);
  });

  it("docs/cli.md's command reference is what each command's --help says", () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, "scripts/cli-docs.mjs"), "--check"], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
  });

  it("every command whose usage offers --json prints JSON, and docs/cli.md lists exactly those", async () => {
    const offered = commands().filter((name) => cli([name, "--help"]).out.includes("--json"));
    expect(offered.sort()).toEqual(commands().sort());
    const readme = fs.readFileSync(path.join(ROOT, "docs/cli.md"), "utf8");
    const sentence = /Every command takes `--json`[^.]*JSON Lines[^.]*\./.exec(readme);
    expect(sentence, "docs/cli.md: the sentence saying what --json prints").not.toBeNull();
    const streaming = [...sentence![0].matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).filter((c) => offered.includes(c));
    expect(streaming.sort()).toEqual(["gateway", "serve", "watch"]);

    const run = path.join(runs, "demo-seed0");
    const docs: [string, string[]][] = [
      ["verify", ["verify", run, "--json"]],
      ["alerts", ["alerts", run, "--json"]],
      ["taint", ["taint", run, "--json"]],
      ["graph", ["graph", run, "--json"]],
      ["index", ["index", runs, "--json"]],
      ["report", ["report", runs, "-o", path.join(tmp, "r.html"), "--json"]],
      [
        "test",
        [
          "test",
          run,
          "--remove",
          "input:vendor:*",
          "--target",
          "tool=send_email,arg~vendor-compliance",
          "--n",
          "5",
          "--allow-program",
          "causeway:demo",
          "--json",
        ],
      ],
      [
        "attribute",
        ["attribute", run, "--target", "tool=send_email,arg~vendor-compliance", "--n", "5", "--n-max", "5", "--allow-program", "causeway:demo", "--json"],
      ],
      ["matrix", ["matrix", run, "--target", "tool=send_email,arg~vendor-compliance", "--n", "3", "--allow-program", "causeway:demo", "--json"]],
      ["replay", ["replay", run, "--allow-program", "causeway:demo", "--json"]],
      ["import", ["import", "otel", path.join(ROOT, "test/fixtures/otel/support-agent.json"), "--out", path.join(tmp, "otel"), "--json"]],
      ["demo", ["demo", "--out", path.join(tmp, "demo"), "--n", "5", "--json"]],
      ["record", ["record", "causeway:demo", "--out", runs, "--seed", "3", "--json"]],
    ];
    for (const [name, args] of docs) {
      const r = cli(args);
      expect(r.code, `${name}: ${r.err}`).toBe(0);
      expect(() => JSON.parse(r.out), name).not.toThrow();
    }
    const demo = JSON.parse(cli(["demo", "--out", path.join(tmp, "demo2"), "--n", "5", "--json"]).out) as {
      runs: unknown[];
      blast_radius: { reached_exfiltration: boolean }[];
    };
    expect(demo.runs).toHaveLength(8);
    expect(demo.blast_radius.length).toBeGreaterThan(0);

    // long-running commands: one JSON object per line, from the first line to the last
    const watch = await jsonLines(["watch", runs, "--all", "--interval", "50", "--json"], (ls) => ls.some((l) => l.event === "alert"));
    expect(watch.lines[0]).toMatchObject({ event: "watching", root: runs });
    expect(watch.lines.find((l) => l.event === "alert")).toMatchObject({ run: expect.any(String), severity: expect.any(String), title: expect.any(String) });
    const serve = await jsonLines(["serve", path.join(tmp, "collected"), "--port", "0", "--json"], (ls) => ls.length > 0);
    expect(serve.lines[0]).toMatchObject({ event: "listening", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), token: expect.any(String) });
    expect(serve.lines.at(-1)).toMatchObject({ event: "closed" });
    const gw = await jsonLines(["gateway", "--upstream", "http://127.0.0.1:9", "--out", path.join(tmp, "gw"), "--port", "0", "--json"], (ls) => ls.length > 0);
    expect(gw.lines[0]).toMatchObject({ event: "listening", openai_base_url: expect.stringMatching(/\/v1$/) });
    expect(gw.lines.at(-1)).toMatchObject({ event: "closed", runs: [] });
  }, 240_000);

  it("graph --json marks decisions and actions downstream of untrusted content as untrusted", () => {
    const g = JSON.parse(cli(["graph", FIX, "--json"]).out) as { nodes: { type: string; label: string; trust: string; tainted: boolean }[] };
    const byLabel = (type: string, label: string) => g.nodes.find((n) => n.type === type && n.label === label)!;
    expect(byLabel("decision", "summarize")).toMatchObject({ trust: "untrusted", tainted: true });
    expect(byLabel("action", "export_customers")).toMatchObject({ trust: "untrusted", tainted: true });
    // the researcher's lookup happened before any untrusted input was read
    expect(byLabel("action", "lookup_order")).toMatchObject({ trust: "trusted", tainted: false });
    expect(byLabel("input", "kb:refund_policy.md")).toMatchObject({ trust: "trusted", tainted: false });
  });

  describe("test-endpoint against a local server without auth", () => {
    let llm: FakeLlm;
    let dir: string;
    beforeAll(async () => {
      llm = await startFakeLlm({ noAuth: true });
      const client = new OpenAI({ baseURL: llm.openaiBaseURL, apiKey: "unused", maxRetries: 0 });
      dir = (await runOpenAIAgent({ client, out: path.join(tmp, "oa") })).dir;
    });
    afterAll(() => llm.close());

    it("needs no API key variable, takes the base URL with or without /v1, and names the untrusted source once in alerts", async () => {
      const m = new RunModel(readRun(dir));
      const decision = m.decisions.find((d) => d.context.some((c) => c.source === "tool:fetch_page"))!;
      const env = { ...process.env };
      delete env.OPENAI_API_KEY;
      delete env.OPENAI_BASE_URL;
      for (const base of [llm.url, llm.openaiBaseURL]) {
        const before = llm.requests.length;
        const r = await cliAsync(
          [
            "test-endpoint",
            dir,
            "--decision",
            String(decision.seq),
            "--remove",
            "input:tool:fetch_page",
            "--target",
            "tool=send_email",
            "--n",
            "5",
            "--method",
            "newcombe",
            "--base-url",
            base,
            "--json",
          ],
          env,
        );
        expect(r.code, r.err).toBe(0);
        expect(JSON.parse(r.out)).toMatchObject({ scope: "decision", n: 5 });
        const sent = llm.requests.slice(before);
        expect(sent.length).toBe(10);
        expect(sent.every((q) => q.path === "/v1/chat/completions" && q.headers.authorization === undefined)).toBe(true);
      }
      const alerts = JSON.parse(cli(["alerts", dir, "--json"]).out) as { severity: string; detail: string }[];
      const high = alerts.find((a) => a.severity === "high")!;
      expect(high.detail).toMatch(/appears only in tool:fetch_page\.$/);
    });
  });
});
