/**
 * A bounded, deterministic fuzz of `POST /v1/ingest` (issue 11): batches cut from the reference's
 * demo runs, mutated at random from a fixed seed (hostile field values and types, prototype keys,
 * own toString keys, dropped or swapped events, forged or missing blobs, deep nesting, long
 * numbers, cut or flipped bytes), half of them re-chained so their hashes hold and they reach the
 * deeper checks. Every answer must be a 2xx or a 4xx with a JSON body, the collector must log no
 * internal error and keep answering /healthz, untouched control batches must be accepted, and
 * every run it accepted must read back without an error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCollector, type Collector } from "../../../core/capture/server";
import { dumps, type JsonValue } from "../../../core/log/pyjson";
import { readRun } from "../../../core/log/reader";
import { blobsFor, demoRun, healthz, rechain, request, type Ev } from "./hostile-clients";

const SEED = 0x11c0ffee;
const ITERATIONS = 400;
const TOKEN = "fuzz-token";

/** mulberry32: a small seeded generator, so every run of the test sends the same batches. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_KEYS = ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "prototype"];
const deep = (n: number): JsonValue => {
  let v: JsonValue = 0;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const hostileValue = (r: () => number): JsonValue => {
  const pool: (() => JsonValue)[] = [
    () => ({ toString: 1 }),
    () => ({ valueOf: 2, toString: "x" }),
    () => HOSTILE_KEYS[Math.floor(r() * HOSTILE_KEYS.length)],
    () => null,
    () => -1,
    () => 2 ** 53 + 2,
    () => 10n ** 80n,
    () => 1.5,
    () => "",
    () => "x".repeat(300),
    () => [],
    () => ({}),
    () => true,
    () => deep(20),
    () => "sha256:" + "0".repeat(64),
    () => ["sha256:" + "f".repeat(64)],
    () => [{ ref: { toString: 1 } }],
    () => "\u0000\ud800",
  ];
  return pool[Math.floor(r() * pool.length)]();
};

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** Defines an own key (even "__proto__") so that dumps writes it into the text. */
const setOwn = (o: Ev, k: string, v: JsonValue) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

interface Case {
  body: string;
  control: boolean;
}

function mutate(r: () => number, events: Ev[], blobs: Map<string, JsonValue>, runId: string, control: boolean): Case {
  let evs = rechain(events.slice(0, 1 + Math.floor(r() * events.length)), runId);
  const bl: Record<string, JsonValue> = blobsFor(evs, blobs);
  if (control) return { body: dumps({ events: evs, blobs: bl }), control };
  const n = 1 + Math.floor(r() * 3);
  let textEdit: ((t: string) => string) | undefined;
  let shape: ((b: Ev) => JsonValue) | undefined;
  for (let k = 0; k < n; k++) {
    const i = Math.floor(r() * evs.length);
    const e = (evs[i] = { ...evs[i] });
    const fields = Object.keys(e);
    switch (Math.floor(r() * 12)) {
      case 0:
        e[pick(r, fields)] = hostileValue(r);
        break;
      case 1:
        delete e[pick(r, fields)];
        break;
      case 2:
        e.type = pick(r, [...HOSTILE_KEYS, "run.end", "decision", "no.such"]);
        break;
      case 3:
        setOwn(e, pick(r, HOSTILE_KEYS), pick(r, [{ type: "run.end" }, null, [], 1, { toString: 1 }] as JsonValue[]));
        break;
      case 4: {
        const j = Math.floor(r() * evs.length);
        [evs[i], evs[j]] = [evs[j], evs[i]];
        break;
      }
      case 5:
        evs = r() < 0.5 ? evs.filter((_, j) => j !== i) : [...evs.slice(0, i + 1), evs[i], ...evs.slice(i + 1)];
        if (!evs.length) evs = [e];
        break;
      case 6: {
        const keys = Object.keys(bl);
        if (keys.length && r() < 0.5) delete bl[pick(r, keys)];
        else if (keys.length) bl[pick(r, keys)] = hostileValue(r);
        else setOwn(bl, pick(r, HOSTILE_KEYS), hostileValue(r));
        break;
      }
      case 7:
        e.seq = r() < 0.5 ? 10n ** BigInt(4000 + Math.floor(r() * 800)) : -(2 ** 31);
        break;
      case 8:
        e[pick(r, ["meta", "context", "args", "usage"])] = deep(pick(r, [30, 70, 600]));
        break;
      case 9: {
        const at = Math.floor(r());
        textEdit = pick(r, [
          (t: string) => t.slice(0, Math.floor(at * t.length) || 1),
          (t: string) => {
            const p = Math.floor(r() * t.length);
            return t.slice(0, p) + String.fromCharCode(32 + Math.floor(r() * 95)) + t.slice(p + 1);
          },
          (t: string) => t.replace(/"seq":(\d+)/, `"seq":${"9".repeat(5000)}`),
          (t: string) => t.replace('"events":[{', '"events":[{"__proto__":{"type":"run.end"},'),
        ]);
        break;
      }
      case 10:
        shape = pick(r, [
          (b: Ev) => [b],
          (b: Ev) => ({ events: (b.events as JsonValue[])[0] }),
          (b: Ev) => ({ events: [], blobs: b.blobs }),
          (b: Ev) => ({ ...b, blobs: [] }),
          (b: Ev) => b.events,
        ]);
        break;
      case 11:
        e.run_id = pick(r, ["../escape", "a/b", ".hidden", "x".repeat(200), "constructor", "__proto__"]);
        break;
    }
  }
  if (r() < 0.5) evs = rechain(evs, typeof evs[0]?.run_id === "string" ? evs[0].run_id : runId);
  let body: JsonValue = { events: evs, blobs: bl };
  if (shape) body = shape(body);
  let text = dumps(body);
  if (textEdit) text = textEdit(text);
  return { body: text, control };
}

