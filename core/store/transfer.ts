/**
 * Moving runs between a folder and a collector: {@link pushRun} sends a run folder through the
 * collector's ingest (every check applies; a refused run is an error naming the reason), resuming
 * after what the collector already holds; {@link pullRun} writes a collector's run into a folder,
 * byte for byte, and verifies it. Also the small read-API client the extension uses.
 */
import fs from "node:fs";
import path from "node:path";
import { refsOf } from "../log/events";
import { isRef } from "../log/hash";
import { dumps, parseJsonObject, parseLossless } from "../log/pyjson";
import { verifyRun } from "../log/verify";
import { chainTest, parseTestsLog, readTestsLog } from "../log/testslog";
import { RUN_ID_RE } from "./http";
import { WRITERS_FILE, parseWriters, writersText, type WritersRecord } from "../log/writers";
import type { RunFilter, RunPage, RunRow } from "./types";

export class TransferError extends Error {
  constructor(
    message: string,
    readonly status = 0,
  ) {
    super(message);
    this.name = "TransferError";
  }
}

export class CollectorClient {
  readonly base: string;
  constructor(
    url: string,
    private readonly token: string,
  ) {
    this.base = url.replace(/\/+$/, "");
    if (!/^https?:\/\//i.test(this.base)) throw new TransferError(`the collector's URL must be http(s): ${url}`);
  }

  /** One request; a `timeoutMs` of 0 and a `signal` for a request that lasts, such as the live tail. */
  async request(method: string, p: string, body?: string, timeoutMs = 60_000, signal?: AbortSignal): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const sig = timeoutMs > 0 ? (signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs)) : signal;
      let res: Response;
      try {
        // never followed: a redirect would carry the token to wherever the answer points
        res = await fetch(this.base + p, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
          body,
          signal: sig,
          redirect: "manual",
        });
      } catch (err) {
        // a GET whose connection failed (a kept-alive connection the server closed as it was
        // reused) is asked again, twice at most; a timeout or an abort is not
        if (method === "GET" && attempt < 3 && !sig?.aborted) continue;
        throw new TransferError(`cannot reach the collector at ${this.base} (${(err as Error).message})`);
      }
      if (res.status >= 300 && res.status < 400) {
        void res.body?.cancel().catch(() => {});
        const to = res.headers.get("location");
        throw new TransferError(
          `the collector at ${this.base} answered HTTP ${res.status}${to ? `, a redirect to ${JSON.stringify(to.slice(0, 200))}` : ""}; redirects are not followed (the token would go along): give the collector's own URL`,
          res.status,
        );
      }
      return res;
    }
  }

  async fail(res: Response, what: string): Promise<never> {
    let reason = res.statusText;
    try {
      const j = (await res.json()) as { error?: string };
      if (j.error) reason = j.error;
    } catch {
      /* not JSON */
    }
    throw new TransferError(`${what}: HTTP ${res.status}: ${reason}`, res.status);
  }

  async listRuns(f: RunFilter = {}): Promise<RunPage> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({
      program: f.program,
      since: f.since,
      until: f.until,
      status: f.status,
      source: f.source,
      tool: f.tool,
      cursor: f.cursor,
      limit: f.limit,
    })) {
      if (v !== undefined && v !== "") q.set(k, String(v));
    }
    if (f.highAlert) q.set("high", "1");
    const res = await this.request("GET", `/v1/runs?${q}`);
    if (!res.ok) await this.fail(res, "listing runs");
    return (await res.json()) as RunPage;
  }

  async getRun(runId: string): Promise<RunRow | null> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}`);
    if (res.status === 404) return null;
    if (!res.ok) await this.fail(res, `run ${runId}`);
    return (await res.json()) as RunRow;
  }

  async events(runId: string, from: number, limit = 10_000): Promise<{ bytes: Buffer; count: number; headSeq: number; ended: boolean }> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/events?from=${from}&limit=${limit}`);
    if (!res.ok) await this.fail(res, `events of ${runId}`);
    return {
      bytes: Buffer.from(await res.arrayBuffer()),
      count: Number(res.headers.get("x-causeway-count")),
      headSeq: Number(res.headers.get("x-causeway-head-seq")),
      ended: res.headers.get("x-causeway-ended") === "1",
    };
  }

  async blobRefs(runId: string): Promise<string[]> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/blobs`);
    if (!res.ok) await this.fail(res, `blobs of ${runId}`);
    return ((await res.json()) as { refs: string[] }).refs.filter(isRef);
  }

  /** Blobs in ref order after `after`, with their file bytes (a page of the bulk read). */
  async blobPage(runId: string, after: string, limit = 500): Promise<{ blobs: [string, string][]; next: string | null }> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/blobs?content=1&limit=${limit}&after=${encodeURIComponent(after)}`);
    if (!res.ok) await this.fail(res, `blobs of ${runId}`);
    return (await res.json()) as { blobs: [string, string][]; next: string | null };
  }

  async blob(runId: string, ref: string): Promise<Buffer> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/blobs/${encodeURIComponent(ref)}`);
    if (!res.ok) await this.fail(res, `blob ${ref.slice(0, 19)}… of ${runId}`);
    return Buffer.from(await res.arrayBuffer());
  }

  async tests(runId: string): Promise<Buffer> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/tests`);
    if (!res.ok) await this.fail(res, `tests of ${runId}`);
    return Buffer.from(await res.arrayBuffer());
  }

  /** Who owns the run and wrote each test line (core/store/owners.ts); undefined from a collector that does not record it. */
  async writers(runId: string): Promise<WritersRecord | undefined> {
    const res = await this.request("GET", `/v1/runs/${encodeURIComponent(runId)}/writers`);
    if (res.status === 404) return undefined;
    if (!res.ok) await this.fail(res, `writers of ${runId}`);
    return parseWriters(await res.text());
  }

  /** Appends one tests.jsonl line, byte for byte (chained, or unchained before any chained line). */
  async appendTest(runId: string, lineText: string): Promise<{ line: number; head: string }> {
    const res = await this.request("POST", `/v1/runs/${encodeURIComponent(runId)}/tests`, JSON.stringify({ line: lineText }));
    if (!res.ok) await this.fail(res, `the collector refused a test result of ${runId}`);
    return (await res.json()) as { line: number; head: string };
  }

  async ingest(body: string): Promise<{ head: { seq: number; hash: string } }> {
    const res = await this.request("POST", "/v1/ingest", body);
    if (!res.ok) await this.fail(res, "the collector refused the run");
    return (await res.json()) as { head: { seq: number; hash: string } };
  }
}

