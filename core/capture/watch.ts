/**
 * `causeway watch ROOT`: report new alerts as runs are written (by a local Runtime, the gateway or
 * the collector). Each poll stats every run's events.jsonl and tests.jsonl and re-analyses only the
 * runs that changed, reading complete lines only, so a run caught mid-write never raises a false
 * integrity alert. Alerts present when watching starts are the baseline and are not reported.
 *
 * An optional webhook receives each new high alert as Slack-compatible JSON: its rule, title and
 * run — never the call's arguments or the traced value — with <, > and & escaped so a title can't
 * mention anyone. A post whose connection fails, times out or is answered 5xx or 429 is tried again
 * (4 attempts, 1, 2 and 4 s apart). At most 100 posts wait to be sent; more are dropped and counted.
 */
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { BlobStore } from "../log/blobs";
import { shown } from "../log/shown";
import { problem } from "../log/problems";
import type { RunData } from "../log/reader";
import { runFilesStamp } from "../log/run-dirs";
import { RunTail } from "../log/tail";
import { readTestsLog } from "../log/testslog";
import { investigateLite } from "../analysis/investigate";
import { listRuns } from "../analysis/influence";
import type { Alert } from "../analysis/types";

export interface WatchedAlert {
  run: string;
  dir: string;
  alert: Alert;
}

export interface WatchOptions {
  root: string;
  /** Poll interval (default 500 ms). */
  intervalMs?: number;
  /** POST each new high alert here. */
  webhook?: string;
  /** Called with each new alert (after the baseline). */
  onAlert?: (a: WatchedAlert) => void;
  /**
   * Called once, when the first poll has set the baseline, before any alert is reported: runs
   * written from then on are always reported.
   */
  onBaseline?: () => void;
  /** Report alerts present at start too (default false). */
  includeExisting?: boolean;
  /** A webhook post failed for good, after its retries (default: ignored). */
  onWebhookError?: (err: Error) => void;
  /** How long one webhook post may take (default 10 s). */
  webhookTimeoutMs?: number;
  /** The first retry's delay, doubled for each further one (default 1 s). */
  webhookRetryMs?: number;
}

/** What a webhook receives: rule, title, run; the text escaped for Slack. */
export function webhookPayload(w: WatchedAlert): Record<string, unknown> {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const title = w.alert.title.slice(0, 300);
  return {
    text: esc(`[causeway] ${w.alert.severity.toUpperCase()} ${w.alert.rule} in run ${w.run}: ${title}`),
    severity: w.alert.severity,
    rule: w.alert.rule,
    title: esc(title),
    run: w.run,
    seq: w.alert.seq,
    tool: w.alert.tool,
  };
}

/** One line for the terminal. */
export function alertLine(w: WatchedAlert): string {
  const a = w.alert;
  // run content shown as text: a title or detail holding terminal escapes or newlines cannot drive the terminal or fake a line
  return `${a.severity.toUpperCase().padEnd(6)} ${shown(w.run)} ${a.seq === null ? "run" : `#${a.seq}`} ${shown(a.title)}${a.detail ? `\n       ${shown(a.detail.slice(0, 300))}` : ""}`;
}

const alertKey = (a: Alert) => `${a.rule}\u0000${a.seq}\u0000${a.tool}\u0000${a.title}`;

interface Watched {
  tail: RunTail;
  stamp: string;
  known: Set<string>;
}

const MAX_WEBHOOK_QUEUE = 100;

export class AlertWatcher {
  private readonly runs = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private first = true;
  private polling = false;
  private readonly queue: Record<string, unknown>[] = [];
  private posting = false;
  /** Webhook posts dropped because 100 were already waiting. */
  dropped = 0;

