/**
 * The gateway against hostile paths and silent upstreams, over real sockets (issue 11): a request
 * path that would leave the upstream's base path — `..`, `%2e%2e` in any case or mix, encoded
 * slashes or backslashes, a backslash, twice-encoded dots — is refused with 400 and never reaches
 * the upstream (a real local HTTP server that logs every request it gets); a silent upstream is
 * answered 504 after the idle timeout and the call is recorded as failed; an upstream that goes
 * silent mid-answer has the client's connection closed; `--idle-timeout-s` reaches the gateway.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { startGateway, confinedPath, type Gateway } from "../../../core/capture/gateway";
import { readRun } from "../../../core/log/reader";
import { request, until } from "./hostile-clients";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-gw-hard-"));
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};

/** A real upstream that answers every request 200 and logs its raw target and authorization. */
async function upstream(): Promise<{ url: string; seen: { url: string; auth?: string }[] }> {
  const seen: { url: string; auth?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? "", auth: req.headers.authorization });
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ path: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** An upstream that accepts connections, reads, and never answers (or answers `partial` and stops). */
async function silentUpstream(partial?: string): Promise<{ url: string; connections: () => number }> {
  let n = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    n++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    s.once("data", () => {
      if (partial) s.write(partial);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => n };
}

async function gateway(up: string, extra: Partial<Parameters<typeof startGateway>[0]> = {}): Promise<{ gw: Gateway; out: string }> {
  const out = tmp();
  const gw = await startGateway({ upstream: up, outDir: out, port: 0, runId: "gw", ...extra });
  cleanup.push(() => gw.close());
  return { gw, out };
}

/** Sends a request line as is (no client library normalises or refuses it); the answer's status. */
function raw(port: number, method: string, target: string, headers = ""): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.write(
        `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-secret-key\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n${headers}\r\n{}`,
      );
    });
    let text = "";
    s.on("data", (d) => (text += d.toString("latin1")));
    s.on("end", () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`no status in ${JSON.stringify(text.slice(0, 80))}`));
    });
    s.on("error", reject);
  });
}

const BLACKHOLE = `
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for _ in range(4):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.2)
print("ready", port, flush=True)
time.sleep(120)
`;

const TRAVERSALS = [
  "/v1/../../secret",
  "/v1/../secret",
  "/../secret",
  "/v1/%2e%2e/%2e%2e/secret",
  "/v1/%2E%2E/secret",
  "/v1/.%2e/secret",
  "/v1/%2e./secret",
  "/v1/%2e/secret",
  "/v1/./chat/completions",
  "/v1/..%2f..%2fsecret",
  "/v1/..%2F..%2Fsecret",
  "/v1%2f..%2f..%2fsecret",
  "/v1/..%5c..%5csecret",
  "/v1\\..\\..\\secret",
  "/v1/chat\\..\\..\\secret",
  "/v1/%252e%252e/secret",
  "/v1/%252f/secret",
  "/v1/%c0%ae%c0%ae/secret",
  "/v1/%e0%80%ae%e0%80%ae/secret",
  "/v1/%zz/secret",
  "/v1/chat/completions/../../../secret?model=x",
  "/v1/%00/secret",
];

describe("gateway: the upstream path stays under the configured base", () => {
  it("refuses every traversal with 400, and the upstream never sees one", async () => {
    const up = await upstream();
    const { gw } = await gateway(`${up.url}/api`);
    for (const t of TRAVERSALS) {
      for (const method of ["GET", "POST"]) expect.soft(await raw(gw.port, method, t), `${method} ${t}`).toBe(400);
    }
    expect(up.seen).toEqual([]);
    // the upstream is reachable: a plain path arrives under the base, with the key
    expect(await raw(gw.port, "GET", "/v1/models?limit=2")).toBe(200);
    expect(up.seen).toEqual([{ url: "/api/v1/models?limit=2", auth: "Bearer sk-secret-key" }]);
  });

  it("keeps an upstream base that ends in /v1 (the /v1 of the request is not doubled) and confines to it", async () => {
    const up = await upstream();
    const { gw } = await gateway(`${up.url}/openai/v1`);
    expect(await raw(gw.port, "GET", "/v1/models")).toBe(200);
    for (const t of ["/v1/../models", "/v1/%2e%2e/%2e%2e/admin"]) expect(await raw(gw.port, "GET", t)).toBe(400);
    expect(up.seen.map((s) => s.url)).toEqual(["/openai/v1/models"]);
  });

  it("confinedPath: plain API paths pass unchanged", () => {
    for (const p of [
      "/v1/chat/completions",
      "/v1/messages",
      "/v1/responses",
      "/v1beta/models/gemini-pro:generateContent",
      "/v1/models/a.b-c_d",
      "/v1/files/file-abc%20x",
    ]) {
      expect(confinedPath(p + "?x=1")).toBe(p);
    }
  });
});

