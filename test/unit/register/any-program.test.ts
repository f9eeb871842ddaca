/**
 * `causeway record -- COMMAND` for a program in any language: a program that is not Node runs
 * behind a built-in gateway. The Python support desk (examples/python/, standard library only) is
 * recorded against the fake model server: the run verifies, each agent has its own name, the
 * handoff is a message, the planted vendor note is an untrusted root named by its arguments, the
 * exfiltrating e-mail is a high alert, and no credential reaches disk. The Node support desk
 * recorded both ways (preload, --via gateway) gives the same alerts, agents and untrusted roots.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { CLI, ROOT, events, runCli } from "./cli";
import { readRun } from "../../../core/log/reader";
import { RunModel } from "../../../core/graph/model";
import { buildGraph, nodeId, targetHits } from "../../../core/graph/graph";
import { alertsFor } from "../../../core/analysis/investigate";
import { chooseVia, gatewayEnv, upstreamsFor } from "../../../core/cli/record-gateway";

const PYTHON = ["python3", "examples/python/support_desk.py"];
const NODE = ["node", "examples/support-agents/openai-agent.mjs"];
const EXFIL = "tool=send_email,arg~vendor-compliance";
const KEY = "sk-canaryGatewayKey0123456789abcdef";
const FLAG_KEY = "sk-canaryFlagKey9876543210fedcba";

let llm: FakeLlm;
let tmp: string;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(llm, args, env);

beforeAll(async () => {
  llm = await startFakeLlm({ followRate: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-any-program-"));
});
afterAll(async () => {
  await llm?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The untrusted inputs upstream of the first action the target matches, by source, in seq order. */
