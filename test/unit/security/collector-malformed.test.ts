/**
 * Every malformed id, filter and cursor is the client's error: a bad percent-escape in a run id or
 * blob ref (asked with no token at all), a NUL or another control character in a filter, a cursor
 * that is not one the collector wrote (garbage, the wrong shape, a time that is no time, a NUL in
 * it) and a time out of every store's range answer 400 with a one-line JSON error, never 500, on
 * the folder store and on PostgreSQL (a real throwaway cluster: test/pg/cluster.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { startCollector, type Collector } from "../../../core/capture/server";
import { FolderStore } from "../../../core/store/folder";
import { PgStore } from "../../../core/store/postgres";
import type { CollectorStore } from "../../../core/store/types";
import { System } from "../../../core/sdk/system";
import { HttpSink } from "../../../core/sdk/httpsink";
import { PgCluster, pgAvailable } from "../../pg/cluster";

const TOKEN = "admin-token-malformed";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-malformed-"));
const HAVE_PG = pgAvailable();
let cluster: PgCluster | undefined;

beforeAll(async () => {
  if (HAVE_PG) cluster = await PgCluster.start();
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

/** A raw request: the path is sent exactly as written (no client-side encoding). */
function get(c: Collector, p: string, token?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: "127.0.0.1", port: c.port, path: p, method: "GET", headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    r.on("error", reject);
    r.end();
  });
}

const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

const kinds: { name: string; store: () => Promise<CollectorStore> }[] = [
  { name: "folder", store: async () => new FolderStore(fs.mkdtempSync(path.join(tmp, "root-"))) },
];
if (HAVE_PG) kinds.push({ name: "postgresql", store: async () => new PgStore(await cluster!.createDatabase(`cw_malformed_${process.pid}`)) });

describe.each(kinds)("$name store", (kind) => {
  let c: Collector;
  beforeAll(async () => {
    c = await startCollector({ store: await kind.store(), token: TOKEN, port: 0 });
    // one run, so listing and paging have something to read
    const sys = new System({
      name: "m",
      models: { mock: () => "ok" },
      tools: {},
      program: async (rt) => void (await rt.agent("a").decide([rt.taskRef!], { model: "mock" })),
      task: "t",
    });
    const r = await sys.run({ sink: new HttpSink(c.url, TOKEN), runId: "known-run", captureSites: false });
    expect(r.error).toBeUndefined();
  });
  afterAll(async () => c?.close());

  const BAD: [string, string, boolean][] = [
    // [what, path, sent with the token]
    ["a bad percent-escape in a run id, no token", "/v1/runs/%E0%A4%A", false],
    ["a lone % in a run id, no token", "/v1/runs/%/events", false],
    ["a bad percent-escape in a blob ref", "/v1/runs/known-run/blobs/sha256%3Azz%ZZ", true],
    ["a NUL in the program filter", "/v1/runs?program=a%00b", true],
    ["a NUL in the tool filter", "/v1/runs?tool=%00", true],
    ["a control character in the source filter", "/v1/runs?source=web%1B%5B2J", true],
    ["a garbage cursor", "/v1/runs?cursor=!!!not-base64-json", true],
    ["a cursor of the wrong shape", `/v1/runs?cursor=${cursor([1, 2])}`, true],
    ["a cursor of three parts", `/v1/runs?cursor=${cursor(["2026-01-01T00:00:00Z", "a", "b"])}`, true],
    ["a cursor whose time is no time", `/v1/runs?cursor=${cursor(["not a time", "known-run"])}`, true],
    ["a cursor holding a NUL", `/v1/runs?cursor=${cursor(["2026-01-01 00:00:00+00", "a\u0000b"])}`, true],
    ["a time before year 1", "/v1/runs?since=-000001-01-01T00:00:00Z", true],
    ["a time after year 9999", "/v1/runs?until=%2B275000-01-01T00:00:00Z", true],
    ["a NUL in a blob page's after", "/v1/runs/known-run/blobs?content=1&after=%00", true],
  ];
  for (const [what, p, withToken] of BAD) {
    it(`${what}: 400 with a one-line JSON error`, async () => {
      const r = await get(c, p, withToken ? TOKEN : undefined);
      expect(r.status, r.text).toBe(400);
      expect(r.text.trim().split("\n")).toHaveLength(1);
      expect(typeof JSON.parse(r.text).error).toBe("string");
    });
  }

  it("a run whose agent and tool names hold a NUL is stored whole (200), not a 500, and reads back byte for byte", async () => {
    const tool = "bad\u0000tool";
    const sys = new System({
      name: "n",
      task: "x",
      models: { mock: () => "ok" },
      tools: { [tool]: () => "r" },
      program: async (rt) => {
        const a = rt.agent("a\u0000b");
        const d = await a.decide([rt.taskRef!], { model: "mock" });
        await a.act(tool, {}, { decision: d });
      },
    });
    const sink = new HttpSink(c.url, TOKEN);
    const r = await sys.run({ sink, runId: "nul-names", captureSites: false });
    expect(r.error).toBeUndefined();
    expect(sink.error).toBeUndefined();
    const ev = await get(c, "/v1/runs/nul-names/events", TOKEN);
    expect(ev.status).toBe(200);
    expect(ev.text).toContain("bad\\u0000tool"); // the line as written: JSON's escape, every byte kept
  });

  it("good requests still answer (the run, a page, a blob page)", async () => {
    expect((await get(c, "/v1/runs/known-run", TOKEN)).status).toBe(200);
    expect((await get(c, "/v1/runs?program=m&limit=1", TOKEN)).status).toBe(200);
    expect((await get(c, "/v1/runs/known-run/blobs?content=1&after=", TOKEN)).status).toBe(200);
    expect((await get(c, "/v1/runs/no%2Dsuch", TOKEN)).status).toBe(404);
  });
});