export interface FollowOptions {
  /** Ends the following (the promise then resolves with what was received). */
  signal?: AbortSignal;
  /** Each new range of events, in seq order, as the exact bytes of their lines; awaited before the next. */
  onEvents(range: { from: number; count: number; bytes: Buffer }): Promise<void> | void;
  /** A dropped connection (or refused reconnect), and when the next attempt is. */
  onRetry?(err: Error, inMs: number): void;
  /** First pause before reconnecting (ms; doubled up to 10 s while nothing arrives). */
  retryMs?: number;
}

/**
 * Follows a running run over the read API's live tail (server-sent events, GET …/tail?from=N) from
 * seq `from`: every new event is handed to `onEvents` once, in order. A dropped connection (a
 * collector restarting, a load balancer moving to another collector) is reconnected from the last
 * seq received, with back-off; a range that does not start where the last one ended is refused and
 * read again. Resolves at run.end (`ended`) or when `signal` aborts; an unknown run (404) or a
 * refused token (401/403) throws.
 */
export async function followRun(client: CollectorClient, runId: string, from: number, opts: FollowOptions): Promise<{ next: number; ended: boolean }> {
  let next = from;
  const first = opts.retryMs ?? 250;
  let pause = first;
  const aborted = () => opts.signal?.aborted === true;
  while (!aborted()) {
    let err: Error | undefined;
    try {
      const res = await client.request("GET", `/v1/runs/${encodeURIComponent(runId)}/tail?from=${next}`, undefined, 0, opts.signal);
      if (res.status === 404 || res.status === 401 || res.status === 403) await client.fail(res, `following ${runId}`);
      if (!res.ok || !res.body) throw new TransferError(`following ${runId}: HTTP ${res.status}`, res.status);
      const decoder = new TextDecoder();
      let buf = "";
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const msg = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = "message";
          const data: string[] = [];
          for (const line of msg.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (event === "end") return { next, ended: true };
          if (event !== "events") continue;
          const r = JSON.parse(data.join("\n")) as { from?: unknown; count?: unknown; text?: unknown };
          if (typeof r.from !== "number" || typeof r.count !== "number" || typeof r.text !== "string")
            throw new TransferError(`following ${runId}: a malformed range`);
          if (r.from !== next) throw new TransferError(`following ${runId}: a range from seq ${r.from}, expected ${next}`);
          await opts.onEvents({ from: r.from, count: r.count, bytes: Buffer.from(r.text, "utf8") });
          next += r.count;
          pause = first;
        }
      }
      err = new TransferError(`following ${runId}: the collector closed the stream before run.end`);
    } catch (e) {
      if (aborted()) break;
      if (e instanceof TransferError && (e.status === 404 || e.status === 401 || e.status === 403)) throw e;
      err = e as Error;
    }
    opts.onRetry?.(err, pause);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, pause);
      opts.signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
    });
    pause = Math.min(pause * 2, 10_000);
  }
  return { next, ended: false };
}

