/**
 * A {@link Sink} that ships a run to a collector (`causeway serve`, POST /v1/ingest) as it is
 * recorded, so the collector — and anything watching its folder — sees the run live. Given several
 * URLs (collectors sharing one PostgreSQL store), a failed send moves on to the next.
 *
 *   await SYSTEM.run({ seed: 0, sink: new HttpSink("http://127.0.0.1:7788", process.env.CAUSEWAY_TOKEN!) });
 *
 * Events are batched and sent after every tool call, on run.end, when `batch` events wait, and
 * after `intervalMs`; one batch is in flight at a time. Each batch carries the blobs its events
 * name that the collector has not acknowledged. Network errors, 429 and 5xx are retried with
 * back-off. A 409 names the collector's head: when this sink holds that event, everything up to it
 * was delivered (e.g. a batch committed before a timeout) and is dropped, and sending resumes.
 * Anything else (401, 422, a 409 it can't resolve) stops the sink: `close()` (and so
 * `Runtime.finish`) rejects with the error, and `onError` is told at once.
 */
import http from "node:http";
import https from "node:https";
import { randomBytes } from "node:crypto";
import { refsOf } from "../log/events";
import { isRef } from "../log/hash";
import { dumps } from "../log/pyjson";
import type { Sink } from "../log/writer";

export interface HttpSinkOptions {
  /** Send when this many events wait (default 50). */
  batch?: number;
  /** Send waiting events after this long (default 1000 ms). */
  intervalMs?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** Retries of a failed send before giving up (default 5). */
  retries?: number;
  onError?: (err: Error) => void;
  /** Told of each batch's outcome: its final status and the time from first try to answer, retries included (benchmarks). */
  onBatch?: (info: { status: number; ms: number; events: number }) => void;
}

export class IngestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "IngestError";
  }
}

type Ev = Record<string, unknown>;

export class HttpSink implements Sink {
  /** Every collector this sink may send to (several collectors sharing one database). */
  readonly endpoints: URL[];
  private current = 0;
  /** The collector sent to now; a failed send moves on to the next one. */
  get endpoint(): URL {
    return this.endpoints[this.current];
  }
  /** Events delivered so far (acknowledged by the collector). */
  delivered = 0;
  /** The error that stopped the sink, if any. */
  error: Error | undefined;
  private readonly unsent: Ev[] = [];
  private readonly pendingBlobs = new Map<string, unknown>();
  private readonly deliveredBlobs = new Set<string>();
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly opts: Required<Omit<HttpSinkOptions, "onError" | "onBatch">> & Pick<HttpSinkOptions, "onError" | "onBatch">;

  /**
   * A run given no id gets `BASE-YYYYMMDD-HHMMSS-RANDOM` here: a collector holds many writers'
   * runs, and a fixed default (`agent-run`, `NAME-seed0`) made a second agent's run collide with
   * the first's. An explicit run id is used as it is.
   */
  runIdFor(base: string): string {
    const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
    const safe =
      base
        .replace(/[^A-Za-z0-9._-]/g, "-")
        .replace(/^[^A-Za-z0-9]+/, "")
        .slice(0, 80) || "run";
    return `${safe}-${stamp}-${randomBytes(6).toString("hex")}`;
  }

