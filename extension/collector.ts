/**
 * The extension on a shared collector: "Causeway: Connect to a collector…" asks for the URL and a
 * token (kept in VS Code's secret storage, never in settings), lists the collector's runs — a page
 * at a time, with the filters of "Causeway: Filter collector runs…" — and adds them to the Runs
 * tree beside the workspace's. Each listed run is pulled into a cache folder in the extension's
 * global storage and verified, so alerts, diagnostics (on agent files that exist in the
 * workspace), lenses and the investigator work on it as on a local run; a running run is tailed
 * (new events appended in place, blobs first); test results written locally into a cached run's
 * tests.jsonl (Run test, Find the cause) are appended to the collector's copy, with the
 * collector's chain checks.
 */
import * as vscode from "vscode";
import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { refsOf } from "../core/log/events";
import { isRef } from "../core/log/hash";
import { parseJsonObject } from "../core/log/pyjson";
import { CollectorClient, TransferError, pullRun } from "../core/store/transfer";
import type { RunFilter, RunRow } from "../core/store/types";
import type { Services } from "./services";

const STATE_KEY = "causeway.collector.url";
const secretKey = (url: string) => `causeway.collector.token:${url}`;
const POLL_MS = 1000;

interface Cached {
  runId: string;
  dir: string;
  /** Events in the cached events.jsonl. */
  events: number;
  ended: boolean;
  /** tests.jsonl lines the collector holds. */
  testsSynced: number;
  busy: boolean;
}

export class CollectorConnection implements vscode.Disposable {
  private client: CollectorClient | undefined;
  private url: string | undefined;
  private filter: RunFilter = { limit: 50 };
  private next: string | null = null;
  private readonly cached = new Map<string, Cached>();
  private timer: ReturnType<typeof setInterval> | undefined;
  readonly cacheRoot: string;

  constructor(private readonly s: Services) {
    this.cacheRoot = path.join(s.context.globalStorageUri.fsPath, "collectors");
  }

  /** Cache folders are runs of the connection, not of the workspace (discovery keeps them). */
  owns(dir: string): boolean {
    return dir.startsWith(this.cacheRoot + path.sep);
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
    const token = await vscode.window.showInputBox({ title: vscode.l10n.t("Connect to a collector (2/2): token"), prompt: vscode.l10n.t("A token with the read scope (and ingest, to append test results); kept in VS Code's secret storage"), password: true, ignoreFocusOut: true });
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
    this.client = client;
    this.url = url;
    await this.s.context.secrets.store(secretKey(url), token);
    await this.s.context.globalState.update(STATE_KEY, url);
    this.s.log.info(`connected to the collector at ${url}`);
    this.clearRuns();
    await this.loadPage(undefined);
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
    if (interactive) void vscode.window.showInformationMessage(this.cached.size === 1 ? vscode.l10n.t("Causeway: connected to {0} (1 run)", url) : vscode.l10n.t("Causeway: connected to {0} ({1} runs)", url, this.cached.size));
  }

  async disconnect(): Promise<void> {
    if (this.url) await this.s.context.secrets.delete(secretKey(this.url));
    await this.s.context.globalState.update(STATE_KEY, undefined);
    this.client = undefined;
    this.url = undefined;
    this.clearRuns();
  }

  private clearRuns(): void {
    for (const c of this.cached.values()) this.s.store.remove(c.dir);
    this.cached.clear();
    this.next = null;
  }

  private cacheDir(): string {
    return path.join(this.cacheRoot, createHash("sha256").update(this.url ?? "").digest("hex").slice(0, 16));
  }

  /** Lists a page (the first with no cursor) and opens its runs. */
  private async loadPage(cursor: string | undefined): Promise<void> {
    if (!this.client) return;
    const page = await this.client.listRuns({ ...this.filter, cursor });
    this.next = page.next;
    for (const row of page.runs) await this.open(row);
  }

  /** Pulls a run into the cache (verified) and adds it to the tree. */
  private async open(row: RunRow): Promise<void> {
    if (!this.client || this.cached.has(row.run_id)) return;
    try {
      const r = await pullRun(this.client, row.run_id, this.cacheDir());
      if (!r.ok) {
        this.s.log.warn(`collector run ${row.run_id} fails verify after pulling: ${r.problems[0]}`);
      }
      this.cached.set(row.run_id, { runId: row.run_id, dir: r.dir, events: r.events, ended: row.status === "ended", testsSynced: r.tests, busy: false });
      this.s.store.add(r.dir, this.root(), true);
    } catch (err) {
      this.s.log.error(`cannot open collector run ${row.run_id}: ${(err as Error).message}`);
    }
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
      prompt: "program=TEXT tool=NAME source=NAME status=running|ended high since=ISO until=ISO (empty: all)",
      value: Object.entries(this.filter).filter(([k, v]) => k !== "limit" && k !== "cursor" && v !== undefined).map(([k, v]) => (k === "highAlert" ? "high" : `${k}=${v}`)).join(" "),
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

  /** Tails running runs and sends local test results to the collector. */
  private async poll(): Promise<void> {
    if (!this.client) return;
    for (const c of this.cached.values()) {
      if (c.busy) continue;
      c.busy = true;
      try {
        if (!c.ended) await this.tail(c);
        await this.syncTests(c);
      } catch (err) {
        this.s.log.warn(`collector run ${c.runId}: ${(err as Error).message}`);
      } finally {
        c.busy = false;
      }
    }
  }

  private async tail(c: Cached): Promise<void> {
    const r = await this.client!.events(c.runId, c.events);
    if (!r.count) {
      c.ended = r.ended;
      return;
    }
    // blobs first, so the tree never sees a ref without its blob
    const text = r.bytes.toString("utf8");
    for (const line of text.split("\n")) {
      const e = line ? parseJsonObject(line) : undefined;
      if (!e) continue;
      for (const ref of refsOf(e)) {
        if (!isRef(ref)) continue;
        const file = path.join(c.dir, "blobs", ref.slice(7) + ".json");
        if (!fs.existsSync(file)) fs.writeFileSync(file, await this.client!.blob(c.runId, ref));
      }
    }
    fs.appendFileSync(path.join(c.dir, "events.jsonl"), r.bytes);
    c.events += r.count;
    c.ended = r.ended && c.events > r.headSeq;
  }

  private async syncTests(c: Cached): Promise<void> {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(path.join(c.dir, "tests.jsonl"));
    } catch {
      return;
    }
    const lines = buf.toString("utf8").split("\n").filter((l) => l.trim() !== "");
    while (c.testsSynced < lines.length) {
      try {
        await this.client!.appendTest(c.runId, lines[c.testsSynced]);
        this.s.log.info(`appended test ${c.testsSynced + 1} of ${c.runId} to the collector`);
      } catch (err) {
        if (err instanceof TransferError && err.status === 409) {
          // the collector's chain moved on (another user's test): skip this line; re-pull to see theirs
          this.s.log.warn(`${err.message}`);
        } else throw err;
      }
      c.testsSynced++;
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

export function registerCollector(s: Services): CollectorConnection {
  const conn = new CollectorConnection(s);
  s.context.subscriptions.push(
    conn,
    vscode.commands.registerCommand("causeway.connectCollector", () => conn.connectInteractive()),
    vscode.commands.registerCommand("causeway.disconnectCollector", () => conn.disconnect()),
    vscode.commands.registerCommand("causeway.filterCollector", () => conn.filterInteractive()),
    vscode.commands.registerCommand("causeway.moreCollectorRuns", () => conn.loadMore()),
  );
  return conn;
}
