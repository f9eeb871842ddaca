/**
 * `pull` and `push` never follow a redirect and fail in one line: a collector URL that answers
 * 302 to another origin (a decoy server on another loopback port, which records every request it
 * gets) makes the command exit 1 with one line on stderr naming the redirect, no stack trace, and
 * the decoy never sees a request, so never the token. A server that answers 200 with something
 * that is not the read API (an HTML page) fails the same way. The real CLI (dist/cli.js).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";

const CLI = path.resolve("dist/cli.js");
const TOKEN = "secret-token-redirect-canary";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-redirect-"));
const servers: http.Server[] = [];
const decoyHits: { url: string; auth: string | undefined }[] = [];
let decoy = "";
let redirecting = "";
let html = "";

async function listen(handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  decoy = await listen((req, res) => {
    decoyHits.push({ url: req.url ?? "", auth: req.headers.authorization });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  redirecting = await listen((req, res) => res.writeHead(302, { location: `${decoy}${req.url}` }).end());
  html = await listen((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Sign in</body></html>"));
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  fs.rmSync(tmp, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CAUSEWAY_TOKEN: TOKEN } });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** One line, no stack frame. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

describe("pull and push against a server that is not a collector", () => {
  it("pull from a redirecting server: exit 1, one line naming the redirect, nothing sent to the other origin", async () => {
    const r = await cli(["pull", redirecting, "some-run", "--out", path.join(tmp, "out")]);
    expect(r.status).toBe(1);
    const line = oneLine(r.stderr);
    expect(line).toMatch(/^causeway pull: some-run: .*HTTP 302.*redirect/);
    expect(line).not.toContain(TOKEN);
    expect(decoyHits).toEqual([]);
  });

  it("push to a redirecting server: the same", async () => {
    const dir = path.join(tmp, "run-a");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "events.jsonl"), JSON.stringify({ schema: "causeway.event.v1", run_id: "run-a", seq: 0, type: "run.start" }) + "\n");
    const r = await cli(["push", dir, redirecting]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/HTTP 302.*redirect/);
    expect(decoyHits).toEqual([]);
  });

  it("pull from a server answering an HTML page: exit 1, one line, no stack", async () => {
    const r = await cli(["pull", html, "some-run", "--out", path.join(tmp, "out2")]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^causeway pull: some-run: /);
  });

  it("pull with a URL that is not http(s): a usage error in one line (exit 2)", async () => {
    const r = await cli(["pull", "ftp://example.invalid", "some-run", "--out", path.join(tmp, "out3")]);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
  });
});
