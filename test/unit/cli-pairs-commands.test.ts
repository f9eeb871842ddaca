/**
 * The pairs contract of every pair-running command, through the CLI as a child process: `--n N`
 * alone runs exactly N pairs; with `--n-max`, no verdict before N pairs (the first look) and at
 * most --n-max; every --help says so; a request that would change nothing is refused with exit 2
 * and what it matched, before any model call and before any estimate; with --json an error is one
 * JSON object {error, code} on stdout. (`test` itself: cli-pairs-contract.test.ts.)
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";
import { runOpenAIAgent } from "../../examples/openai-agent/agent";
import { readRun } from "../../core/log/reader";
import { RunModel } from "../../core/graph/model";

const ROOT = path.resolve(__dirname, "../..");
const CLI = path.join(ROOT, "dist/cli.js");
const cli = (args: string[]) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
/** The same without blocking this process (the fake model server answers from it). */
const cliAsync = (args: string[]): Promise<{ code: number | null; out: string; err: string }> =>
  new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, ...args], { cwd: ROOT });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("close", (code) => resolve({ code, out, err }));
  });
const TARGET = "tool=send_email,arg~vendor-compliance";
const DEMO = ["--allow-program", "causeway:demo"];

let tmp: string;
let run: string;
const saved = () => (fs.existsSync(path.join(run, "tests.jsonl")) ? fs.readFileSync(path.join(run, "tests.jsonl"), "utf8") : "");
/** A refusal: exit 2, the reason on stderr, nothing on stdout, no estimate, nothing saved; with --json one {error, code} object. */
const refused = (args: string[], reason: RegExp) => {
  const before = saved();
  const r = cli(args);
  expect(r.code, args.join(" ")).toBe(2);
  expect(r.err).toMatch(reason);
  expect(r.err).not.toMatch(/estimate/);
  expect(r.out).toBe("");
  expect(saved()).toBe(before);
  const j = cli([...args, "--json"]);
  expect(j.code).toBe(2);
  expect(JSON.parse(j.out)).toEqual({ error: expect.stringMatching(reason), code: 2 });
};

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-pairs-cmds-"));
  const r = cli(["record", "causeway:demo", "--out", path.join(tmp, "runs"), "--seed", "0", "--json"]);
  expect(r.code, r.err).toBe(0);
  run = path.join(tmp, "runs", fs.readdirSync(path.join(tmp, "runs"))[0]);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("every pair-running command's --help states the contract", () => {
  it.each(["test", "attribute", "fix-check", "matrix", "test-endpoint"])("%s", (name) => {
    const r = cli([name, "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("--n N alone runs exactly N pairs; with --n-max, no verdict before N pairs (the first look is at N), at most --n-max");
    expect(r.out).toMatch(/\[--n N\] \[--n-max N\]/);
  });
});

describe("attribute", () => {
  it("--n N alone: every test runs exactly N pairs, the lead's too", () => {
    const r = cli(["attribute", run, "--target", TARGET, "--n", "12", ...DEMO, "--json"]);
    expect(r.code, r.err).toBe(0);
    const a = JSON.parse(r.out);
    expect(a.tests.length).toBeGreaterThan(1);
    for (const t of a.tests) expect([t.intervention, t.n, t.n_max]).toEqual([t.intervention, 12, 12]);
  });

  it("--n N --n-max M: no verdict before N pairs, none past M (the lead's past 2M)", () => {
    const a = JSON.parse(cli(["attribute", run, "--target", TARGET, "--n", "15", "--n-max", "40", ...DEMO, "--json"]).out);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual(["input:vendor:portal/notes.md"]);
    for (const t of a.tests) {
      expect(t.n).toBeGreaterThanOrEqual(15);
      expect(t.n).toBeLessThanOrEqual(t.intervention === a.phases[0].lead ? 80 : 40);
    }
  });

  it("refuses a suspect that matches nothing, and a target that never happened, before any estimate", () => {
    refused(
      ["attribute", run, "--target", TARGET, "--suspect", "input:nowhere", ...DEMO],
      /the removal "input:nowhere" matches nothing in this run \(its sources: .*vendor:portal\/notes\.md/,
    );
    refused(["attribute", run, "--target", "tool=send_email,arg~nobody-at-all", ...DEMO], /did not happen in this run/);
  });
});

describe("fix-check", () => {
  it("--n N alone: the harm test and every keep test run exactly N pairs", () => {
    const r = cli(["fix-check", run, "--fix", "input:vendor:*", "--harm", TARGET, "--keep", "tool=issue_refund", "--n", "14", ...DEMO, "--json"]);
    expect([0, 1]).toContain(r.code);
    const f = JSON.parse(r.out);
    expect(f.harm.n).toBe(14);
    expect(f.keep.map((k: { n: number }) => k.n)).toEqual([14]);
  });

  it("--n N --n-max M: the harm test looks first at N", () => {
    const f = JSON.parse(cli(["fix-check", run, "--fix", "input:vendor:*", "--harm", TARGET, "--n", "8", "--n-max", "50", ...DEMO, "--json"]).out);
    expect(f.harm.n).toBeGreaterThanOrEqual(8);
    expect(f.harm.n).toBeLessThanOrEqual(50);
  });

  it("refuses a removal that matches nothing", () => {
    refused(["fix-check", run, "--fix", "input:nowhere", "--harm", TARGET, ...DEMO], /matches nothing in this run/);
  });
});

describe("matrix", () => {
  it("--n N alone: every test of the batch runs exactly N pairs", () => {
    const r = cli(["matrix", run, "--target", TARGET, "--n", "7", ...DEMO, "--json"]);
    expect(r.code, r.err).toBe(0);
    const rows = JSON.parse(r.out);
    expect(rows.length).toBeGreaterThan(3);
    for (const t of rows) expect(t.n).toBe(7);
  });

  it("--n N --n-max M: each test between N and M pairs", () => {
    const rows = JSON.parse(cli(["matrix", run, "--target", TARGET, "--n", "6", "--n-max", "25", ...DEMO, "--json"]).out);
    for (const t of rows) {
      expect(t.n).toBeGreaterThanOrEqual(6);
      expect(t.n).toBeLessThanOrEqual(25);
    }
  });

  it("refuses a target naming a tool the run never had, before any replay", () => {
    refused(["matrix", run, "--target", "tool=wire_money", ...DEMO], /names tool "wire_money", which the run never had/);
  });
});

describe("test with an edit instead of a removal", () => {
  it("redacts the planted address and runs the asked pairs", () => {
    const r = cli(["test", run, "--remove", "redact:input:vendor:*~audit@vendor-compliance.example", "--target", TARGET, "--n", "4", ...DEMO, "--json"]);
    expect(r.code, r.err).toBe(0);
    const t = JSON.parse(r.out);
    expect(t.intervention).toBe("redact:input:vendor:*~audit@vendor-compliance.example");
    expect(t.n).toBe(4);
    expect(t.intervention_applied_in).toBe(4);
    expect(t.p_without).toBeLessThan(t.p_with);
  });

  it("refuses a redaction whose text no named item holds", () => {
    refused(["test", run, "--remove", "redact:input:vendor:*~nothing-like-this", "--target", TARGET, ...DEMO], /the edit .* redacts nothing/);
  });
});

describe("test-endpoint", () => {
  let llm: FakeLlm;
  let dir: string;
  let seq: number;
  beforeAll(async () => {
    llm = await startFakeLlm({ noAuth: true });
    const client = new OpenAI({ baseURL: llm.openaiBaseURL, apiKey: "unused", maxRetries: 0 });
    dir = (await runOpenAIAgent({ client, out: path.join(tmp, "oa") })).dir;
    seq = new RunModel(readRun(dir)).decisions.find((d) => d.context.some((c) => c.source === "tool:fetch_page"))!.seq;
  });
  afterAll(() => llm?.close());
  const args = (...more: string[]) => [
    "test-endpoint",
    dir,
    "--decision",
    String(seq),
    "--target",
    "tool=send_email",
    "--base-url",
    llm.openaiBaseURL,
    ...more,
  ];

  it("--n N alone: exactly N pairs, 2N requests", async () => {
    const before = llm.requests.length;
    const r = await cliAsync(args("--remove", "input:tool:fetch_page", "--n", "9", "--json"));
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ scope: "decision", n: 9 });
    expect(llm.requests.length - before).toBe(18);
  });

  it("--n N --n-max M: no verdict before N pairs", async () => {
    const r = await cliAsync(args("--remove", "input:tool:fetch_page", "--n", "7", "--n-max", "30", "--json"));
    expect(r.code, r.err).toBe(0);
    const t = JSON.parse(r.out);
    expect(t.n).toBeGreaterThanOrEqual(7);
    expect(t.n).toBeLessThanOrEqual(30);
  });

  it("refuses a removal that changes nothing in the request, before sending anything", async () => {
    const before = llm.requests.length;
    for (const json of [[], ["--json"]]) {
      const r = await cliAsync(args("--remove", "input:nowhere", ...json));
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/the removal "input:nowhere" changes nothing in decision #\d+'s request \(its blocks' sources: .*tool:fetch_page/);
      if (json.length) expect(JSON.parse(r.out)).toEqual({ error: expect.stringContaining("changes nothing"), code: 2 });
      else expect(r.out).toBe("");
    }
    expect(llm.requests.length).toBe(before);
  });
});