describe("gateway: upstream timeouts", () => {
  it("answers 504 when the upstream accepts but stays silent, and records the call as failed", async () => {
    const up = await silentUpstream();
    const { gw, out } = await gateway(up.url, { idleTimeoutMs: 300 });
    const r = await request(gw.port, "POST", "/v1/chat/completions", JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }), {
      "content-type": "application/json",
    });
    expect(r.status).toBe(504);
    expect(r.json.error.message).toMatch(/sent nothing for 300 ms/);
    expect(up.connections()).toBe(1);
    await gw.close();
    const run = readRun(gw.runs()[0] ?? path.join(out, "gw"));
    const d = run.events.filter((e) => e.type === "decision");
    expect(d.length).toBe(1);
    expect(d[0].status).toBe("error");
  });

  it("answers 504 when the upstream does not accept the connection within the connect timeout", async () => {
    // a listening socket whose accept queue is full and never drained: a connect to it hangs
    // (python3 is on every machine of this project; Node always accepts, so it cannot play this part)
    const py = spawn("python3", ["-c", BLACKHOLE], { stdio: ["ignore", "pipe", "inherit"] });
    cleanup.push(() => py.kill("SIGKILL"));
    let text = "";
    py.stdout.on("data", (d) => (text += d));
    await until(() => /ready \d+/.test(text) || py.exitCode !== null);
    const port = Number(/ready (\d+)/.exec(text)![1]);
    const { gw } = await gateway(`http://127.0.0.1:${port}`, { connectTimeoutMs: 300, idleTimeoutMs: 600_000 });
    const r = await request(gw.port, "GET", "/v1/models", undefined);
    expect(r.status).toBe(504);
    expect(r.json.error.message).toMatch(/did not accept the connection within 300 ms/);
  });

  it("closes the client's connection when the upstream goes silent mid-answer", async () => {
    const up = await silentUpstream("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n6\r\ndata: \r\n");
    const { gw } = await gateway(up.url, { idleTimeoutMs: 300 });
    const outcome = await new Promise<string>((resolve) => {
      const req = http.request(
        { host: "127.0.0.1", port: gw.port, path: "/v1/chat/completions", method: "POST", headers: { "content-type": "application/json" }, agent: false },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => resolve(res.complete ? "complete" : "cut"));
          res.on("aborted", () => resolve("cut"));
          res.on("error", () => resolve("cut"));
        },
      );
      req.on("error", () => resolve("cut"));
      req.end(JSON.stringify({ model: "m", stream: true, messages: [] }));
    });
    expect(outcome).toBe("cut");
  });

  it("--idle-timeout-s reaches the gateway of the CLI; nonsense timeouts are usage errors", async () => {
    const up = await silentUpstream();
    const CLI = path.resolve(__dirname, "../../../dist/cli.js");
    const child = spawn(process.execPath, [CLI, "gateway", "--upstream", up.url, "--out", tmp(), "--port", "0", "--idle-timeout-s", "0.3"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanup.push(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let text = "";
    child.stdout.on("data", (d) => (text += d));
    await until(() => /gateway on http:\/\/127\.0\.0\.1:\d+/.test(text) || child.exitCode !== null);
    const port = Number(/gateway on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)![1]);
    const r = await request(port, "GET", "/v1/models", undefined);
    expect(r.status).toBe(504);
    for (const bad of [
      ["--idle-timeout-s", "0"],
      ["--connect-timeout-s", "-2"],
      ["--connect-timeout-s", "99999"],
    ]) {
      const c = spawn(process.execPath, [CLI, "gateway", "--upstream", up.url, "--out", tmp(), "--port", "0", ...bad], { stdio: "ignore" });
      expect.soft(await new Promise((r) => c.once("exit", r)), bad.join(" ")).toBe(2);
    }
  });
});