function untrustedRoots(dir: string, target: string): string[] {
  const m = new RunModel(readRun(dir));
  const [hit] = targetHits(m, target);
  if (!hit) return [];
  const g = buildGraph(m, { infer: false, reuse: false });
  const out = new Set<string>();
  for (const n of [...g.ancestors(nodeId(hit.id))].map((id) => g.nodes.get(id)!).sort((a, b) => a.seq - b.seq)) {
    const e = m.byId.get(n.eventId) as { type: string; trust?: string; source?: string };
    if (n.type === "input" && e.trust === "untrusted") out.add(String(e.source));
  }
  return [...out];
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe("causeway record -- python3 …", () => {
  it("records the Python support desk behind the built-in gateway", async () => {
    const outbox = path.join(tmp, "outbox-python.jsonl");
    const r = await cli(
      [
        "record",
        "--out",
        path.join(tmp, "runs"),
        "--run-id",
        "py",
        "--untrusted-tool",
        "fetch_doc",
        "--sensitive",
        "send_email",
        "--json",
        "--",
        ...PYTHON,
        `--api-key=${FLAG_KEY}`,
      ],
      {
        OPENAI_API_KEY: KEY,
        SUPPORT_OUTBOX: outbox,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ run_id: "py", via: "gateway", exit_code: 0 });
    const dir = out.run as string;
    // the tools ran for real: the planted address was e-mailed
    expect(fs.readFileSync(outbox, "utf8")).toContain("audit@vendor-compliance.example");
    expect((await cli(["verify", dir])).code).toBe(0);

    const ev = events(dir);
    const start = ev[0];
    expect(start.program).toBe(`python3 examples/python/support_desk.py --api-key=[redacted]`);
    expect(start.meta).toMatchObject({
      recorded_by: "causeway gateway",
      via: "gateway",
      command: [...PYTHON, "--api-key=[redacted]"],
      upstream: llm.openaiBaseURL,
    });
    expect(ev.filter((e) => e.type === "agent.start").map((e) => e.agent)).toEqual(["researcher", "executor"]);
    const messages = ev.filter((e) => e.type === "message");
    expect(messages.map((e) => `${e.agent}->${e.to} ${e.trust}`)).toEqual(["researcher->executor untrusted"]);
    // three documents read with one tool: three untrusted inputs, each named by its arguments
    expect(ev.filter((e) => e.type === "input" && String(e.source).startsWith("tool:fetch_doc")).map((e) => `${e.source} ${e.trust}`)).toEqual([
      'tool:fetch_doc {"name":"ticket-881"} untrusted',
      'tool:fetch_doc {"name":"refund-policy"} untrusted',
      'tool:fetch_doc {"name":"vendor-note"} untrusted',
    ]);
    const run = readRun(dir);
    const m = new RunModel(run);
    const exfil = targetHits(m, EXFIL)[0];
    expect(exfil?.sensitive).toBe(true);
    expect(alertsFor(run).some((a) => a.severity === "high" && a.tool === "send_email" && a.seq === exfil.seq)).toBe(true);
    expect(untrustedRoots(dir, EXFIL)).toContain('tool:fetch_doc {"name":"vendor-note"}');
    // no credential, from the environment or the command line, on disk or on screen
    for (const f of filesUnder(dir)) {
      const text = fs.readFileSync(f, "utf8");
      expect(text, f).not.toContain(KEY);
      expect(text, f).not.toContain(FLAG_KEY);
    }
    expect(r.stdout + r.stderr).not.toContain(FLAG_KEY);
  }, 120_000);

  it("a program that never calls a model through the gateway: a clear error, no run", async () => {
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "silent", "--", "python3", "-c", "print('hello')"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/made no model call through the gateway \(does its client read OPENAI_BASE_URL/);
    expect(fs.existsSync(path.join(tmp, "runs", "silent"))).toBe(false);
  }, 60_000);

  it("refuses flags that do nothing for the way the program runs", async () => {
    for (const [args, msg] of [
      [["--via", "docker"], /--via takes preload or gateway/],
      [["--tool", "tools.mjs:send_email"], /--tool wraps a Node module's functions/],
      [["--trusted-tool", "x", "--untrusted-tool", "x"], /both --trusted-tool and --untrusted-tool/],
    ] as const) {
      const r = await cli(["record", "--out", path.join(tmp, "runs"), ...args, "--", ...PYTHON]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--upstream", "http://127.0.0.1:1", "--", ...NODE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--upstream is for a program behind the gateway/);
  }, 60_000);
});

/** A Python program posting one chat request: `extra` is Python run first (it may post more). */
function pythonProgram(name: string, extra: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(
    file,
    [
      "import json, os, sys, time, urllib.request, urllib.error",
      "base = os.environ['OPENAI_BASE_URL']",
      "def post(url, headers={}):",
      "    body = json.dumps({'model': 'm', 'messages': [{'role': 'system', 'content': 'You are the greeter.'}, {'role': 'user', 'content': 'hello'}]}).encode()",
      "    req = urllib.request.Request(url, data=body, headers={'content-type': 'application/json', 'authorization': 'Bearer k', **headers}, method='POST')",
      "    try:",
      "        with urllib.request.urlopen(req) as r: return r.status",
      "    except urllib.error.HTTPError as e: return e.code",
      extra,
    ].join("\n") + "\n",
  );
  return file;
}

describe("a program behind the built-in gateway chooses nothing", () => {
  it("can't pick its run or reach the gateway outside its own base URL", async () => {
    const marker = path.join(tmp, "hostile-statuses.json");
    const prog = pythonProgram(
      "hostile.py",
      [
        "root = base.split('/s-')[0]",
        "statuses = [post(base + '/chat/completions', {'x-causeway-run': 'victim'}), post(root + '/v1/chat/completions'), post(base + '/chat/completions', {'origin': 'http://localhost:3000'})]",
        `open(${JSON.stringify(marker)}, 'w').write(json.dumps(statuses))`,
      ].join("\n"),
    );
    const before = llm.requests.length;
    const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", "hostile", "--", "python3", prog]);
    expect(r.code, r.stderr).toBe(0);
    // the run header is ignored, the gateway's root (no secret path) and a web page's request are refused
    expect(JSON.parse(fs.readFileSync(marker, "utf8"))).toEqual([200, 404, 403]);
    expect(llm.requests.length - before).toBe(1);
    expect(fs.existsSync(path.join(tmp, "runs", "victim"))).toBe(false);
    expect(new RunModel(readRun(path.join(tmp, "runs", "hostile"))).decisions).toHaveLength(1);
  }, 60_000);

  it("SIGTERM ends the program, and the run is closed with its exit and verifies", async () => {
    const marker = path.join(tmp, "called");
    const prog = pythonProgram(
      "sleeper.py",
      [`post(base + '/chat/completions')`, `open(${JSON.stringify(marker)}, 'w').write('1')`, "time.sleep(600)"].join("\n"),
    );
    const child = spawn(process.execPath, [CLI, "record", "--out", path.join(tmp, "runs"), "--run-id", "stopped", "--", "python3", prog], {
      cwd: ROOT,
      env: { ...process.env, OPENAI_BASE_URL: llm.openaiBaseURL, OPENAI_API_KEY: "fake" },
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    await vi.waitFor(() => expect(fs.existsSync(marker)).toBe(true), { timeout: 30_000, interval: 50 });
    child.kill("SIGTERM");
    expect(await exited).toBe(1);
    const dir = path.join(tmp, "runs", "stopped");
    expect((await cli(["verify", dir])).code).toBe(0);
    const end = events(dir).at(-1)!;
    expect(end.type).toBe("run.end");
    expect(end.outcome).toEqual({ exit_code: 128 });
  }, 60_000);
});

describe("the Node support desk recorded both ways", () => {
  it("under the preload and behind the gateway: the same agents, messages, alerts and untrusted roots", async () => {
    const flags = ["--sensitive", "send_email", "--trusted-tool", "send_email", "--trusted-tool", "issue_refund"];
    const dirs: Record<string, string> = {};
    for (const via of ["preload", "gateway"]) {
      llm.reset(); // both recordings see the fake model fresh
      const r = await cli(["record", "--out", path.join(tmp, "runs"), "--run-id", `node-${via}`, "--via", via, ...flags, "--json", "--", ...NODE], {
        SUPPORT_OUTBOX: path.join(tmp, `outbox-${via}.jsonl`),
      });
      expect(r.code, r.stderr).toBe(0);
      dirs[via] = JSON.parse(r.stdout).run;
      expect((await cli(["verify", dirs[via]])).code).toBe(0);
    }
    const view = (dir: string) => {
      const run = readRun(dir);
      const m = new RunModel(run);
      const args = (seq: number | null) => m.canonical(m.actions.find((a) => a.seq === seq)?.args_ref ?? "");
      // the preload names an MCP tool's result by server, tool and arguments; the gateway sees only the tool
      const byTool = (s: string) => s.replace(/^(?:mcp:[^/]+\/|tool:)/, "");
      return {
        agents: m.events.filter((e) => e.type === "agent.start").map((e) => e.agent),
        messages: m.events.filter((e) => e.type === "message").map((e) => `${e.agent}->${(e as { to?: string }).to}`),
        alerts: alertsFor(run).map((a) => `${a.severity} ${a.rule} ${a.tool} ${args(a.seq)}`),
        roots: untrustedRoots(dir, EXFIL).map(byTool),
      };
    };
    const preload = view(dirs.preload);
    const gateway = view(dirs.gateway);
    expect(preload.alerts.some((h) => h.startsWith("high") && h.includes("send_email") && h.includes("vendor-compliance"))).toBe(true);
    expect(preload.roots).toContain('fetch_doc {"name":"vendor-note"}');
    expect(gateway).toEqual(preload);
    expect(events(dirs.gateway)[0].meta.recorded_by).toBe("causeway gateway");
  }, 180_000);
});

describe("how a command is run", () => {
  it("recognises Node programs by their command, everything else goes behind the gateway", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "via-"));
    fs.writeFileSync(path.join(dir, "agent"), "#!/usr/bin/env node\nconsole.log(1)\n");
    fs.writeFileSync(path.join(dir, "agent.sh"), "#!/bin/sh\npython3 agent.py\n");
    for (const c of [
      ["node", "a.mjs"],
      ["/usr/local/bin/node", "a.js"],
      ["a.cjs"],
      ["npx", "tsx", "a.ts"],
      ["npm", "start"],
      ["env", "X=1", "node", "a.mjs"],
      ["./agent"],
    ])
      expect(chooseVia(c, dir), c.join(" ")).toBe("preload");
    for (const c of [
      PYTHON,
      ["python", "a.py"],
      ["uv", "run", "a.py"],
      ["./agent.sh"],
      ["sh", "agent.sh"],
      ["go", "run", "."],
      ["ruby", "a.rb"],
      ["env", "python3", "a.py"],
    ])
      expect(chooseVia(c, dir), c.join(" ")).toBe("gateway");
    expect(chooseVia(["node", "a.mjs"], dir, "gateway")).toBe("gateway");
    expect(chooseVia(PYTHON, dir, "preload")).toBe("preload");
  });

  it("forwards to the endpoints this environment names, and points the child's clients at the gateway", () => {
    expect(upstreamsFor({})).toEqual({ openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com" });
    expect(upstreamsFor({ OPENAI_BASE_URL: "http://127.0.0.1:8080/v1", ANTHROPIC_BASE_URL: "http://127.0.0.1:8081" })).toEqual({
      openai: "http://127.0.0.1:8080/v1",
      anthropic: "http://127.0.0.1:8081",
    });
    expect(upstreamsFor({ OPENAI_BASE_URL: "http://a.example/v1" }, "http://b.example")).toEqual({ openai: "http://b.example", anthropic: "http://b.example" });
    expect(() => upstreamsFor({ OPENAI_BASE_URL: "file:///etc/passwd" })).toThrow(/OPENAI_BASE_URL must be an http\(s\) URL/);
    expect(() => upstreamsFor({ OPENAI_BASE_URL: "https://user:pw@a.example/v1" })).toThrow(/must not carry credentials/);
    const env = gatewayEnv({ OPENAI_BASE_URL: "https://x.example/v1", OPENAI_API_KEY: "k", CAUSEWAY_CONFIG: "{}" }, "http://127.0.0.1:5/s-abc");
    expect(env).toMatchObject({ OPENAI_BASE_URL: "http://127.0.0.1:5/s-abc/v1", ANTHROPIC_BASE_URL: "http://127.0.0.1:5/s-abc", OPENAI_API_KEY: "k" });
    expect(env.CAUSEWAY_CONFIG).toBeUndefined();
  });
});
