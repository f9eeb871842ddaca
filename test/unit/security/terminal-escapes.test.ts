/**
 * Text output shows run content as text: a run whose agent names, task, tool names, sources and
 * arguments carry terminal escapes (`ESC]0;pwned BEL` retitles the window, `ESC[2J` clears the
 * screen, `\r` + `ESC[2K` overwrites a line with a fake verdict) and bidi overrides (U+202E) is
 * printed by every CLI command that shows run content with each control escaped visibly (`\x1b`,
 * `\u202e`): no ESC, BEL, CR, backspace or bidi control reaches the terminal, and a newline in run
 * content cannot start a line of its own. The real CLI (dist/cli.js) on a real recorded run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { System } from "../../../core/sdk/system";
import { appendTest } from "../../../core/log/testslog";
import { RAW_TERMINAL, recordHostileText } from "./hostile-text";

const CLI = path.resolve("dist/cli.js");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-term-"));
let root: string;
let run: string;

beforeAll(async () => {
  root = path.join(tmp, "runs");
  run = await recordHostileText(System, root);
  // a recorded test and attribution naming hostile specs (what `case` prints)
  appendTest(run, {
    run_id: "hostile-text",
    intervention: "input:web:\x1b]0;pwned\x07notes",
    target: "tool=send_email\x1b[2J\u202e",
    attribution: "a1",
    verdict: "causal",
    effect: 0.9,
    ci: [0.7, 1],
    n: 10,
    p_with: 1,
    p_without: 0.1,
    scope: "run",
    method: "betting",
  });
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]): { status: number | null; text: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: tmp });
  return { status: r.status, text: r.stdout + r.stderr };
}

/** The raw controls found in `text` (a newline is the CLI's own). */
const rawIn = (text: string) => RAW_TERMINAL.filter((c) => text.includes(c)).map((c) => JSON.stringify(c));

describe("text output of a run carrying terminal escapes and bidi overrides", () => {
  // every command that prints run content as text
  const COMMANDS: [string, () => string[]][] = [
    ["alerts", () => ["alerts", run]],
    ["taint", () => ["taint", run]],
    ["graph", () => ["graph", run]],
    ["verify", () => ["verify", run]],
    ["index", () => ["index", root]],
    ["case", () => ["case", run, "--target", "tool=send_email\x1b[2J\u202e"]],
  ];
  for (const [name, args] of COMMANDS) {
    it(`${name} prints no raw control character`, () => {
      const r = cli(...args());
      expect(r.status, r.text).toBe(0);
      if (name !== "verify") expect(r.text).toMatch(/\\x1b|\\u202e/); // the run's content is there, escaped (verify names none of it)
      expect(rawIn(r.text), r.text).toEqual([]);
    });
  }

  it("alerts shows the hostile names escaped, not dropped, and no line of its own from run content", () => {
    const r = cli("alerts", run);
    expect(r.status).toBe(0);
    expect(r.text).toContain("\\x1b[2J\\u202e"); // the sensitive tool's name, escaped
    expect(r.text).toMatch(/HIGH/);
    // the fake verdict is part of an escaped value, never at a line's start
    for (const line of r.text.split("\n")) expect(line.startsWith("[PASS]"), line).toBe(false);
  });

  it("taint and graph show agent and tool names and arguments escaped", () => {
    const t = cli("taint", run).text;
    expect(t).toContain("reader\\x1b]0;pwned\\x07");
    expect(t).toContain("send_email\\x1b[2J\\u202e");
    expect(t).toContain("sender\\u202egpj.exe");
    const g = cli("graph", run).text;
    expect(g).toContain("reader\\x1b]0;pwned\\x07");
  });

  it("an error naming run content is escaped on stderr too", () => {
    // a target that names the hostile tool and did not happen: the refusal quotes it
    const r = cli("attribute", run, "--target", "tool:nope\x1b]0;x\x07", "--system", "causeway:demo");
    expect(r.status).toBe(2);
    expect(rawIn(r.text), r.text).toEqual([]);
  });

  it("watch prints a new alert with its controls escaped", async () => {
    const child = spawn(process.execPath, [CLI, "watch", root, "--all", "--interval", "50"], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (d) => (text += d));
    child.stderr.on("data", (d) => (text += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const check = () => (/HIGH/.test(text) ? resolve() : undefined);
        child.stdout.on("data", check);
        child.once("exit", (c) => reject(new Error(`watch exited ${c}: ${text}`)));
      });
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("close", r));
    }
    expect(text).toContain("hostile-text");
    expect(text).toContain("\\x1b[2J\\u202e");
    expect(rawIn(text), text).toEqual([]);
  });

  it("record and replay print a hostile program's names escaped", () => {
    const prog = path.join(tmp, "hostile-prog.cjs");
    fs.writeFileSync(
      prog,
      `const { System } = require(${JSON.stringify(path.resolve("dist/lib/index.js"))});\nmodule.exports.SYSTEM = require(${JSON.stringify(path.resolve(__dirname, "hostile-text.cjs"))}).hostileTextSystem(System);\n`,
    );
    const rec = cli("record", `${prog}:SYSTEM`, "--out", path.join(tmp, "recorded"), "--guard", "alert");
    expect(rec.text).toContain("send_email\\x1b[2J\\u202e");
    expect(rawIn(rec.text), rec.text).toEqual([]);
    const rep = cli("replay", run, "--system", `${prog}:SYSTEM`);
    expect(rep.status, rep.text).toBe(0);
    expect(rep.text).toContain("send_email\\x1b[2J\\u202e");
    expect(rawIn(rep.text), rep.text).toEqual([]);
  });
});