describe("ingest fuzz (bounded, deterministic)", () => {
  let root: string;
  let c: Collector;
  const log: string[] = [];
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "cw-ingest-fuzz-"));
    c = await startCollector({ root, token: TOKEN, port: 0, log: (l) => log.push(l) });
  });
  afterAll(async () => {
    await c.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it(`${ITERATIONS} mutated batches: every answer is 2xx/4xx JSON, no internal error, the server stays up`, async () => {
    const r = rng(SEED);
    const demos = Array.from({ length: 8 }, (_, k) => demoRun(`demo-seed${k}`));
    const statuses = new Map<number, number>();
    let controls = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const { events, blobs } = demos[i % demos.length];
      const k = mutate(r, events, blobs, `fuzz-${i}`, i % 5 === 0);
      const a = await request(c.port, "POST", "/v1/ingest", k.body, { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" });
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      const ok2xx = a.status >= 200 && a.status < 300;
      const ok4xx = a.status >= 400 && a.status < 500;
      expect(ok2xx || ok4xx, `iteration ${i}: status ${a.status} ${a.text.slice(0, 200)}`).toBe(true);
      expect(a.json, `iteration ${i}: not JSON: ${a.text.slice(0, 200)}`).toBeTypeOf("object");
      if (ok4xx) expect(typeof a.json.error, `iteration ${i}`).toBe("string");
      else expect(a.json.run_id, `iteration ${i}`).toBeTypeOf("string");
      if (k.control) {
        controls++;
        expect(a.status, `control batch ${i}: ${a.text.slice(0, 200)}`).toBe(200);
      }
      // a second batch to an accepted run: the same again is a replay (409)
      if (ok2xx && r() < 0.2) expect((await request(c.port, "POST", "/v1/ingest", k.body, { authorization: `Bearer ${TOKEN}` })).status).toBe(409);
    }
    expect(controls).toBe(ITERATIONS / 5);
    expect(log.filter((l) => l.startsWith("error"))).toEqual([]);
    // the fuzz reached the different refusals, not just one
    for (const s of [400, 409, 422]) expect(statuses.get(s) ?? 0, `answers with ${s}: ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
    expect((await healthz(c.port)).status).toBe(200);
    // whatever was accepted reads back as an intact (if partial) run
    for (const d of fs.readdirSync(root)) {
      const run = readRun(path.join(root, d), { checkBlobs: true });
      expect(
        run.problems.filter((p) => p.severity === "error"),
        d,
      ).toEqual([]);
    }
  }, 240_000);
});