  constructor(readonly opts: WatchOptions) {
    if (opts.webhook && !/^https?:\/\//i.test(opts.webhook)) throw new Error(`--webhook must be an http(s) URL, got ${opts.webhook}`);
  }

  /** Polls until stopped. The first poll sets the baseline (see onBaseline). */
  start(): void {
    const tick = () => {
      this.poll();
      this.timer = setTimeout(tick, this.opts.intervalMs ?? 500);
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One pass over ROOT; returns the new alerts it reported. */
  poll(): WatchedAlert[] {
    if (this.polling) return [];
    this.polling = true;
    const found: WatchedAlert[] = [];
    const baseline = this.first;
    try {
      for (const dir of listRuns(this.opts.root)) {
        const w = this.runs.get(dir) ?? { tail: new RunTail(dir), stamp: "", known: new Set<string>() };
        this.runs.set(dir, w);
        const stamp = runFilesStamp(dir);
        if (stamp === w.stamp) continue;
        w.stamp = stamp;
        w.tail.poll();
        const run = liveRunData(w.tail);
        let alerts: Alert[];
        try {
          alerts = investigateLite(run).alerts;
        } catch {
          continue; // a run that can't be analysed yet is looked at again when it changes
        }
        for (const a of alerts) {
          const k = alertKey(a);
          if (w.known.has(k)) continue;
          w.known.add(k);
          if (this.first && !this.opts.includeExisting) continue;
          found.push({ run: run.runId, dir, alert: a });
        }
      }
    } finally {
      this.first = false;
      this.polling = false;
    }
    if (baseline) this.opts.onBaseline?.();
    for (const w of found) {
      this.opts.onAlert?.(w);
      if (this.opts.webhook && w.alert.severity === "high") this.enqueue(webhookPayload(w));
    }
    return found;
  }

  /** Resolves when every queued webhook post has been attempted. */
  async drained(): Promise<void> {
    while (this.posting || this.queue.length) await new Promise((r) => setTimeout(r, 10));
  }

  private enqueue(payload: Record<string, unknown>): void {
    if (this.queue.length >= MAX_WEBHOOK_QUEUE) {
      this.dropped++;
      return;
    }
    this.queue.push(payload);
    if (!this.posting) void this.postAll();
  }

  private async postAll(): Promise<void> {
    this.posting = true;
    try {
      while (this.queue.length) {
        const p = this.queue.shift()!;
        for (let attempt = 1; ; attempt++) {
          try {
            await postWebhook(this.opts.webhook!, p, this.opts.webhookTimeoutMs ?? 10_000);
            break;
          } catch (err) {
            // a 4xx is the hook refusing this post: sending it again would not help
            const final = attempt >= WEBHOOK_ATTEMPTS || (err instanceof WebhookRefused && err.status < 500 && err.status !== 429);
            if (final) {
              this.opts.onWebhookError?.(err as Error);
              break;
            }
            await new Promise((r) => setTimeout(r, (this.opts.webhookRetryMs ?? 1000) * 2 ** (attempt - 1)));
          }
        }
      }
    } finally {
      this.posting = false;
    }
  }
}

/** A run as far as its complete lines go (a partial last line is still being written). */
export function liveRunData(tail: RunTail): RunData {
  const events = tail.events;
  const complete = events.some((e) => e.type === "run.end");
  const tests = readTestsLog(tail.dir);
  const problems = [...tail.parser.problems, ...tests.problems];
  if (events.length && !complete)
    problems.push(problem("no-run-end", "the run has no run.end event: it is still running, or was cut short", { file: "events.jsonl" }));
  const first = events.find((e) => typeof e.run_id === "string");
  return {
    dir: tail.dir,
    runId: first?.run_id ?? path.basename(tail.dir),
    events,
    problems,
    tests: tests.records,
    blobs: new BlobStore(tail.dir),
    complete,
    bytes: tail.position,
  };
}

/** A webhook post is tried this many times when the connection fails, times out or the hook answers 5xx or 429. */
const WEBHOOK_ATTEMPTS = 4;

/** The hook answered with an error status. */
class WebhookRefused extends Error {
  constructor(readonly status: number) {
    super(`webhook answered HTTP ${status}`);
  }
}

function postWebhook(url: string, payload: unknown, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(payload));
    const u = new URL(url);
    const req = (u.protocol === "https:" ? https : http).request(
      u,
      { method: "POST", headers: { "content-type": "application/json", "content-length": String(data.length) }, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on("end", () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new WebhookRefused(res.statusCode ?? 0))));
      },
    );
    req.on("timeout", () => req.destroy(new Error("webhook timed out")));
    req.on("error", reject);
    req.end(data);
  });
}
