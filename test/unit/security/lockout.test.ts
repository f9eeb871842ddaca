/**
 * Lockout, attacked over real sockets (issue 27, item 5): slow bodies from many connections,
 * refilled as the server closes them, and 300 live tails from one read token cannot keep the
 * collector's /healthz or a legitimate request out; unauthenticated slow bodies from a local process
 * cannot keep the gateway's clients out; a body that trickles is cut with 408; one token and one
 * address hold only their share. Every attack is bounded (it stops by itself); the tests assert on
 * what was answered, never on timings.
 */
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { startCollector, type Collector, type CollectorOptions } from "../../../core/capture/server";
import { startGateway } from "../../../core/capture/gateway";
import type { GatewayOptions } from "../../../core/capture/gateway-options";
import { dumps } from "../../../core/log/pyjson";
import { blobsFor, demoRun, rechain, request, until, type Answer } from "../capture/hostile-clients";

const ADMIN = "lockout-admin";
const ATTACKER = "lockout-attacker-ingest";
const LEGIT = "lockout-legit-ingest";
const READER = "lockout-reader";
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-sec-lockout-"));
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function collector(opts: Partial<CollectorOptions> = {}): Promise<{ c: Collector; root: string }> {
  const root = tmp();
  const tokens = [
    { token: ATTACKER, scopes: ["ingest" as const] },
    { token: LEGIT, scopes: ["ingest" as const] },
    { token: READER, scopes: ["read" as const] },
  ];
  const c = await startCollector({ root, token: ADMIN, tokens, port: 0, ...opts });
  cleanup.push(() => c.close());
  return { c, root };
}

/** A batch of the first `n` events of a demo run, as run `runId` (no run.end: the run stays live). */
function batch(runId: string, n?: number): string {
  const demo = demoRun("demo-seed0");
  const events = rechain(n === undefined ? demo.events : demo.events.slice(0, n), runId);
  return dumps({ events, blobs: blobsFor(events, demo.blobs) });
}

/** One request that never throws: its status, or 0 when the connection was refused or reset. */
async function attempt(p: Promise<Answer>): Promise<number> {
  try {
    return (await p).status;
  } catch {
    return 0;
  }
}

/**
 * A bounded flood of slow bodies: keeps `want` connections open, each sending its headers and then
 * a byte of body now and then; when the server closes one, another takes its place (until `budget`
 * connections were made or {@link stop}). `localAddress` picks the source address.
 */
class SlowBodies {
  private readonly live = new Set<net.Socket>();
  private made = 0;
  private stopped = false;
  got408 = 0;
  got429 = 0;
  /** Connections the server has accepted (at the socket level). */
  connected = 0;
  constructor(
    private readonly port: number,
    private readonly head: string,
    private readonly want: number,
    private readonly budget: number,
    private readonly localAddress = "127.0.0.1",
  ) {
    for (let i = 0; i < want; i++) this.open();
  }
  get open_(): number {
    return this.live.size;
  }
  private open(): void {
    if (this.stopped || this.made >= this.budget) return;
    this.made++;
    const s = net.connect({ port: this.port, host: "127.0.0.1", localAddress: this.localAddress });
    this.live.add(s);
    let timer: NodeJS.Timeout | undefined;
    s.on("error", () => {});
    s.on("data", (d: Buffer) => {
      const t = d.toString("latin1");
      if (t.startsWith("HTTP/1.1 408")) this.got408++;
      if (t.startsWith("HTTP/1.1 429")) this.got429++;
    });
    s.once("connect", () => {
      this.connected++;
      s.write(this.head);
      // a byte every 100 ms: far below any minimum rate, never finishing a body of 1 MB
      timer = setInterval(() => s.writable && s.write("x"), 100);
    });
    s.once("close", () => {
      clearInterval(timer);
      this.live.delete(s);
      // refilled, a moment later
      if (!this.stopped) setTimeout(() => this.open(), 20);
    });
  }
  stop(): void {
    this.stopped = true;
    for (const s of this.live) s.destroy();
  }
}

const slowIngestHead = (port: number, token: string) =>
  `POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"events": [`;