/**
 * Appends one local tests.jsonl line to the collector's copy of the run. When the collector's chain
 * has moved on (409: someone else's result landed first), the collector's tests are read again and
 * the result is re-chained onto their head (prev_hash and hash anew) and sent again: a result is
 * never dropped. Returns the line as the collector holds it.
 */
export async function appendTestLine(
  client: CollectorClient,
  runId: string,
  lineText: string,
  maxTries = 8,
): Promise<{ line: number; head: string; text: string; rechained: boolean }> {
  let text = lineText;
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await client.appendTest(runId, text);
      return { line: r.line, head: r.head, text, rechained: text !== lineText };
    } catch (err) {
      if (!(err instanceof TransferError) || err.status !== 409 || attempt >= maxTries) throw err;
    }
    const remote = parseTestsLog(await client.tests(runId));
    const broken = remote.problems.find((p) => p.code === "tests-hash" || p.code === "tests-chain" || p.code === "tests-not-json");
    if (broken) throw new TransferError(`the collector's tests of ${runId} fail their check (${broken.message}); not appending to them`, 409);
    let rec: unknown;
    try {
      rec = parseLossless(lineText);
    } catch {
      rec = undefined;
    }
    if (!rec || typeof rec !== "object" || Array.isArray(rec)) throw new TransferError(`a local test result of ${runId} is not a JSON object`, 422);
    text = dumps(chainTest(rec as Record<string, unknown>, remote.head), "file");
  }
}

/**
 * Writes the collector's record of who wrote the run and each of `tests`' lines (the collector's
 * tests.jsonl bytes, read just before) into a run folder; nothing from a collector that keeps none.
 * Read after the tests, it covers every line of them (lines appended since are left off).
 */
export async function saveWriters(client: CollectorClient, runId: string, dir: string, tests: Buffer): Promise<void> {
  const writers = await client.writers(runId);
  const file = path.join(dir, WRITERS_FILE);
  if (!writers) return fs.rmSync(file, { force: true });
  fs.writeFileSync(`${file}.tmp`, writersText({ owner: writers.owner, tests: writers.tests.slice(0, fileLines(tests)) }));
  fs.renameSync(`${file}.tmp`, file);
}

/** How many lines a reader counts in a file (blank ones included). */
function fileLines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) n++;
  return buf.length && buf[buf.length - 1] !== 0x0a ? n + 1 : n;
}

