/**
 * The extension on a shared collector: "Causeway: Connect to a collector…" asks for the URL and a
 * token (kept in VS Code's secret storage, never in settings) and lists the collector's runs — a
 * page at a time from its runs table, with the filters of "Causeway: Filter collector runs…" — in
 * the Runs tree beside the workspace's. Listing pulls nothing: a run is opened when it is expanded
 * or clicked, then pulled into a cache folder in the extension's global storage (events by range,
 * blobs 500 per request) and verified — or, when the cache already holds it whole, verified there
 * — so alerts, diagnostics (on agent files that exist in the workspace), lenses and the
 * investigator work on it as on a local run. An open running run follows the read API's live tail
 * (server-sent events, reconnected from the last seq) and grows in place, blobs first. Test
 * results written into a cached run's tests.jsonl (Run test, Find the cause) are appended to the
 * collector's copy; when someone else's landed first (409), ours is re-chained onto the collector's
 * head and the cache takes the collector's chain. An open run also takes the results others add on
 * the collector (a teammate's, a job's of the team's workers: logic/remote-tests.ts), every few
 * seconds, so every window with the run open shows them; its jobs: logic/team-jobs.ts.
 */
import * as vscode from "vscode";
import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { refsOf } from "../core/log/events";
import { isRef } from "../core/log/hash";
import { parseJsonObject } from "../core/log/pyjson";
import { verifyRun } from "../core/log/verify";
import { CollectorClient, appendTestLine, followRun, pullRun, saveWriters } from "../core/store/transfer";
import type { RunFilter, RunRow } from "../core/store/types";
import type { RemoteRuns } from "./logic/tree";
import type { Services } from "./services";
import { COMMANDS, INTERNAL_COMMANDS } from "./logic/command-ids";
import { TESTS_POLL_MS, takeRemoteTests } from "./logic/remote-tests";
import { TeamJobs } from "./logic/team-jobs";

const STATE_KEY = "causeway.collector.url";
const secretKey = (url: string) => `causeway.collector.token:${url}`;

/** A collector's run opened into the cache. */
interface Opened {
  runId: string;
  dir: string;
  /** Events in the cached events.jsonl. */
  events: number;
  ended: boolean;
  /** Lines of the cached tests.jsonl the collector holds. */
  testsSynced: number;
  /** Sending test results (one at a time per run); `again` when more were written meanwhile. */
  syncing?: Promise<void>;
  again: boolean;
  follow?: AbortController;
  /** Asks the collector for others' test results while the run is open. */
  poll?: ReturnType<typeof setInterval>;
}

const nonEmptyLines = (buf: Buffer): string[] =>
  buf
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");

export class CollectorConnection implements vscode.Disposable, RemoteRuns {
  private client: CollectorClient | undefined;
  private url: string | undefined;
  private filter: RunFilter = { limit: 50 };
  private next: string | null = null;
  /** Listed runs not opened yet, by the folder each opens into. */
  private readonly rows = new Map<string, RunRow>();
  private readonly opened = new Map<string, Opened>();
  private readonly opening = new Map<string, Promise<boolean>>();
  private readonly emitter = new vscode.EventEmitter<void>();
  /** The listing changed (connected, a page added, filtered, a run opened). */
  readonly onDidChange = this.emitter.event;
  private readonly storeSub: vscode.Disposable;
  readonly cacheRoot: string;
  /** Whether this connection's collector runs jobs for its token (asked once per connection). */
  private jobs: { api: TeamJobs; available: Promise<boolean | undefined>; refused?: string } | undefined;

  constructor(
    private readonly s: Services,
    private readonly testsPollMs = TESTS_POLL_MS,
  ) {
    this.cacheRoot = path.join(s.context.globalStorageUri.fsPath, "collectors");
    // a cached run changed (a test result written by a replay, say): send what the collector lacks
    this.storeSub = s.store.onDidChange((c) => {
      for (const d of c.changed) {
        const o = this.opened.get(d);
        if (o) this.syncTests(o);
      }
    });
  }