describe("collector lockout", () => {
  it("slow bodies from an ingest token on many connections, refilled: /healthz answers 20 of 20 and a legitimate batch is taken", async () => {
    const { c, root } = await collector({ maxConnections: 64, bodyRateWindowMs: 200, minBodyBytesPerSec: 1000 });
    // more slow bodies than the collector has connections (64 here)
    const flood = new SlowBodies(c.port, slowIngestHead(c.port, ATTACKER), 80, 20_000);
    cleanup.push(() => flood.stop());
    // the flood holds the table before the first health check
    await until(() => flood.open_ >= 60);
    let answered = 0;
    for (let i = 0; i < 20; i++) {
      await until(() => flood.open_ >= 40); // checked under the flood, not after it
      if ((await attempt(request(c.port, "GET", "/healthz", undefined))) === 200) answered++;
    }
    const legit = await attempt(
      request(c.port, "POST", "/v1/ingest", batch("legit-run"), { authorization: `Bearer ${LEGIT}`, "content-type": "application/json" }),
    );
    flood.stop();
    expect(answered).toBe(20);
    expect(legit).toBe(200);
    expect(fs.existsSync(path.join(root, "legit-run", "events.jsonl"))).toBe(true);
  });

  it("cuts a body that trickles below the minimum rate with 408, and writes nothing", async () => {
    const { c, root } = await collector({ bodyRateWindowMs: 200, minBodyBytesPerSec: 1000 });
    // a byte every 100 ms for at most 5 s: the attack ends by itself whether or not it is cut
    const flood = new SlowBodies(c.port, slowIngestHead(c.port, ATTACKER), 3, 3);
    cleanup.push(() => flood.stop());
    const t = setTimeout(() => flood.stop(), 5_000);
    cleanup.push(() => clearTimeout(t));
    await until(() => flood.open_ === 0);
    expect(flood.got408).toBe(3);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("300 live tails from one read token: the token gets its share (429 past it), /healthz answers 20 of 20", async () => {
    const { c } = await collector();
    const pushed = await request(c.port, "POST", "/v1/ingest", batch("live-run", 4), { authorization: `Bearer ${LEGIT}`, "content-type": "application/json" });
    expect(pushed.status).toBe(200);
    const statuses: number[] = [];
    const reqs: http.ClientRequest[] = [];
    for (let i = 0; i < 300; i++) {
      const r = http.get(
        { host: "127.0.0.1", port: c.port, path: "/v1/runs/live-run/tail", headers: { authorization: `Bearer ${READER}` }, agent: false },
        (res) => {
          statuses.push(res.statusCode ?? 0);
          res.resume();
        },
      );
      r.on("error", () => statuses.push(0));
      reqs.push(r);
    }
    cleanup.push(() => reqs.forEach((r) => r.destroy()));
    // every tail has its answer: a live stream, a refusal, or a closed connection
    await until(() => statuses.length >= 300);
    let answered = 0;
    for (let i = 0; i < 20; i++) if ((await attempt(request(c.port, "GET", "/healthz", undefined))) === 200) answered++;
    expect(answered).toBe(20);
    expect(statuses.filter((s) => s === 200)).toHaveLength(32);
    expect(statuses.filter((s) => s === 429)).toHaveLength(268);
    // another reader is not held to that token's share
    const other = await new Promise<number>((resolve) => {
      const r = http.get(
        { host: "127.0.0.1", port: c.port, path: "/v1/runs/live-run/tail", headers: { authorization: `Bearer ${ADMIN}` }, agent: false },
        (res) => {
          resolve(res.statusCode ?? 0);
          r.destroy();
        },
      );
      r.on("error", () => resolve(0));
    });
    expect(other).toBe(200);
  });

  it("a live tail is not cut by the body clocks: it outlives a trickling body's 408 and still streams what is pushed next", async () => {
    const { c } = await collector({ bodyRateWindowMs: 100, minBodyBytesPerSec: 1000, bodyTimeoutMs: 300 });
    const demo = demoRun("demo-seed0");
    const all = rechain(demo.events, "live-run");
    const push = (events: typeof all) =>
      request(c.port, "POST", "/v1/ingest", dumps({ events, blobs: blobsFor(events, demo.blobs) }), {
        authorization: `Bearer ${LEGIT}`,
        "content-type": "application/json",
      });
    expect((await push(all.slice(0, 4))).status).toBe(200);
    let text = "";
    let status = 0;
    let closed = false;
    const tail = http.get(
      { host: "127.0.0.1", port: c.port, path: "/v1/runs/live-run/tail", headers: { authorization: `Bearer ${READER}` }, agent: false },
      (res) => {
        status = res.statusCode ?? 0;
        res.on("data", (d: Buffer) => (text += d.toString("utf8")));
        res.on("close", () => (closed = true));
      },
    );
    tail.on("error", () => (closed = true));
    cleanup.push(() => tail.destroy());
    await until(() => text.includes('"count":4'));
    // a trickling body is cut: the rate window and the body timeout have passed for the tail too
    const flood = new SlowBodies(c.port, slowIngestHead(c.port, ATTACKER), 1, 1);
    cleanup.push(() => flood.stop());
    await until(() => flood.open_ === 0 && flood.connected === 1);
    expect(flood.got408).toBe(1);
    expect((await push(all.slice(4))).status).toBe(200);
    await until(() => text.includes("event: end") || closed);
    expect(status).toBe(200);
    expect(text).not.toMatch(/HTTP\/1\.1 408/);
    expect(closed || text.includes("event: end")).toBe(true);
    expect(text).toContain(`"count":${all.length - 4}`);
  });

  it("one token holds at most its share of requests at once (429 past it); another token is served", async () => {
    // the body timeout ends the attack by itself (and today's code, which has no such share, too)
    const { c } = await collector({ maxRequestsPerPrincipal: 5, bodyRateWindowMs: 60_000, bodyTimeoutMs: 3_000 });
    const flood = new SlowBodies(c.port, slowIngestHead(c.port, ATTACKER), 10, 10);
    cleanup.push(() => flood.stop());
    // five bodies are waited for; the other five are answered 429 and closed
    await until(() => flood.connected === 10 && flood.open_ <= 5);
    const legit = await attempt(
      request(c.port, "POST", "/v1/ingest", batch("legit-run"), { authorization: `Bearer ${LEGIT}`, "content-type": "application/json" }),
    );
    expect(legit).toBe(200);
    expect(flood.got429).toBe(5);
  });

  it("one remote address holds at most its share of connections; clients on another address are served", async () => {
    // the body timeout ends the attack by itself (and on today's code, which has no such share, too)
    const { c } = await collector({ maxConnections: 30, maxConnectionsPerAddress: 10, bodyRateWindowMs: 60_000, bodyTimeoutMs: 3_000 });
    // as many slow bodies from 127.0.0.2 as the collector has connections
    const flood = new SlowBodies(c.port, slowIngestHead(c.port, ATTACKER), 30, 30, "127.0.0.2");
    cleanup.push(() => flood.stop());
    await until(() => flood.connected === 30);
    let answered = 0;
    for (let i = 0; i < 10; i++) if ((await attempt(request(c.port, "GET", "/healthz", undefined))) === 200) answered++;
    expect(answered).toBe(10);
    expect(flood.open_).toBeLessThanOrEqual(10);
  });
});

describe("limits: options", () => {
  it("refuses limits that make no sense, on both servers", async () => {
    for (const bad of [
      { minBodyBytesPerSec: -1 },
      { bodyRateWindowMs: 0 },
      { maxTailsPerPrincipal: 1.5 },
      { reservedConnections: 256 },
      { maxConnectionsPerAddress: 0 },
    ]) {
      await expect(startCollector({ root: tmp(), token: ADMIN, port: 0, ...bad }), JSON.stringify(bad)).rejects.toThrow(/must be a whole number/);
      await expect(startGateway({ upstream: "http://127.0.0.1:9", outDir: tmp(), port: 0, ...bad }), JSON.stringify(bad)).rejects.toThrow(
        /must be a whole number/,
      );
    }
  });
});

describe("gateway lockout", () => {
  it("unauthenticated slow bodies from a local process, refilled: the gateway's clients are answered 10 of 10", async () => {
    const seen: string[] = [];
    const up = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(req.url ?? "");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
          }),
        );
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => (up.closeAllConnections(), up.close(() => r()))));
    const out = tmp();
    const opts: GatewayOptions = {
      upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
      outDir: out,
      port: 0,
      runId: "gw",
      bodyRateWindowMs: 200,
      minBodyBytesPerSec: 1000,
    };
    const gw = await startGateway(opts);
    cleanup.push(() => gw.close());
    // more slow bodies than the gateway has connections (256)
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"model": "m", "messages": [`;
    const flood = new SlowBodies(gw.port, head, 280, 20_000);
    cleanup.push(() => flood.stop());
    await until(() => flood.open_ >= 100);
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
    let answered = 0;
    for (let i = 0; i < 10; i++) {
      await until(() => flood.open_ >= 60);
      if (
        (await attempt(request(gw.port, "POST", "/v1/chat/completions", body, { "content-type": "application/json", authorization: "Bearer sk-user" }))) === 200
      )
        answered++;
    }
    flood.stop();
    expect(answered).toBe(10);
    expect(seen).toHaveLength(10);
  });
});
