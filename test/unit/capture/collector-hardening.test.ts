/**
 * The collector (`causeway serve`) against hostile clients, over real sockets (issue 11): slow
 * clients are closed after the header or body timeout, the connection cap holds while /healthz
 * still answers, a number of 20 million digits is refused without holding the server, a body over
 * the parse budget is refused, every malformed batch is a 422 that carries the run's head (never a
 * 500, nothing written), and `--max-body-mb 2048` neither overflows nor refuses everything.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { startCollector, type Collector, type CollectorOptions } from "../../../core/capture/server";
import { dumps } from "../../../core/log/pyjson";
import { readRun } from "../../../core/log/reader";
import { blobsFor, demoRun, healthz, rechain, rehash, request, slowClient, until, type Ev, type SlowClient } from "./hostile-clients";

const TOKEN = "hardening-token";
const AUTH = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-collector-hard-"));
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function collector(opts: Partial<CollectorOptions> = {}): Promise<{ c: Collector; root: string; logLines: string[] }> {
  const root = tmp();
  const logLines: string[] = [];
  const c = await startCollector({ root, token: TOKEN, port: 0, log: (l) => logLines.push(l), ...opts });
  cleanup.push(() => c.close());
  return { c, root, logLines };
}

const ingest = (port: number, body: string | Buffer) => request(port, "POST", "/v1/ingest", body, AUTH);
const lines = (root: string, run: string) => {
  const f = path.join(root, run, "events.jsonl");
  return fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").filter(Boolean).length : 0;
};

describe("collector: slow clients and the connection cap", () => {
  it("closes 300 slow-header clients after the header timeout, and answers /healthz afterwards", async () => {
    const { c } = await collector({ headerTimeoutMs: 400, maxConnections: 1000 });
    const clients: SlowClient[] = [];
    for (let i = 0; i < 300; i++) {
      // a third send nothing, a third a request line, a third part of the headers
      const first = i % 3 === 0 ? "" : i % 3 === 1 ? "POST /v1/ingest HTTP/1.1\r\n" : `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-${i}: `;
      clients.push(await slowClient(c.port, first));
    }
    // the clients never close: each close is the server's doing
    await Promise.all(clients.map((s) => s.closed));
    expect(clients.every((s) => s.isClosed())).toBe(true);
    const h = await healthz(c.port);
    expect(h.status).toBe(200);
    expect(h.json).toEqual({ ok: true, store: "folder" });
  });

  it("closes a client that sends its headers but not its body within the body timeout", async () => {
    const { c, root } = await collector({ headerTimeoutMs: 60_000, bodyTimeoutMs: 400 });
    const s = await slowClient(
      c.port,
      `POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 1000\r\n\r\n{"events": [`,
    );
    await s.closed;
    expect(fs.readdirSync(root)).toEqual([]);
    expect((await healthz(c.port)).status).toBe(200);
  });

  it("holds the connection cap: slow clients waiting for headers make room, /healthz answers", async () => {
    const { c } = await collector({ headerTimeoutMs: 600_000, maxConnections: 20 });
    const clients: SlowClient[] = [];
    for (let i = 0; i < 50; i++) clients.push(await slowClient(c.port, "GET /healthz HTTP/1.1\r\n"));
    // 30 over the cap: the oldest 30 are closed to make room (the headers timeout is far away)
    await until(() => clients.filter((s) => s.isClosed()).length >= 30);
    expect(clients.slice(0, 30).every((s) => s.isClosed())).toBe(true);
    const h = await healthz(c.port);
    expect(h.status).toBe(200);
    // the health check took one more slot from a waiting client; never more than the cap are open
    await until(() => clients.filter((s) => s.isClosed()).length >= 31);
    expect(clients.filter((s) => !s.isClosed()).length).toBeLessThanOrEqual(19);
  });

  it("when every slot is busy receiving a body, closes the body that waited longest: /healthz answers (issue 27)", async () => {
    const { c } = await collector({ headerTimeoutMs: 600_000, bodyTimeoutMs: 600_000, maxConnections: 5, minBodyBytesPerSec: 0 });
    const busy: SlowClient[] = [];
    // each waits for "100 Continue": the server has read its headers and waits for its body
    const head = `POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`;
    for (let i = 0; i < 4; i++) {
      const s = await slowClient(c.port, head, "100 Continue");
      s.socket.write("{");
      busy.push(s);
    }
    // one slot of the five is held back for the health check: a fifth body makes room by closing the first
    const fifth = await slowClient(c.port, head, "100 Continue");
    busy.push(fifth);
    await busy[0].closed;
    expect(busy.slice(1).every((s) => !s.isClosed())).toBe(true);
    expect((await healthz(c.port)).status).toBe(200);
    expect(busy.slice(1).every((s) => !s.isClosed())).toBe(true);
    for (const s of busy.slice(1)) s.socket.end("}");
    await Promise.all(busy.map((s) => s.closed));
    expect((await healthz(c.port)).status).toBe(200);
  });
});

describe("collector: memory held by bodies being received", () => {
  it("answers 503 past the body pool, and frees what a client that went away held", async () => {
    const { c } = await collector({ maxBodyBytes: 1 << 20, maxBodyPoolBytes: 1 << 20 });
    const big = await slowClient(
      c.port,
      `POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 1000000\r\n\r\n"${"x".repeat(900_000)}`,
    );
    const small = () => ingest(c.port, `"${"y".repeat(200_000)}"`);
    // once the server holds the first client's 900 kB, a second body does not fit
    let r = await small();
    while (r.status !== 503) r = await small();
    expect(r.json.error).toMatch(/busy/);
    expect((await healthz(c.port)).status).toBe(200);
    // the first client goes away mid-body: what it held is freed
    big.socket.destroy();
    await big.closed;
    do r = await small();
    while (r.status === 503);
    expect(r.status).toBe(422); // a string is not a batch: the body was read and judged
  });
});

describe("collector: the parse budget", () => {
  it("refuses a 20-million-digit integer with 422 while /healthz keeps answering", async () => {
    const { c, root } = await collector({ maxBodyBytes: 64 << 20 });
    const head = Buffer.from('{"events": [{"seq": ');
    const digits = Buffer.alloc(20_000_000, "7");
    const tail = Buffer.from("}]}");
    const total = head.length + digits.length + tail.length;
    // send the first half, check health, then the rest
    const answer = new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: c.port, path: "/v1/ingest", method: "POST", headers: { ...AUTH, "content-length": String(total) }, agent: false },
        (res) => {
          let text = "";
          res.on("data", (x) => (text += x));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        },
      );
      req.on("error", reject);
      req.write(Buffer.concat([head, digits.subarray(0, 10_000_000)]));
      healthz(c.port).then((h) => {
        expect(h.status).toBe(200);
        req.end(Buffer.concat([digits.subarray(10_000_000), tail]));
      }, reject);
    });
    const r = await answer;
    expect(r.status).toBe(422);
    expect(r.json.error).toMatch(/longer than 4300 characters/);
    expect((await healthz(c.port)).status).toBe(200);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("refuses long numbers anywhere (a float, a blob) but keeps 4300-digit integers, as Python reads them", async () => {
    const { c } = await collector();
    for (const body of [`{"events": [], "blobs": {"x": 1.${"5".repeat(5000)}}}`, `{"events": [{"seed": -${"9".repeat(4301)}}]}`]) {
      const r = await ingest(c.port, body);
      expect(r.status).toBe(422);
      expect(r.json.error).toMatch(/longer than/);
    }
    // 4300 digits pass the scan and reach the validator (which names the real problem)
    const ok = await ingest(c.port, `{"events": [{"seed": ${"9".repeat(4300)}}]}`);
    expect(ok.status).toBe(422);
    expect(ok.json.error).not.toMatch(/longer than/);
  });

  it("refuses a body over the parse budget (too many values) with 413 before parsing it", async () => {
    const { c } = await collector({ maxValues: 10_000 });
    const r = await ingest(c.port, `{"events": [${Array(20_000).fill("0").join(",")}]}`);
    expect(r.status).toBe(413);
    expect(r.json.error).toMatch(/parse budget/);
    expect((await healthz(c.port)).status).toBe(200);
  });
});

describe("collector: every malformed batch is a 422 with the run's head", () => {
  it("prototype keys, own toString keys, wrong types, deep nesting, bad shapes: 422, nothing written, never 500", async () => {
    const { c, root, logLines } = await collector();
    const { events, blobs } = demoRun("demo-seed0");
    const run = rechain(events, "hostile-1");
    const prefix = run.slice(0, 10);
    const stored = await ingest(c.port, dumps({ events: prefix, blobs: blobsFor(prefix, blobs) }));
    expect(stored.status).toBe(200);
    const head = { seq: 9, hash: prefix[9].hash };
    const next = run[10];
    expect(next.type).toBe("decision");
    const withNext = (change: Ev, keepHash = false): string => {
      const e = keepHash ? { ...next, ...change } : rehash({ ...next, ...change });
      return dumps({ events: [e], blobs: blobsFor([next], blobs) });
    };
    // text edits that dumps cannot make: an own "__proto__" key
    const nextText = dumps({ events: [next], blobs: blobsFor([next], blobs) });
    const cases: [string, string][] = [
      ...["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"].map((t): [string, string] => [`type ${t}`, withNext({ type: t })]),
      ["type an object with own toString", withNext({ type: { toString: 1 } })],
      ["id an object with own toString", withNext({ id: { toString: 1 } })],
      ["id a number", withNext({ id: 17 })],
      ["id null", withNext({ id: null })],
      ["id an array", withNext({ id: ["a"] })],
      ["schema with own toString", withNext({ schema: { toString: "causeway.event.v1" } })],
      ["seq with own valueOf", withNext({ seq: { valueOf: 3 } })],
      ["agent an object", withNext({ agent: { toString: 1 } })],
      ["context a number", withNext({ context: 5 })],
      ["context item with an object ref", withNext({ context: [{ ref: { toString: 1 } }] })],
      ["a token count with own toString", withNext({ usage: { input_tokens: { toString: 1 }, output_tokens: 3 } })],
      ["a token count over 2^53", withNext({ usage: { input_tokens: 2n ** 80n, output_tokens: 3 } })],
      ["request an object", withNext({ request: { toString: 1 } })],
      ["an own __proto__ key in the event", nextText.replace('"events":[{', '"events":[{"__proto__": {"type": "run.end"}, ')],
      ["an own __proto__ key set to null", nextText.replace('"events":[{', '"events":[{"__proto__": null, ')],
      ["an own __proto__ key in the body", nextText.replace('{"blobs"', '{"__proto__": {"x": 1}, "blobs"')],
      ["a blob keyed toString", dumps({ events: [next], blobs: { ...blobsFor([next], blobs), toString: 1 } })],
      ["a blob keyed __proto__", nextText.replace('"blobs":{', '"blobs":{"__proto__":{"a":1},')],
      ["blobs an array", dumps({ events: [next], blobs: [] })],
      ["an event that is a number", dumps({ events: [next, 5] })],
    ];
    for (const [name, body] of cases) {
      expect(body, name).not.toBe(nextText);
      const r = await ingest(c.port, body);
      expect.soft(r.status, name).toBe(422);
      expect.soft(r.json?.head, name).toEqual(head);
      expect.soft(typeof r.json?.error, name).toBe("string");
    }
    // refused before parsing (the run is not read yet): 422 without a head
    const nested = (n: number) => nextText.replace('"events":[{', `"events":[{"meta": ${"[".repeat(n)}1${"]".repeat(n)}, `);
    for (const [name, body] of [
      ["a value nested 5000 deep", nested(5000)],
      ["a value nested 70 deep", nested(70)],
    ]) {
      const r = await ingest(c.port, body);
      expect.soft(r.status, name).toBe(422);
      expect.soft(r.json?.error, name).toMatch(/deeper than 64/);
    }
    // shapes that name no run: 422 with a null head
    for (const body of [
      "[]",
      "{}",
      "null",
      '"x"',
      "5",
      '{"events": 5}',
      '{"events": []}',
      '{"events": [1]}',
      '{"events": [{"run_id": {"toString": 1}}]}',
      withNext({ run_id: { toString: "hostile-1" } }),
      '{"__proto__": {"events": [1]}}',
    ]) {
      const r = await ingest(c.port, body);
      expect.soft(r.status, body).toBe(422);
      expect.soft(r.json?.head, body).toBeNull();
    }
    // not JSON at all: 400
    expect((await ingest(c.port, '{"events": [')).status).toBe(400);
    expect(logLines.filter((l) => l.startsWith("error"))).toEqual([]);
    expect(lines(root, "hostile-1")).toBe(10);
    expect((await healthz(c.port)).status).toBe(200);
    // and the run goes on: the real next batch is taken
    const rest = run.slice(10);
    expect((await ingest(c.port, dumps({ events: rest, blobs: blobsFor(rest, blobs) }))).status).toBe(200);
    const back = readRun(path.join(root, "hostile-1"), { checkBlobs: true });
    expect(back.problems).toEqual([]);
    expect(back.events.length).toBe(run.length);
  });
});

describe("collector: a stored run that is not what ingest wrote", () => {
  it("never reads or appends to an events.jsonl that is a symlink (to /dev/zero) or a FIFO: 409, and it stays up", async () => {
    const { c, root } = await collector();
    const { events, blobs } = demoRun("demo-seed2");
    for (const [name, make] of [
      ["zero", (f: string) => fs.symlinkSync("/dev/zero", f)],
      ["fifo", (f: string) => execFileSync("mkfifo", [f])],
    ] as const) {
      const dir = path.join(root, `odd-${name}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, ".causeway-ingest"), "{}\n");
      make(path.join(dir, "events.jsonl"));
      const run = rechain(events.slice(0, 2), `odd-${name}`);
      const r = await ingest(c.port, dumps({ events: run, blobs: blobsFor(run, blobs) }));
      expect(r.status, name).toBe(409);
      expect(r.json.error, name).toMatch(/not a regular file/);
    }
    expect((await healthz(c.port)).status).toBe(200);
  });
});

describe("causeway serve: flags", () => {
  const CLI = path.resolve(__dirname, "../../../dist/cli.js");
  function serve(args: string[]): Promise<{ child: ChildProcess; port: number; stderr: () => string }> {
    const child = spawn(process.execPath, [CLI, "serve", tmp(), "--token-env", "CW_TEST_TOKEN", "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CW_TEST_TOKEN: TOKEN },
    });
    cleanup.push(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    return new Promise((resolve, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        const m = /collector on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve({ child, port: Number(m[1]), stderr: () => err });
      });
      child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
  }

  it("--max-body-mb 2048 is lowered to the largest limit with a notice, and batches are taken", async () => {
    const s = await serve(["--max-body-mb", "2048", "--header-timeout-s", "0.3"]);
    expect(s.stderr()).toMatch(/--max-body-mb 2048 is above .* using 256/);
    const { events, blobs } = demoRun("demo-seed1");
    const run = rechain(events, "flags-1");
    const r = await ingest(s.port, dumps({ events: run, blobs: blobsFor(run, blobs) }));
    expect(r.status).toBe(200);
    expect(r.json.accepted).toBe(run.length);
    // --header-timeout-s reaches the server
    const slow = await slowClient(s.port, "POST /v1/ingest HTTP/1.1\r\n");
    await slow.closed;
    expect((await healthz(s.port)).status).toBe(200);
  });

  it("refuses limits that make no sense with a usage error (exit 2)", async () => {
    for (const args of [
      ["--max-body-mb", "0"],
      ["--max-body-mb", "1.5"],
      ["--header-timeout-s", "0"],
      ["--body-timeout-s", "-1"],
      ["--max-connections", "0"],
      ["--max-connections", "100000"],
      ["--max-body-pool-mb", "0"],
    ]) {
      const child = spawn(process.execPath, [CLI, "serve", tmp(), "--token-env", "CW_TEST_TOKEN", "--port", "0", ...args], {
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, CW_TEST_TOKEN: TOKEN },
      });
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      expect.soft(code, args.join(" ")).toBe(2);
      expect.soft(err, args.join(" ")).toMatch(new RegExp(args[0]));
    }
  });
});