  constructor(
    url: string | readonly string[],
    private readonly token: string,
    opts: HttpSinkOptions = {},
  ) {
    const urls = typeof url === "string" ? [url] : [...url];
    if (!urls.length) throw new Error("HttpSink needs a collector URL");
    this.endpoints = urls.map((x) => {
      const u = new URL(x);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`HttpSink needs an http(s) URL, got ${x}`);
      return new URL(u.pathname.replace(/\/+$/, "") + "/v1/ingest", u);
    });
    this.opts = {
      batch: opts.batch ?? 50,
      intervalMs: opts.intervalMs ?? 1000,
      timeoutMs: opts.timeoutMs ?? 10_000,
      retries: opts.retries ?? 5,
      onError: opts.onError,
      onBatch: opts.onBatch,
    };
  }

  blob(ref: string, value: unknown): void {
    if (this.error) return;
    if (!this.deliveredBlobs.has(ref) && !this.pendingBlobs.has(ref)) this.pendingBlobs.set(ref, value);
  }

  event(e: Ev): void {
    if (this.error) return;
    this.unsent.push(e);
    if (e.type === "action" || e.type === "run.end" || this.unsent.length >= this.opts.batch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.intervalMs);
      this.timer.unref?.();
    }
  }

  /** Sends everything waiting; resolves when it is delivered (or the sink has stopped). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.running) {
      this.running = this.drain().finally(() => {
        this.running = undefined;
      });
    }
    return this.running;
  }

  /** Sends the rest; rejects if the sink stopped on an error. */
  async close(): Promise<void> {
    while (this.unsent.length && !this.error) await this.flush();
    if (this.running) await this.running;
    if (this.error) throw this.error;
  }

  private async drain(): Promise<void> {
    while (this.unsent.length && !this.error) {
      const events = this.unsent.slice(0, this.opts.batch);
      const blobs: Record<string, unknown> = {};
      for (const e of events) for (const r of refsOf(e)) if (isRef(r) && this.pendingBlobs.has(r)) blobs[r] = this.pendingBlobs.get(r);
      let res: { status: number; body: Record<string, unknown> };
      const t0 = performance.now();
      try {
        res = await this.send({ events, blobs });
        this.opts.onBatch?.({ status: res.status, ms: performance.now() - t0, events: events.length });
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (res.status === 200) {
        this.acknowledge(events.length);
        continue;
      }
      const head = res.body.head as { seq?: unknown; hash?: unknown } | null | undefined;
      if (res.status === 409 && head && typeof head.seq === "number") {
        const k = this.unsent.findIndex((e) => e.seq === head.seq && e.hash === head.hash);
        if (k >= 0) {
          this.acknowledge(k + 1); // the collector has these already
          continue;
        }
      }
      this.fail(new IngestError(`ingest refused the batch (HTTP ${res.status}): ${String(res.body.error ?? "no reason given")}`, res.status));
    }
  }

  private acknowledge(k: number): void {
    for (const e of this.unsent.splice(0, k)) {
      for (const r of refsOf(e)) {
        if (!isRef(r)) continue;
        this.pendingBlobs.delete(r);
        this.deliveredBlobs.add(r);
      }
      this.delivered++;
    }
  }

  private fail(err: Error): void {
    this.error = err;
    this.unsent.length = 0;
    this.pendingBlobs.clear();
    try {
      this.opts.onError?.(err);
    } catch {
      /* a failing handler must not hide the error */
    }
  }

  /** POSTs a batch, retrying network errors, 429 and 5xx with back-off. */
  private async send(batch: { events: Ev[]; blobs: Record<string, unknown> }): Promise<{ status: number; body: Record<string, unknown> }> {
    const data = Buffer.from(dumps(batch, "canonical"));
    for (let attempt = 0; ; attempt++) {
      let res: { status: number; body: Record<string, unknown> } | undefined;
      let failure: Error | undefined;
      try {
        res = await this.post(data);
      } catch (err) {
        failure = err as Error;
      }
      const retry = failure !== undefined || res!.status === 429 || res!.status >= 500;
      if (!retry) return res!;
      if (attempt >= this.opts.retries) {
        if (failure) throw new IngestError(`cannot reach the collector at ${this.endpoint.origin}: ${failure.message}`, 0);
        return res!;
      }
      // try the next collector at once; back off once every collector has been tried
      this.current = (this.current + 1) % this.endpoints.length;
      if (this.endpoints.length === 1 || this.current === 0 || attempt >= this.endpoints.length)
        await new Promise((r) => setTimeout(r, Math.min(5000, 200 * 2 ** attempt)));
    }
  }

  private post(data: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const req = (this.endpoint.protocol === "https:" ? https : http).request(
        this.endpoint,
        {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": String(data.length), authorization: `Bearer ${this.token}` },
          timeout: this.opts.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (c: Buffer) => {
            size += c.length;
            if (size <= 1 << 20) chunks.push(c);
          });
          res.on("end", () => {
            let body: Record<string, unknown> = {};
            try {
              const v = JSON.parse(Buffer.concat(chunks).toString("utf8"));
              if (v && typeof v === "object") body = v;
            } catch {
              /* not JSON: the status says enough */
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${this.opts.timeoutMs} ms`)));
      req.on("error", reject);
      req.end(data);
    });
  }
}
