/**
 * A secret passed as a command-line flag never lands in `run.start.program`, `meta.command`, any
 * file of the run, the report or the printed hint (issue 27, item 3, argv): it is redacted,
 * visibly (`--api-key=[redacted]`, `--token [redacted]`).
 */
import { afterAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { formatCommand, parseCommand, redactArgv, singleQuote } from "../../../core/log/argv";
import { cli, made, tmp } from "./crafted";

afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

const FLAG_KEY = "sk-canaryFLAGKEY0123456789abcdef";
const SPLIT_TOKEN = "canary-split-token-7f3a9";
const ENV_SECRET = "canary-env-secret-4b1d8e";
const QUERY_KEY = "canaryquerykey55";

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe("causeway record -- COMMAND with secrets on its command line", () => {
  it("records and prints the command with the secrets redacted, visibly", () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, "agent.mjs"), "console.log(process.argv.length);\n");
    const argv = [
      "node",
      "agent.mjs",
      `--api-key=${FLAG_KEY}`,
      "--token",
      SPLIT_TOKEN,
      "--header",
      `X-Auth: ${ENV_SECRET}`,
      `--url=https://h.example/v1?key=${QUERY_KEY}&q=1`,
      "--name",
      "plain",
    ];
    const r = cli(["record", "--out", "runs", "--run-id", "argv", "--", ...argv], dir, { MY_SERVICE_TOKEN: ENV_SECRET });
    expect(r.code, r.err).toBe(0);
    const run = path.join(dir, "runs", "argv");
    const start = JSON.parse(fs.readFileSync(path.join(run, "events.jsonl"), "utf8").split("\n")[0]);
    const expected = [
      "node",
      "agent.mjs",
      "--api-key=[redacted]",
      "--token",
      "[redacted]",
      "--header",
      "X-Auth: [redacted]",
      "--url=https://h.example/v1?key=[redacted]&q=1",
      "--name",
      "plain",
    ];
    expect(start.meta.command).toEqual(expected);
    expect(start.program).toBe(formatCommand(expected));
    expect(start.program).toContain("--api-key=[redacted]");
    expect(start.program).toContain("--token [redacted]");
    // the hint names the recorded (redacted) command, single-quoted
    expect(r.err).toContain(`replay with: --allow-program ${singleQuote(start.program)}`);
    const report = path.join(dir, "report.html");
    expect(cli(["report", path.join(dir, "runs"), "-o", report], dir).code).toBe(0);
    const json = cli(["record", "--out", "runs", "--run-id", "argv-json", "--json", "--", ...argv], dir, { MY_SERVICE_TOKEN: ENV_SECRET });
    expect(JSON.parse(json.out).program).toBe(start.program);
    const printed = [r.out, r.err, json.out, json.err].join("\n");
    for (const canary of [FLAG_KEY, SPLIT_TOKEN, ENV_SECRET, QUERY_KEY]) {
      expect(printed, canary).not.toContain(canary);
      for (const f of [...filesUnder(path.join(dir, "runs")), report]) expect(fs.readFileSync(f, "utf8"), `${canary} in ${f}`).not.toContain(canary);
    }
  });
});

describe("redactArgv and the command line text", () => {
  it("redacts credential flags in both forms, credential assignments and key shapes, and nothing else", () => {
    expect(redactArgv(["node", "a.mjs", "--openai-api-key", "x1", "--password=hunter2", "--max-tokens", "100", "--key", "k", "-t", "5"], {})).toEqual([
      "node",
      "a.mjs",
      "--openai-api-key",
      "[redacted]",
      "--password=[redacted]",
      "--max-tokens",
      "100",
      "--key",
      "[redacted]",
      "-t",
      "5",
    ]);
    expect(redactArgv(["env", "OPENAI_API_KEY=sk-x", "LOG=1", "node", "a.mjs", "https://u:pw@h.example/x", "ghp_abcdefghijklmnopqrstuvwxyz0123"], {})).toEqual([
      "env",
      "OPENAI_API_KEY=[redacted]",
      "LOG=1",
      "node",
      "a.mjs",
      "https://[redacted]@h.example/x",
      "[redacted]",
    ]);
  });

  it("redacts the value of a credential-looking environment variable, not a path held by one (PWD, SSH_AUTH_SOCK)", () => {
    const env = { PWD: "/work/project", SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1", MY_SERVICE_TOKEN: "tok-abcdef12345" };
    expect(redactArgv(["/work/project/bin/node", "a.mjs", "--header=X-T: tok-abcdef12345", "/tmp/ssh-x/agent.1"], env)).toEqual([
      "/work/project/bin/node",
      "a.mjs",
      "--header=X-T: [redacted]",
      "/tmp/ssh-x/agent.1",
    ]);
  });

  it("formatCommand and parseCommand are exact inverses, and expand nothing", () => {
    for (const argv of [
      ["node", "a.mjs"],
      ["node", "a b.mjs", "it's", "$(touch x)", "`id`", "a\\b", "", "*"],
      ["sh", "-c", "echo 'hi'; rm -rf ~"],
    ]) {
      expect(parseCommand(formatCommand(argv))).toEqual(argv);
    }
    expect(formatCommand(["node", "agent.mjs", "--n=3"])).toBe("node agent.mjs --n=3");
  });
});
