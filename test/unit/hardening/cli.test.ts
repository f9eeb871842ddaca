/**
 * Issue 11 through the built CLI (dist/cli.js), as users and the checkers run it: files that are
 * not files never hang, a forged or missing blob is an alert, a log cut short fails verify, a
 * program named after a prototype member is not allowed, one bad run does not fail the report,
 * and a closed stdout ends a command quietly with its own exit code.
 */
import { describe, it, expect, afterAll, vi } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { argsBlob, copyRun, deepLine, events, indexOf, nested, putBlobText, readLines, reseal, writeLines } from "./hostile";

const CLI = path.resolve(__dirname, "../../../dist/cli.js");
// dozens of CLI processes: on a loaded machine each may wait seconds for a CPU. The limits below
// only catch a hang; nothing here is timed.
vi.setConfig({ testTimeout: 1_200_000 });
const made: string[] = [];
const fresh = (parent?: string) => {
  const d = copyRun(undefined, parent);
  made.push(d);
  return d;
};
afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs the CLI; a hang shows as a kill by the (generous) guard, reported as such. */
function cli(args: string[], opts: { env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 300_000, maxBuffer: 64 << 20, env: { ...process.env, ...opts.env } });
  if (r.signal) throw new Error(`causeway ${args.join(" ")} did not finish (killed by ${r.signal})`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function jsonOf(stdout: string): unknown {
  return JSON.parse(stdout);
}

const mkfifo = (p: string) => {
  const r = spawnSync("mkfifo", [p]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${String(r.stderr)}`);
};

describe("files that are not regular files never hang", () => {
  it("an unreferenced blob that is a symlink to /dev/zero: verify reports it (exit 1), alerts and report finish", () => {
    const dir = fresh();
    fs.symlinkSync("/dev/zero", path.join(dir, "blobs", "a".repeat(64) + ".json"));
    const v = cli(["verify", dir, "--json"]);
    expect(v.code).toBe(1);
    const probs = (jsonOf(v.stdout) as { problems: { code: string; message: string }[] }).problems;
    expect(probs.some((p) => p.code === "io" && /symlink out of the run folder/.test(p.message))).toBe(true);
    expect(cli(["alerts", dir, "--json"]).code).toBe(0);
    const out = path.join(dir, "..", path.basename(dir) + "-report.html");
    made.push(out);
    expect(cli(["report", dir, "-o", out]).code).toBe(0);
  });
  it("events.jsonl a symlink to /dev/zero, a FIFO, a directory", () => {
    for (const make of [(f: string) => fs.symlinkSync("/dev/zero", f), (f: string) => mkfifo(f), (f: string) => fs.mkdirSync(f)]) {
      const dir = fresh();
      fs.rmSync(path.join(dir, "events.jsonl"));
      make(path.join(dir, "events.jsonl"));
      const v = cli(["verify", dir, "--json"]);
      expect(v.code).toBe(1);
      expect((jsonOf(v.stdout) as { problems: { code: string }[] }).problems[0].code).toBe("io");
      const a = cli(["alerts", dir, "--json"]);
      expect(a.code).toBe(0);
      expect((jsonOf(a.stdout) as { rule: string }[])[0].rule).toBe("integrity");
    }
  });
  it("a referenced blob that is a FIFO; tests.jsonl a FIFO and a symlink to /dev/zero", () => {
    const d1 = fresh();
    const b = argsBlob(d1);
    fs.rmSync(b.file);
    mkfifo(b.file);
    const v1 = cli(["verify", d1, "--json"]);
    expect(v1.code).toBe(1);
    expect((jsonOf(v1.stdout) as { problems: { code: string; line?: number }[] }).problems).toContainEqual(
      expect.objectContaining({ code: "io", line: b.line }),
    );
    for (const make of [(f: string) => mkfifo(f), (f: string) => fs.symlinkSync("/dev/zero", f)]) {
      const d = fresh();
      fs.rmSync(path.join(d, "tests.jsonl"));
      make(path.join(d, "tests.jsonl"));
      const v = cli(["verify", d, "--json"]);
      expect(v.code).toBe(1);
      expect((jsonOf(v.stdout) as { problems: { code: string; file?: string }[] }).problems).toContainEqual(
        expect.objectContaining({ code: "io", file: "tests.jsonl" }),
      );
      expect(cli(["alerts", d, "--json"]).code).toBe(0);
    }
  });
  it("size limits hold and are configurable: tests.jsonl over CAUSEWAY_MAX_TESTS_MB is refused, not read", () => {
    const dir = fresh();
    fs.appendFileSync(path.join(dir, "tests.jsonl"), "x".repeat(2 << 20) + "\n");
    const v = cli(["verify", dir, "--json"], { env: { CAUSEWAY_MAX_TESTS_MB: "1" } });
    expect(v.code).toBe(1);
    const p = (jsonOf(v.stdout) as { problems: { code: string; message: string }[] }).problems.find((x) => x.code === "io");
    expect(p?.message).toMatch(/over the 1 MB limit/);
  });
});

describe("misleading results", () => {
  it("a forged blob and a missing blob: verify fails and alerts carries the integrity alert", () => {
    const forged = fresh();
    const b = argsBlob(forged);
    fs.writeFileSync(b.file, fs.readFileSync(b.file, "utf8").replace(/"v": \{/, '"v": {"bcc": "x@evil.example", '));
    const missing = fresh();
    fs.rmSync(argsBlob(missing).file);
    for (const [dir, code] of [
      [forged, "blob-hash"],
      [missing, "missing-blob"],
    ] as const) {
      const v = cli(["verify", dir, "--json"]);
      expect(v.code).toBe(1);
      expect((jsonOf(v.stdout) as { problems: { code: string }[] }).problems.map((p) => p.code)).toContain(code);
      const a = jsonOf(cli(["alerts", dir, "--json"]).stdout) as { severity: string; rule: string; title: string; detail: string; seq: null }[];
      expect(a[0]).toMatchObject({ severity: "high", rule: "integrity", title: "Log failed integrity check", seq: null });
      expect(a[0].detail).toMatch(code === "missing-blob" ? /is missing/ : /does not hash to its name/);
    }
  });
  it("trailing lines with run.end cut away: verify exits 1; a run being written stays running (exit 0)", () => {
    // the fixture has tests: a run with replay tests had finished
    const withTests = fresh();
    writeLines(withTests, readLines(withTests).slice(0, -3));
    const v = cli(["verify", withTests, "--json"]);
    expect(v.code).toBe(1);
    expect((jsonOf(v.stdout) as { problems: { code: string }[] }).problems.map((p) => p.code)).toContain("truncated");
    // without tests: the blobs of the cut events are left, older than the log's last change
    const noTests = fresh();
    fs.rmSync(path.join(noTests, "tests.jsonl"));
    const ls = readLines(noTests);
    const past = new Date(Date.now() - 60_000);
    for (const f of fs.readdirSync(path.join(noTests, "blobs"))) fs.utimesSync(path.join(noTests, "blobs", f), past, past);
    writeLines(noTests, ls.slice(0, -3));
    const v2 = cli(["verify", noTests, "--json"]);
    expect(v2.code).toBe(1);
    expect((jsonOf(v2.stdout) as { problems: { code: string; message: string }[] }).problems.find((p) => p.code === "truncated")?.message).toMatch(
      /named by no event/,
    );
    // a run being written: every blob on disk is named by an event written so far
    const live = fresh();
    fs.rmSync(path.join(live, "tests.jsonl"));
    const all = readLines(live);
    const keep = all.slice(0, -3);
    const named = new Set(keep.join("\n").match(/[0-9a-f]{64}(?=")/g));
    for (const f of fs.readdirSync(path.join(live, "blobs"))) if (!named.has(f.slice(0, 64))) fs.rmSync(path.join(live, "blobs", f));
    writeLines(live, keep);
    const v3 = cli(["verify", live, "--json"]);
    expect(v3.code).toBe(0);
    expect((jsonOf(v3.stdout) as { problems: { code: string }[] }).problems.map((p) => p.code)).toEqual(["no-run-end"]);
    // ... until it has been silent for longer than the stale limit
    const old = new Date(Date.now() - 3 * 3600_000);
    fs.utimesSync(path.join(live, "events.jsonl"), old, old);
    expect(cli(["verify", live, "--json"], { env: { CAUSEWAY_RUNNING_STALE_HOURS: "1" } }).code).toBe(1);
  });
  for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
    it(`a run whose program is named ${name} does not pass the replay allow-list`, () => {
      const dir = fresh();
      const evs = events(dir);
      evs[indexOf(evs, "run.start")].program = name;
      reseal(dir, evs);
      const r = cli(["replay", dir, "--json"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/pass --allow-program/);
    });
  }
});

describe("causeway report ROOT with hostile runs among good ones", () => {
  it("writes the report with every run; the bad ones show their problems", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "cw-report-root-"));
    made.push(root);
    fresh(root); // a good run
    const deep = fresh(root);
    const evs = events(deep);
    const i = indexOf(evs, "action");
    evs[i].args_ref = putBlobText(deep, nested(6000));
    reseal(deep, evs);
    const line = fresh(root);
    const ls = readLines(line);
    const e = events(line);
    ls[5] = deepLine(e[5], "extra", 5000, e[5].prev_hash as string);
    writeLines(line, ls);
    const odd = fresh(root);
    const oe = events(odd).map((x) => ({ ...x, agent: { toString: 1 }, type: x.type === "action" ? "__proto__" : x.type }));
    reseal(odd, oe);
    fs.appendFileSync(path.join(odd, "tests.jsonl"), JSON.stringify({ scope: { toString: 1 }, intervention: nested(10), ci: "x" }) + "\n");
    const dirFile = fresh(root);
    fs.rmSync(path.join(dirFile, "events.jsonl"));
    mkfifo(path.join(dirFile, "events.jsonl"));
    const out = path.join(root, "report.html");
    const r = cli(["report", root, "-o", out]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/5 runs/);
    const idx = cli(["index", root, "--json"]);
    expect(idx.code).toBe(0);
    expect((jsonOf(idx.stdout) as { runs: number }).runs).toBe(5);
  });
});

/** Runs a command with its stdout read end closed before it writes: a real pipe, closed early. */
function closedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy(); // the reader goes away (as `| head -1` does after its line)
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("a closed stdout (EPIPE)", () => {
  // one run that verifies and one whose argument blob is gone, made once for every case
  let good = "";
  let bad = "";
  let report = "";
  const runs = () => {
    if (!good) {
      // a folder of their own: `index` walks its argument (os.tmpdir() may hold anything, a whole
      // clone with its node_modules on CI)
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "cw-epipe-"));
      made.push(root);
      good = fresh(root);
      bad = fresh(root);
      fs.rmSync(argsBlob(bad).file);
      report = path.join(root, "report.html");
    }
    return { good, bad, report };
  };
  const cases: [string, (r: ReturnType<typeof runs>) => string[], number][] = [
    ["verify", (r) => ["verify", r.good], 0],
    ["verify --json", (r) => ["verify", r.good, "--json"], 0],
    ["verify (damaged)", (r) => ["verify", r.bad], 1],
    ["verify --json (damaged)", (r) => ["verify", r.bad, "--json"], 1],
    ["alerts --json", (r) => ["alerts", r.good, "--json"], 0],
    ["alerts (damaged)", (r) => ["alerts", r.bad], 0],
    ["graph --json", (r) => ["graph", r.good, "--json"], 0],
    ["graph", (r) => ["graph", r.good], 0],
    ["taint", (r) => ["taint", r.good], 0],
    ["index --json", (r) => ["index", path.dirname(r.good), "--json"], 0],
    ["report", (r) => ["report", r.good, "-o", r.report], 0],
    ["--help", () => ["--help"], 0],
    ["verify --help", () => ["verify", "--help"], 0],
    ["no command", () => [], 2],
    ["an unknown command", () => ["nope"], 2],
    ["verify without a run", () => ["verify"], 2],
  ];
  // one test per command, run side by side: a hang names its command, and a loaded machine's
  // slowness is not summed over 32 processes under one test's guard
  it.concurrent.each(cases)("%s ends quietly with the exit code it would have had", async (_name, argsOf, want) => {
    const args = argsOf(runs());
    // several tries: whether the write or the close comes first must not matter
    for (let k = 0; k < 2; k++) {
      const r = await closedStdout(args);
      expect({ args, code: r.code, stack: /at .*\(.*:\d+:\d+\)|EPIPE/.test(r.stderr) }).toEqual({ args, code: want, stack: false });
    }
  });
});