/** The lines of a file (without their newlines); a last line without one is kept. */
function linesOf(buf: Buffer): string[] {
  const text = buf.toString("utf8");
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

export interface PushResult {
  runId: string;
  /** Events sent (after those the collector already held). */
  sent: number;
  /** Events the collector already held. */
  skipped: number;
  tests: number;
}

/** Sends one run folder to a collector. Throws a TransferError naming the reason on any refusal. */
export async function pushRun(dir: string, client: CollectorClient, opts: { maxBatchEvents?: number; maxBatchBytes?: number } = {}): Promise<PushResult> {
  const file = path.join(dir, "events.jsonl");
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    throw new TransferError(`${dir} is not a run folder (no events.jsonl)`);
  }
  const lines = linesOf(buf).filter((l) => l.trim() !== "");
  if (!lines.length) throw new TransferError(`${dir}: events.jsonl holds no events`);
  const first = parseJsonObject(lines[0]);
  const runId = first && typeof first.run_id === "string" ? first.run_id : undefined;
  if (!runId || !RUN_ID_RE.test(runId)) throw new TransferError(`${dir}: the first event names no valid run_id`);

  // resume after what the collector holds, when it is this run's prefix
  let from = 0;
  const have = await client.getRun(runId);
  if (have?.head) {
    const at = parseJsonObject(lines[have.head.seq] ?? "");
    if (!at || at.hash !== have.head.hash)
      throw new TransferError(`the collector already holds a different run ${runId} (its event ${have.head.seq} differs from this folder's)`, 409);
    from = have.head.seq + 1;
  }
  const maxEvents = opts.maxBatchEvents ?? 1000;
  const maxBytes = opts.maxBatchBytes ?? 8 << 20;
  const sentBlobs = new Set<string>();
  const blobText = (ref: string): string | undefined => {
    try {
      const v = parseLossless(fs.readFileSync(path.join(dir, "blobs", ref.slice(7) + ".json"), "utf8"));
      return v && typeof v === "object" && !Array.isArray(v) && "v" in v ? dumps((v as { v: unknown }).v, "canonical") : undefined;
    } catch {
      return undefined;
    }
  };
  let i = from;
  while (i < lines.length) {
    const evs: string[] = [];
    const blobs: string[] = [];
    let bytes = 0;
    while (i < lines.length && evs.length < maxEvents && (bytes < maxBytes || !evs.length)) {
      const line = lines[i];
      const e = parseJsonObject(line);
      if (e) {
        for (const r of refsOf(e)) {
          if (!isRef(r) || sentBlobs.has(r)) continue;
          const t = blobText(r);
          if (t === undefined) continue; // the collector names what is missing
          sentBlobs.add(r);
          blobs.push(`${JSON.stringify(r)}:${t}`);
          bytes += t.length;
        }
      }
      evs.push(line);
      bytes += line.length;
      i++;
    }
    await client.ingest(`{"events":[${evs.join(",")}],"blobs":{${blobs.join(",")}}}`);
  }

  // tests: the lines the collector does not hold yet, in order
  let tests = 0;
  let tbuf: Buffer | undefined;
  try {
    tbuf = fs.readFileSync(path.join(dir, "tests.jsonl"));
  } catch {
    /* none */
  }
  if (tbuf?.length) {
    const local = linesOf(tbuf).filter((l) => l.trim() !== "");
    const remote = linesOf(await client.tests(runId)).filter((l) => l.trim() !== "");
    for (let k = 0; k < remote.length; k++) {
      if (remote[k] !== local[k]) throw new TransferError(`the collector's tests of ${runId} differ from this folder's at line ${k + 1}`, 409);
    }
    for (const l of local.slice(remote.length)) {
      await client.appendTest(runId, l);
      tests++;
    }
  }
  return { runId, sent: lines.length - from, skipped: from, tests };
}

/**
 * Writes a collector's run into OUT/<run_id> (replacing an older copy) and verifies it, with the
 * collector's record of who wrote the run and each test line (core/log/writers.ts).
 */
export async function pullRun(
  client: CollectorClient,
  runId: string,
  outRoot: string,
): Promise<{ dir: string; events: number; blobs: number; tests: number; foreignTests: number; ok: boolean; problems: string[] }> {
  if (!RUN_ID_RE.test(runId)) throw new TransferError(`not a run id: ${JSON.stringify(runId)}`);
  const row = await client.getRun(runId);
  if (!row) throw new TransferError(`the collector holds no run ${runId}`, 404);
  fs.mkdirSync(outRoot, { recursive: true });
  const dir = path.join(outRoot, runId);
  const tmp = fs.mkdtempSync(path.join(outRoot, `.${runId}.pull-`));
  try {
    fs.mkdirSync(path.join(tmp, "blobs"));
    const fd = fs.openSync(path.join(tmp, "events.jsonl"), "w");
    let from = 0;
    try {
      for (;;) {
        const r = await client.events(runId, from);
        fs.writeSync(fd, r.bytes);
        from += r.count;
        if (!r.count || from > r.headSeq) break;
      }
    } finally {
      fs.closeSync(fd);
    }
    let blobs = 0;
    for (let after = ""; ;) {
      const page = await client.blobPage(runId, after);
      for (const [ref, text] of page.blobs) {
        if (!isRef(ref)) throw new TransferError(`the collector sent a blob named ${JSON.stringify(String(ref).slice(0, 80))}`);
        fs.writeFileSync(path.join(tmp, "blobs", ref.slice(7) + ".json"), text);
        blobs++;
      }
      if (!page.next) break;
      after = page.next;
    }
    const tests = await client.tests(runId);
    if (tests.length) fs.writeFileSync(path.join(tmp, "tests.jsonl"), tests);
    await saveWriters(client, runId, tmp, tests);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
    const v = verifyRun(dir);
    const errors = v.problems.filter((p) => p.severity === "error" && !(p.code === "no-run-end" && row.status === "running"));
    const foreignTests = readTestsLog(dir).records.filter((t) => t.foreign).length;
    return { dir, events: from, blobs, tests: linesOf(tests).length, foreignTests, ok: errors.length === 0, problems: errors.map((p) => p.message) };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
