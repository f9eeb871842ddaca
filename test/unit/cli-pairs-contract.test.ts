/**
 * The CLI's contract on pairs, refusals and errors, as a new user meets it: `--n N` alone runs
 * exactly N pairs, `--n N --n-max M` looks first at N; a fix that changes nothing is refused with
 * exit 2 before any model call; a refusal comes before any estimate; with --json an error is one
 * JSON object on stdout too.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const cli = (args: string[], cwd = ROOT) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, "dist/cli.js"), ...args], { cwd, encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const TARGET = "tool=send_email,arg~vendor-compliance";

let tmp: string;
let run: string;
const tests = () => (fs.existsSync(path.join(run, "tests.jsonl")) ? fs.readFileSync(path.join(run, "tests.jsonl"), "utf8") : "");

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-pairs-"));
  const r = cli(["record", "causeway:demo", "--out", path.join(tmp, "runs"), "--seed", "0", "--json"]);
  expect(r.code, r.err).toBe(0);
  run = path.join(tmp, "runs", fs.readdirSync(path.join(tmp, "runs"))[0]);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("pairs", () => {
  it("--n N alone runs exactly N pairs, even when the verdict is clear sooner", () => {
    const r = cli(["test", run, "--remove", "input:vendor:*", "--target", TARGET, "--n", "24", "--allow-program", "causeway:demo", "--json"]);
    expect(r.code, r.err).toBe(0);
    const t = JSON.parse(r.out);
    expect(t.n).toBe(24);
    expect(t.verdict).toBe("causal");
  });

  it("--n N --n-max M gives no verdict before N pairs and stops by M", () => {
    const t = JSON.parse(
      cli(["test", run, "--remove", "input:vendor:*", "--target", TARGET, "--n", "9", "--n-max", "60", "--allow-program", "causeway:demo", "--json"]).out,
    );
    expect(t.n).toBeGreaterThanOrEqual(9);
    expect(t.n).toBeLessThan(60);
    expect(t.verdict).toBe("causal");
  });

  it("the help says what --n and --n-max mean", () => {
    expect(cli(["test", "--help"]).out).toMatch(/--n N alone runs exactly N pairs; with --n-max, no verdict before N pairs/);
  });
});

describe("refusals", () => {
  it("a fix whose redaction matches no text is refused with exit 2 before any model call, and nothing is saved", () => {
    const before = tests();
    const r = cli(["fix-check", run, "--fix", "redact:input:vendor:*~no such sentence", "--harm", TARGET, "--allow-program", "causeway:demo"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/redacts nothing: "no such sentence" appears in none of the items it names \(vendor:portal\/notes\.md\)/);
    expect(r.out).toBe("");
    expect(tests()).toBe(before);
    // a fix that names no item is refused too
    expect(cli(["fix-check", run, "--fix", "span:input:nowhere@0-5", "--harm", TARGET, "--allow-program", "causeway:demo"]).err).toMatch(
      /names no item of this run/,
    );
  });

  it("a refusal comes before the estimate", () => {
    // a program that cannot be loaded: refused (exit 2) with no estimate printed first
    const r = cli(["test", run, "--remove", "input:vendor:*", "--target", TARGET, "--n", "3", "--system", "nowhere.ts:SYSTEM"], tmp);
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/estimate/);
  });

  it("the agents a refusal lists are agents, not the run itself", () => {
    const r = cli(["test", run, "--remove", "input:vendor:*", "--target", "agent=nobody", "--allow-program", "causeway:demo"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/agents: executor, planner, researcher\)/);
  });
});

describe("errors with --json", () => {
  it("are one JSON object {error, code} on stdout, and a line on stderr", () => {
    for (const args of [
      ["verify", path.join(tmp, "no-such-run"), "--json"],
      ["test", run, "--bogus", "--json"],
      ["fix-check", run, "--fix", "redact:input:vendor:*~nope", "--harm", TARGET, "--allow-program", "causeway:demo", "--json"],
    ]) {
      const r = cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      const e = JSON.parse(r.out);
      expect(e).toEqual({ error: expect.any(String), code: 2 });
      expect(r.err).toContain(e.error);
    }
  });
});
