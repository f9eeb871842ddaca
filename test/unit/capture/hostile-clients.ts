/**
 * Helpers of the server hardening tests: raw sockets that misbehave on purpose, plain HTTP
 * requests, and the demo runs of the reference as ingest batches.
 */
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { eventHash, ZERO_HASH } from "../../../core/log/hash";
import { parseLossless, type JsonValue } from "../../../core/log/pyjson";
import { refsOf } from "../../../core/log/events";

export const FIX = path.resolve(__dirname, "../../fixtures/causeway-py-demo");

/** A connection that sends `first` (part of a request, or nothing) and then goes quiet. */
export interface SlowClient {
  socket: net.Socket;
  /** Resolves when the server has closed the connection (the client never closes it). */
  closed: Promise<void>;
  isClosed(): boolean;
}

/** `waitFor`: resolve only once the server has sent this (e.g. "100 Continue": it has read the headers). */
export function slowClient(port: number, first = "", waitFor?: string): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    let closed = false;
    let got = "";
    const socket = net.connect(port, "127.0.0.1");
    const closedP = new Promise<void>((r) => socket.once("close", () => ((closed = true), r())));
    const client = { socket, closed: closedP, isClosed: () => closed };
    socket.on("error", () => {}); // a reset by the server is what some tests wait for
    socket.on("data", (d: Buffer) => {
      // read (and drop) what the server sends, a 408 say
      if (waitFor && !got.includes(waitFor)) {
        got += d.toString("latin1");
        if (got.includes(waitFor)) resolve(client);
      }
    });
    socket.once("close", () => {
      if (waitFor && !got.includes(waitFor)) reject(new Error(`closed before the server sent ${waitFor}`));
    });
    socket.once("connect", () => {
      if (first) socket.write(first);
      if (!waitFor) resolve(client);
    });
    socket.once("error", (err) => {
      if (!socket.connecting) return;
      reject(err);
    });
  });
}

export interface Answer {
  status: number;
  text: string;
  json: any;
}

/** One HTTP request on its own connection; the body may be given in parts (each a write). */
export function request(port: number, method: string, p: string, body: string | Buffer | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: p, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = undefined;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const healthz = (port: number) => request(port, "GET", "/healthz", undefined);

/** Polls `cond` (every few ms) until it holds; the test's own timeout bounds the wait. */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

export type Ev = Record<string, JsonValue>;

/** A demo run of the reference: its events (lossless) and the blobs they name. */
export function demoRun(name: string): { events: Ev[]; blobs: Map<string, JsonValue> } {
  const dir = path.join(FIX, name);
  const events = fs
    .readFileSync(path.join(dir, "events.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parseLossless(l) as Ev);
  const blobs = new Map<string, JsonValue>();
  for (const e of events) {
    for (const r of refsOf(e)) {
      if (typeof r !== "string" || blobs.has(r)) continue;
      const file = path.join(dir, "blobs", r.slice(7) + ".json");
      if (fs.existsSync(file)) blobs.set(r, (parseLossless(fs.readFileSync(file, "utf8")) as { v: JsonValue }).v);
    }
  }
  return { events, blobs };
}

/** The events moved to run `runId`, chained and hashed again from `prev` (so they are valid again). */
export function rechain(events: Ev[], runId: string, prev = ZERO_HASH): Ev[] {
  const out: Ev[] = [];
  for (const e of events) {
    const x: Ev = { ...e, run_id: runId, prev_hash: prev };
    delete x.hash;
    x.hash = eventHash(x);
    prev = x.hash;
    out.push(x);
  }
  return out;
}

/** Re-hashes one event after a change (only its chain link or its content can give it away). */
export function rehash(e: Ev): Ev {
  const x: Ev = { ...e };
  delete x.hash;
  x.hash = eventHash(x);
  return x;
}

/** The blobs the events name. */
export function blobsFor(events: Ev[], blobs: Map<string, JsonValue>): Record<string, JsonValue> {
  const b: Record<string, JsonValue> = {};
  for (const e of events) for (const r of refsOf(e)) if (typeof r === "string" && blobs.has(r)) b[r] = blobs.get(r)!;
  return b;
}