  /** Cache folders are runs of the connection, not of the workspace (discovery keeps them). */
  owns(dir: string): boolean {
    return dir.startsWith(this.cacheRoot + path.sep);
  }

  folder(): string | undefined {
    return this.url ? this.cacheDir() : undefined;
  }

  label(): string {
    return vscode.l10n.t("collector {0}", this.url ?? "");
  }

  listed(): ReadonlyMap<string, RunRow> {
    return this.rows;
  }

  private root(): string {
    return (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.scheme === "file")?.uri.fsPath ?? this.cacheRoot;
  }

  /** Reconnects to the collector of the last session, if its token is still stored. */
  async restore(): Promise<void> {
    const url = this.s.context.globalState.get<string>(STATE_KEY);
    if (!url) return;
    const token = await this.s.context.secrets.get(secretKey(url));
    if (token) await this.connect(url, token, false);
  }

  async connectInteractive(): Promise<void> {
    const url = await vscode.window.showInputBox({
      title: vscode.l10n.t("Connect to a collector (1/2): URL"),
      prompt: vscode.l10n.t("The collector's URL (causeway serve)"),
      value: this.url ?? this.s.context.globalState.get<string>(STATE_KEY) ?? "http://127.0.0.1:7788",
      ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/\S+$/i.test(v.trim()) ? undefined : "an http(s) URL"),
    });
    if (!url) return;
    const token = await vscode.window.showInputBox({
      title: vscode.l10n.t("Connect to a collector (2/2): token"),
      prompt: vscode.l10n.t("A token with the read scope (and ingest, to append test results); kept in VS Code's secret storage"),
      password: true,
      ignoreFocusOut: true,
    });
    if (!token) return;
    await this.connect(url.trim().replace(/\/+$/, ""), token, true);
  }

  private async connect(url: string, token: string, interactive: boolean): Promise<void> {
    const client = new CollectorClient(url, token);
    try {
      await client.listRuns({ limit: 1 });
    } catch (err) {
      const msg = vscode.l10n.t("Causeway: cannot connect to {0}: {1}", url, (err as Error).message);
      this.s.log.error(msg);
      if (interactive) void vscode.window.showErrorMessage(msg);
      return;
    }
    this.clearRuns();
    this.client = client;
    this.url = url;
    this.jobs = undefined;
    await this.s.context.secrets.store(secretKey(url), token);
    await this.s.context.globalState.update(STATE_KEY, url);
    this.s.log.info(`connected to the collector at ${url}`);
    await this.loadPage(undefined);
    if (interactive)
      void vscode.window.showInformationMessage(
        this.rows.size === 1
          ? vscode.l10n.t("Causeway: connected to {0} (1 run)", url)
          : vscode.l10n.t("Causeway: connected to {0} ({1} runs)", url, this.rows.size),
      );
  }

  async disconnect(): Promise<void> {
    if (this.url) await this.s.context.secrets.delete(secretKey(this.url));
    await this.s.context.globalState.update(STATE_KEY, undefined);
    this.clearRuns();
    this.client = undefined;
    this.url = undefined;
    this.jobs = undefined;
    this.emitter.fire();
  }

  private clearRuns(): void {
    for (const o of this.opened.values()) {
      o.follow?.abort();
      clearInterval(o.poll);
      this.s.store.remove(o.dir);
    }
    this.opened.clear();
    this.rows.clear();
    this.next = null;
  }

  private cacheDir(): string {
    return path.join(
      this.cacheRoot,
      createHash("sha256")
        .update(this.url ?? "")
        .digest("hex")
        .slice(0, 16),
    );
  }

  /** Lists a page (the first with no cursor): rows of the runs table only, nothing pulled. */
  private async loadPage(cursor: string | undefined): Promise<void> {
    if (!this.client) return;
    const page = await this.client.listRuns({ ...this.filter, cursor });
    this.next = page.next;
    const dir = this.cacheDir();
    for (const row of page.runs) {
      const d = path.join(dir, row.run_id);
      if (!this.opened.has(d)) this.rows.set(d, row);
    }
    this.emitter.fire();
  }

  /** Opens a listed run (expanded or clicked in the tree): once, however often it is asked. */
  open(dir: string): Promise<boolean> {
    if (this.opened.has(dir)) return Promise.resolve(true);
    let p = this.opening.get(dir);
    if (!p) {
      p = this.doOpen(dir).finally(() => this.opening.delete(dir));
      this.opening.set(dir, p);
    }
    return p;
  }

  private async doOpen(dir: string): Promise<boolean> {
    const listed = this.rows.get(dir);
    const client = this.client;
    if (!listed || !client) return false;
    const t0 = performance.now();
    try {
      const row = (await client.getRun(listed.run_id)) ?? listed;
      let events: number;
      let tests: number;
      const cached = this.cachedWhole(dir, row);
      if (cached) {
        ({ events, tests } = cached);
        this.s.log.info(`opened collector run ${row.run_id} from the cache (verified) in ${(performance.now() - t0).toFixed(0)} ms`);
      } else {
        const r = await pullRun(client, row.run_id, path.dirname(dir));
        if (!r.ok) this.s.log.warn(`collector run ${row.run_id} fails verify after pulling: ${r.problems[0]}`);
        ({ events, tests } = r);
        this.s.log.info(
          `opened collector run ${row.run_id}: pulled ${r.events} events and ${r.blobs} blobs, verified, in ${(performance.now() - t0).toFixed(0)} ms`,
        );
      }
      if (client !== this.client) return false; // disconnected meanwhile
      const o: Opened = { runId: row.run_id, dir, events, ended: row.status === "ended", testsSynced: tests, again: false };
      this.rows.delete(dir);
      this.opened.set(dir, o);
      this.s.store.add(dir, this.root(), true);
      this.emitter.fire();
      if (!o.ended) this.follow(o, client);
      o.poll = setInterval(() => void this.pollTests(o), this.testsPollMs);
      return true;
    } catch (err) {
      const msg = vscode.l10n.t("Causeway: cannot open collector run {0}: {1}", listed.run_id, (err as Error).message);
      this.s.log.error(msg);
      void vscode.window.showErrorMessage(msg);
      return false;
    }
  }

  /**
   * The cache's copy, when it already holds the whole of an ended run as the collector has it (the
   * same last event, as many test lines) and verifies; undefined otherwise (then it is pulled).
   */
  private cachedWhole(dir: string, row: RunRow): { events: number; tests: number } | undefined {
    if (row.status !== "ended" || !row.head) return undefined;
    try {
      const lines = nonEmptyLines(fs.readFileSync(path.join(dir, "events.jsonl")));
      const last = parseJsonObject(lines[lines.length - 1] ?? "");
      if (lines.length !== row.head.seq + 1 || last?.seq !== row.head.seq || last.hash !== row.head.hash) return undefined;
      const testsFile = path.join(dir, "tests.jsonl");
      const tests = fs.existsSync(testsFile) ? nonEmptyLines(fs.readFileSync(testsFile)).length : 0;
      if (tests !== row.tests || !verifyRun(dir).ok) return undefined;
      return { events: lines.length, tests };
    } catch {
      return undefined;
    }
  }

  /** Grows an open running run in place from the collector's live tail, until run.end. */
  private follow(o: Opened, client: CollectorClient): void {
    const ac = new AbortController();
    o.follow = ac;
    void followRun(client, o.runId, o.events, {
      signal: ac.signal,
      onRetry: (err, ms) => this.s.log.warn(`following collector run ${o.runId}: ${err.message}; reconnecting in ${ms} ms`),
      onEvents: async (r) => {
        await this.fetchBlobs(client, o, r.bytes); // blobs first: the tree never sees a ref without its blob
        fs.appendFileSync(path.join(o.dir, "events.jsonl"), r.bytes);
        o.events += r.count;
        this.s.store.refresh(o.dir);
      },
    }).then(
      ({ ended }) => {
        if (!ended) return;
        o.ended = true;
        this.s.log.info(`collector run ${o.runId} ended (${o.events} events)`);
        this.s.store.refresh(o.dir);
      },
      (err) => this.s.log.error(`following collector run ${o.runId}: ${(err as Error).message}`),
    );
  }

  private async fetchBlobs(client: CollectorClient, o: Opened, bytes: Buffer): Promise<void> {
    const want = new Set<string>();
    for (const line of bytes.toString("utf8").split("\n")) {
      const e = line ? parseJsonObject(line) : undefined;
      if (!e) continue;
      for (const ref of refsOf(e)) if (isRef(ref) && !fs.existsSync(path.join(o.dir, "blobs", ref.slice(7) + ".json"))) want.add(ref);
    }
    const todo = [...want];
    const worker = async () => {
      for (let ref = todo.shift(); ref; ref = todo.shift())
        fs.writeFileSync(path.join(o.dir, "blobs", ref.slice(7) + ".json"), await client.blob(o.runId, ref));
    };
    await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
  }

  async loadMore(): Promise<void> {
    if (!this.client) return void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: connect to a collector first"));
    if (!this.next) return void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: every run of the collector that matches the filter is listed"));
    await this.loadPage(this.next);
  }

  async filterInteractive(): Promise<void> {
    if (!this.client) return void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: connect to a collector first"));
    const text = await vscode.window.showInputBox({
      title: vscode.l10n.t("Filter collector runs"),
      prompt: vscode.l10n.t("{0} (empty: all)", "program=TEXT tool=NAME source=NAME status=running|ended high since=ISO until=ISO"),
      value: Object.entries(this.filter)
        .filter(([k, v]) => k !== "limit" && k !== "cursor" && v !== undefined)
        .map(([k, v]) => (k === "highAlert" ? "high" : `${k}=${v}`))
        .join(" "),
      ignoreFocusOut: true,
    });
    if (text === undefined) return;
    const f: RunFilter = { limit: 50 };
    for (const part of text.split(/\s+/).filter(Boolean)) {
      const [k, ...rest] = part.split("=");
      const v = rest.join("=");
      if (k === "high") f.highAlert = true;
      else if (k === "status" && (v === "running" || v === "ended")) f.status = v;
      else if (k === "program" || k === "tool" || k === "source" || k === "since" || k === "until") f[k] = v;
      else return void vscode.window.showErrorMessage(vscode.l10n.t("Causeway: unknown filter {0}", part));
    }
    this.filter = f;
    this.clearRuns();
    await this.loadPage(undefined);
  }

  /** Sends the cached run's new test results to the collector, one run at a time. */
  private syncTests(o: Opened): void {
    if (o.syncing) {
      o.again = true;
      return;
    }
    o.syncing = (async () => {
      do {
        o.again = false;
        await this.syncOnce(o);
      } while (o.again && this.opened.get(o.dir) === o);
    })()
      .catch((err) => this.s.log.error(`collector run ${o.runId}: test results not sent: ${(err as Error).message}`))
      .finally(() => (o.syncing = undefined));
  }

  private async syncOnce(o: Opened): Promise<void> {
    const client = this.client;
    if (!client) return;
    const file = path.join(o.dir, "tests.jsonl");
    let lines: string[];
    try {
      lines = nonEmptyLines(fs.readFileSync(file));
    } catch {
      return;
    }
    let rechained = false;
    while (o.testsSynced < lines.length) {
      const r = await appendTestLine(client, o.runId, lines[o.testsSynced]);
      o.testsSynced++;
      rechained ||= r.rechained;
      this.s.log.info(
        `appended test ${r.line} of ${o.runId} to the collector${r.rechained ? " (re-chained onto the collector's head: another result landed there first)" : ""}`,
      );
    }
    if (rechained) {
      // the cache takes the collector's chain (theirs and ours), then any line written meanwhile
      const remote = await client.tests(o.runId);
      const meanwhile = nonEmptyLines(fs.readFileSync(file)).slice(o.testsSynced);
      fs.writeFileSync(file, Buffer.concat([remote, Buffer.from(meanwhile.map((l) => l + "\n").join(""), "utf8")]));
      // and the collector's record of who wrote them: another's line must not read as this machine's
      await saveWriters(client, o.runId, o.dir, remote);
      o.testsSynced = nonEmptyLines(remote).length;
      this.s.store.refresh(o.dir);
    }
  }

  /**
   * Takes the results others added on the collector since (logic/remote-tests.ts), unless the
   * cache is sending its own (sending takes the collector's chain as it goes).
   */
  private pollTests(o: Opened): Promise<void> {
    const client = this.client;
    if (!client || o.syncing || this.opened.get(o.dir) !== o) return o.syncing ?? Promise.resolve();
    const p = (async () => {
      const r = await takeRemoteTests(client, o.runId, o.dir, o.testsSynced);
      if ("refused" in r) this.s.log.warn(`collector run ${o.runId}: ${r.refused}`);
      if (!("taken" in r) || client !== this.client) return;
      this.s.log.info(`collector run ${o.runId}: took ${r.taken - o.testsSynced} new test result(s) from the collector`);
      o.testsSynced = r.taken;
      this.s.store.refresh(o.dir);
    })()
      .catch((err) => this.s.log.warn(`collector run ${o.runId}: new test results not read: ${(err as Error).message}`))
      .finally(() => {
        o.syncing = undefined;
        if (o.again) this.syncTests(o);
      });
    o.syncing = p;
    return p;
  }

  /** Takes the collector's new test results of an open run now (a job of ours just finished). */
  async refreshTests(dir: string): Promise<void> {
    const o = this.opened.get(dir);
    if (!o) return;
    while (o.syncing) await o.syncing;
    await this.pollTests(o);
  }

  /**
   * The collector's run a cache folder holds, and the collector's job routes, when this
   * connection's token may submit jobs there (undefined: replays of it run on this machine).
   */
  async teamJobs(dir: string): Promise<{ runId: string; jobs: TeamJobs } | undefined> {
    const o = this.opened.get(dir);
    const client = this.client;
    if (!o || !client) return undefined;
    this.jobs ??= (() => {
      const api = new TeamJobs(client);
      return { api, available: api.available().catch(() => undefined) };
    })();
    const j = this.jobs;
    const ok = await j.available;
    // no answer is not a no: asked again next time
    if (ok === undefined && this.jobs === j) this.jobs = undefined;
    return ok && !j.refused ? { runId: o.runId, jobs: j.api } : undefined;
  }

  /** The collector refused this connection's token a job (no jobs scope): stop offering its workers. */
  refuseJobs(why: string): void {
    if (this.jobs) this.jobs.refused = why;
  }

  dispose(): void {
    for (const o of this.opened.values()) {
      o.follow?.abort();
      clearInterval(o.poll);
    }
    this.storeSub.dispose();
    this.emitter.dispose();
  }
}

export function registerCollector(s: Services): CollectorConnection {
  const conn = new CollectorConnection(s);
  s.context.subscriptions.push(
    conn,
    vscode.commands.registerCommand(COMMANDS.connectCollector, () => conn.connectInteractive()),
    vscode.commands.registerCommand(COMMANDS.disconnectCollector, () => conn.disconnect()),
    vscode.commands.registerCommand(COMMANDS.filterCollector, () => conn.filterInteractive()),
    vscode.commands.registerCommand(COMMANDS.moreCollectorRuns, () => conn.loadMore()),
    // a listed run clicked in the Runs view: open it, then show it in the investigator
    vscode.commands.registerCommand(INTERNAL_COMMANDS.openCollectorRun, async (dir: unknown) => {
      if (typeof dir === "string" && (await conn.open(dir))) await vscode.commands.executeCommand(COMMANDS.reveal, { run: dir });
    }),
  );
  return conn;
}
