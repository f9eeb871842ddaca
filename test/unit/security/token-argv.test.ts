/**
 * A token is never on a command line: `ps` shows every process's argv to every user of the
 * machine. `causeway serve`, `push` and `pull` take it from `--token-env VAR`, `--token-file FILE`
 * or `$CAUSEWAY_TOKEN` (and `serve --token-for SCOPES=ENVVAR` as before); `--token VALUE` is
 * refused with a usage error (exit 2) naming those. A collector started with a token from the
 * environment or a file accepts it, and its argv (/proc/PID/cmdline, what `ps` prints) holds no
 * token. The real CLI (dist/cli.js) and a real collector process on loopback.
 */
import { afterAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { System } from "../../../core/sdk/system";

const CLI = path.resolve("dist/cli.js");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-token-"));
const TOKEN = "tok-canary-7d1f0c9e";
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
});

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CAUSEWAY_TOKEN: "", ...env } });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Starts `causeway serve` and resolves with its URL once it listens. */
function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, "serve", fs.mkdtempSync(path.join(tmp, "root-")), "--port", "0", "--json", ...args], {
    env: { ...process.env, CAUSEWAY_TOKEN: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.includes('"listening"'));
      if (line) resolve({ child, url: JSON.parse(line).url });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

const ingestStatus = async (url: string, token: string) => (await fetch(`${url}/v1/runs`, { headers: { authorization: `Bearer ${token}` } })).status;

describe("tokens come from the environment or a file, never argv", () => {
  it("serve --token VALUE is refused (exit 2), naming the safe ways", async () => {
    const r = await cli(["serve", path.join(tmp, "x"), "--token", TOKEN, "--port", "0"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--token-env VAR, --token-file FILE or \$CAUSEWAY_TOKEN/);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("push and pull --token VALUE are refused too", async () => {
    for (const args of [
      ["push", tmp, "http://127.0.0.1:9"],
      ["pull", "http://127.0.0.1:9", "r", "--out", tmp],
    ]) {
      const r = await cli([...args, "--token", TOKEN]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/--token-env/);
    }
  });

  it("serve --token-env VAR: the token works, and the process's argv holds none of it", async () => {
    const { child, url } = await serve(["--token-env", "CW_SERVE_TOKEN"], { CW_SERVE_TOKEN: TOKEN });
    expect(await ingestStatus(url, TOKEN)).toBe(200);
    expect(await ingestStatus(url, "wrong")).toBe(401);
    if (fs.existsSync(`/proc/${child.pid}/cmdline`)) {
      const argv = fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8");
      expect(argv).toContain("--token-env");
      expect(argv).not.toContain(TOKEN);
    }
    child.kill("SIGTERM");
  });

  it("serve --token-file FILE: the token works (its newline dropped); argv names only the file", async () => {
    const file = path.join(tmp, "token");
    fs.writeFileSync(file, TOKEN + "\n", { mode: 0o600 });
    const { child, url } = await serve(["--token-file", file], {});
    expect(await ingestStatus(url, TOKEN)).toBe(200);
    if (fs.existsSync(`/proc/${child.pid}/cmdline`)) expect(fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8")).not.toContain(TOKEN);

    // push and pull with the same file, and with --token-env
    const sys = new System({
      name: "t",
      task: "x",
      models: { mock: () => "ok" },
      tools: {},
      program: async (rt) => void (await rt.agent("a").decide([rt.taskRef!], { model: "mock" })),
    });
    const r = await sys.run({ outDir: path.join(tmp, "local"), runId: "tok-run", captureSites: false });
    const push = await cli(["push", r.dir!, url, "--token-file", file]);
    expect(push.stderr).toBe("");
    expect(push.status).toBe(0);
    const pull = await cli(["pull", url, "tok-run", "--out", path.join(tmp, "pulled"), "--token-env", "CW_PULL"], { CW_PULL: TOKEN });
    expect(pull.status, pull.stderr).toBe(0);
    expect(pull.stdout).toMatch(/verified/);
    // $CAUSEWAY_TOKEN stays as it is
    const env = await cli(["pull", url, "tok-run", "--out", path.join(tmp, "pulled2")], { CAUSEWAY_TOKEN: TOKEN });
    expect(env.status, env.stderr).toBe(0);
    child.kill("SIGTERM");
  });

  it("an unset --token-env variable, a missing or empty --token-file: usage errors (exit 2)", async () => {
    const empty = path.join(tmp, "empty");
    fs.writeFileSync(empty, "\n");
    for (const [flags, re] of [
      [["--token-env", "CW_NOT_SET_ANYWHERE"], /CW_NOT_SET_ANYWHERE is not set/],
      [["--token-file", path.join(tmp, "nope")], /cannot read/],
      [["--token-file", empty], /is empty/],
      [["--token-env", "X", "--token-file", empty], /not both/],
    ] as const) {
      const r = await cli(["pull", "http://127.0.0.1:9", "r", "--out", tmp, ...flags]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(re);
    }
  });
});
