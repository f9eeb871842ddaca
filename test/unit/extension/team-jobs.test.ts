/**
 * Run test and Find the cause "on the team's workers" from the editor, with real parts: a
 * throwaway PostgreSQL cluster, a real collector with its job routes, a real `causeway worker`
 * process (dist/cli.js), the demo's run pushed, and two extension windows — two
 * CollectorConnection instances, each with its own cache and runs store — where only VS Code's UI
 * is stubbed. One window submits; both end up showing the test, in caches that still verify.
 * Then what must not happen: a token without the jobs scope is never offered the workers, a
 * cancelled job stops on the collector, a collector's broken tests chain is not taken, a job never
 * carries anything of this machine.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

interface Ui {
  /** The user's causeway.replay.where. */
  where?: string;
  /** What the quick pick answers (undefined: dismissed). */
  pick?: string;
  asked: number;
  progress: string[];
  errors: string[];
}
const ui: Ui = vi.hoisted(() => ({ where: undefined, pick: "workers", asked: 0, progress: [], errors: [] }));

vi.mock("vscode", () => {
  class EventEmitter<T> {
    private readonly ls = new Set<(e: T) => void>();
    event = (l: (e: T) => void) => {
      this.ls.add(l);
      return { dispose: () => this.ls.delete(l) };
    };
    fire(e: T) {
      for (const l of [...this.ls]) l(e);
    }
    dispose() {
      this.ls.clear();
    }
  }
  const t = (m: string, ...a: unknown[]) => m.replace(/\{(\d+)\}/g, (_, i: string) => String(a[Number(i)]));
  return {
    EventEmitter,
    l10n: { t },
    ProgressLocation: { Notification: 15 },
    workspace: { workspaceFolders: [], getConfiguration: () => ({ inspect: () => ({ globalValue: ui.where }), get: () => undefined }) },
    window: {
      showErrorMessage: async (m: string) => void ui.errors.push(m),
      showInformationMessage: async () => undefined,
      showQuickPick: async (items: { value: string }[]) => {
        ui.asked++;
        return items.find((i) => i.value === ui.pick);
      },
      withProgress: async (
        _o: unknown,
        task: (p: { report(v: { message?: string }): void }, tok: { onCancellationRequested(f: () => void): { dispose(): void } }) => Promise<unknown>,
      ) => task({ report: (v) => void ui.progress.push(v.message ?? "") }, { onCancellationRequested: () => ({ dispose() {} }) }),
    },
  };
});

import { startCollector, type Collector } from "../../../core/capture/server";
import { PgStore } from "../../../core/store/postgres";
import { CollectorClient, pushRun } from "../../../core/store/transfer";
import { collectorJobs } from "../../../core/jobs/api";
import { checkSpec } from "../../../core/jobs/spec";
import { verifyRun } from "../../../core/log/verify";
import { CollectorConnection } from "../../../extension/collector";
import { TeamWorkers } from "../../../extension/team-workers";
import { ReplayService } from "../../../extension/replay";
import { WorkspaceRuns } from "../../../extension/logic/workspace-runs";
import { takeRemoteTests } from "../../../extension/logic/remote-tests";
import { TeamJobs, decideWhere, jobOf, jobSpecOf, whereSetting } from "../../../extension/logic/team-jobs";
import type { Services } from "../../../extension/services";
import { PgCluster, pgAvailable } from "../../pg/cluster";
import { tmpDir, until } from "./helpers";

const CLI = path.resolve("dist/cli.js");
const ADMIN = "team-admin-token";
const ALICE = "team-alice-token"; // may submit jobs
const BOB = "team-bob-token"; // reads, and appends his own results, but may not submit jobs
const TARGET = "tool=send_email,arg~vendor-compliance";
const REMOVE = "input:vendor:portal/notes.md";
const HAVE_PG = pgAvailable();
const tmp = tmpDir("cw-team-");
let cluster: PgCluster;
let collector: Collector;
let worker: ChildProcess | undefined;
let runId = "";
const windows: { conn: CollectorConnection; store: WorkspaceRuns }[] = [];

/** One extension window: its own global storage, secrets and runs store; only the UI is stubbed. */
function services(name: string, log: string[]): Services {
  const secrets = new Map<string, string>();
  const state = new Map<string, unknown>();
  const store = new WorkspaceRuns({ log: () => {} });
  const line = (level: string) => (m: string) => void log.push(`${level} ${m}`);
  return {
    context: {
      globalStorageUri: { fsPath: path.join(tmp, name) },
      secrets: {
        get: async (k: string) => secrets.get(k),
        store: async (k: string, v: string) => void secrets.set(k, v),
        delete: async (k: string) => void secrets.delete(k),
      },
      globalState: { get: (k: string) => state.get(k), update: async (k: string, v: unknown) => void state.set(k, v) },
      workspaceState: { get: () => undefined, update: async () => {} },
      extensionPath: process.cwd(),
    },
    store,
    log: { info: line("info"), warn: line("warn"), error: line("error"), show: () => {} },
    sites: undefined,
    settings: () => ({ n: 8, nMax: 30 }),
  } as unknown as Services;
}

/** A window connected with `token` (as a restored session: URL in state, token in secrets), the run opened. */
async function openWindow(name: string, token: string, url = collector.url): Promise<{ s: Services; conn: CollectorConnection; dir: string; log: string[] }> {
  const log: string[] = [];
  const s = services(name, log);
  await s.context.globalState.update("causeway.collector.url", url);
  await s.context.secrets.store(`causeway.collector.token:${url}`, token);
  const conn = new CollectorConnection(s, 100);
  windows.push({ conn, store: s.store });
  await conn.restore();
  const dir = [...conn.listed()].find(([, row]) => row.run_id === runId)?.[0];
  expect(dir, log.join("\n")).toBeDefined();
  expect(await conn.open(dir!)).toBe(true);
  return { s, conn, dir: dir!, log };
}

const testLines = (dir: string) =>
  (fs.existsSync(path.join(dir, "tests.jsonl")) ? fs.readFileSync(path.join(dir, "tests.jsonl"), "utf8") : "")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  if (!HAVE_PG) return;
  cluster = await PgCluster.start();
  collector = await startCollector({
    store: new PgStore(cluster.url),
    token: ADMIN,
    tokens: [
      { token: ALICE, scopes: ["jobs", "read", "ingest"], principal: "alice" },
      { token: BOB, scopes: ["read", "ingest"], principal: "bob" },
    ],
    port: 0,
    jobs: await collectorJobs(cluster.url),
  });
  const out = path.join(tmp, "rec");
  const r = spawnSync(process.execPath, [CLI, "record", "causeway:demo", "--seed", "0", "--out", out, "--json"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  const dir = JSON.parse(r.stdout).run as string;
  runId = path.basename(dir);
  await pushRun(dir, new CollectorClient(collector.url, ADMIN));
  worker = spawn(process.execPath, [CLI, "worker", "--store", cluster.url, "--pair-timeout-s", "20", "--quiet"], { stdio: ["ignore", "ignore", "pipe"] });
  worker.stderr!.on("data", () => {});
}, 180_000);

afterAll(async () => {
  worker?.kill("SIGKILL");
  for (const w of windows) {
    w.conn.dispose();
    w.store.dispose();
  }
  await collector?.close();
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!HAVE_PG)("Run test on the team's workers, from two windows", () => {
  it("one window submits; the result shows there, and the other window takes the test from the collector", async () => {
    const a = await openWindow("alice-1", ALICE);
    const b = await openWindow("bob-1", BOB);
    // the one path every replay of the editor takes (commands, the investigator)
    const replay = new ReplayService(a.s);
    replay.setElsewhere(new TeamWorkers(a.s, a.conn));
    const job = { op: "test" as const, run: a.dir, intervention: REMOVE, target: TARGET };
    const jobs = new TeamJobs(new CollectorClient(collector.url, ALICE));
    const submitted = async () =>
      ((await (await new CollectorClient(collector.url, ALICE).request("GET", "/v1/jobs")).json()) as { jobs: unknown[] }).jobs.length;
    ui.where = undefined;
    // the question dismissed: nothing runs anywhere
    ui.pick = undefined;
    let asked = ui.asked;
    expect(await replay.run(job, { title: "Run test" })).toMatchObject({ ok: false, cancelled: true });
    expect(ui.asked).toBe(asked + 1); // "ask" by default: the quick pick was shown
    expect(await submitted()).toBe(0);
    ui.pick = "workers";
    asked = ui.asked;
    const seen: string[] = [];
    const out = await replay.run(job, { title: "Run test", onProgress: (p) => seen.push(p.phase) });
    expect(ui.asked).toBe(asked + 1);
    expect(await submitted()).toBe(1);
    expect(out.ok, JSON.stringify(out) + a.log.join("\n")).toBe(true);
    if (!out.ok) return;
    const r = out.result as { intervention: string; target: string; n: number; verdict: string; job?: string };
    expect([r.intervention, r.target]).toEqual([REMOVE, TARGET]);
    expect(r.n).toBeGreaterThanOrEqual(8);
    expect(out.message).toMatch(/on the team's workers: asked by alice, run by \S+\)/);
    expect(seen.length).toBeGreaterThan(0); // the job's progress reached the investigator's callback
    expect((await jobs.get(/submitted job ([0-9a-f-]{36})/.exec(a.log.join("\n"))![1])).status).toBe("done");
    // the job system appended the test for alice; the submitting window's cache holds it now
    const mine = testLines(a.dir).filter((l) => l.asked_by === "alice");
    expect(mine).toHaveLength(1);
    expect([mine[0].intervention, mine[0].verdict, mine[0].n]).toEqual([r.intervention, r.verdict, r.n]);
    expect(
      verifyRun(a.dir).ok,
      verifyRun(a.dir)
        .problems.map((p) => p.message)
        .join("; "),
    ).toBe(true);
    // the other window, which did nothing, takes it from the collector while the run is open
    await until(() => testLines(b.dir).some((l) => l.job === mine[0].job), 60_000, "the other window to show the job's test");
    expect(testLines(b.dir)).toEqual(testLines(a.dir));
    expect(
      verifyRun(b.dir).ok,
      verifyRun(b.dir)
        .problems.map((p) => p.message)
        .join("; "),
    ).toBe(true);
    await until(
      () => (b.s.store.runData(b.dir)?.tests ?? []).some((t) => (t as { job?: string }).job === mine[0].job),
      10_000,
      "the other window's runs store to read it",
    );
  }, 240_000);

  it("a token that may not submit jobs is never offered the workers; the replay stays on this machine", async () => {
    const b = await openWindow("bob-2", BOB);
    const team = new TeamWorkers(b.s, b.conn);
    const asked = ui.asked;
    ui.where = "workers"; // even when the user's setting says so
    expect(await team.where({ op: "attribute", run: b.dir, target: TARGET })).toBe("local");
    expect(ui.asked).toBe(asked);
    // and asked outright, the collector refuses bob's token: an error, nothing queued
    await expect(new TeamJobs(new CollectorClient(collector.url, BOB)).submit({ kind: "test", run_id: runId, target: TARGET, remove: REMOVE })).rejects.toThrow(
      /jobs scope/,
    );
    // a run of this machine (not a collector's) is never offered either
    expect(await team.where({ op: "test", run: path.join(tmp, "rec", runId), intervention: REMOVE, target: TARGET })).toBe("local");
    ui.where = undefined;
  }, 60_000);

  it("cancelling follows through: the job stops on the collector and no verdict is returned", async () => {
    const a = await openWindow("alice-3", ALICE);
    const team = new TeamWorkers(a.s, a.conn);
    const ac = new AbortController();
    const out = await team.run(
      { op: "attribute", run: a.dir, target: TARGET, n: 10, nMax: 80 },
      { title: "Find the cause", signal: ac.signal, onProgress: () => ac.abort() },
    );
    expect(out).toMatchObject({ ok: false, cancelled: true });
    const jobs = new TeamJobs(new CollectorClient(collector.url, ALICE));
    const id = /submitted job ([0-9a-f-]{36})/.exec(a.log.join("\n"))![1];
    const j = await until2(async () => {
      const v = await jobs.get(id);
      return v.status === "cancelled" || v.status === "done" || v.status === "failed" ? v : undefined;
    });
    expect(j.status).toBe("cancelled");
  }, 120_000);
});

/** Waits for a state (polling), never for a time. */
async function until2<T>(f: () => Promise<T | undefined>, limitMs = 60_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("gave up waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("what a job and the collector's answers may carry", () => {
  it("a job carries the run, target, removal and sample sizes only, and the collector's checks accept it", () => {
    const s = { n: 8, nMax: 30 };
    const t = jobSpecOf({ op: "test", run: "/cache/x", intervention: REMOVE, target: TARGET }, "demo-seed0", s);
    expect(t).toEqual({ kind: "test", run_id: "demo-seed0", target: TARGET, remove: REMOVE, n: 8, n_max: 30 });
    expect(checkSpec(t)).toEqual(t);
    const f = jobSpecOf({ op: "attribute", run: "/cache/x", target: TARGET, suspects: ["input:web:*"], n: 5 }, "demo-seed0", s);
    expect(checkSpec(f)).toEqual(f);
    expect(Object.keys(f as object).sort()).toEqual(["kind", "n", "n_max", "run_id", "suspects", "target"]);
    expect(jobSpecOf({ op: "test", run: "/x", intervention: ["input:a", "input:b"], target: TARGET }, "r", s)).toMatch(/this machine only/);
    expect(jobSpecOf({ op: "fixCheck", run: "/x", fix: [], harm: TARGET }, "r", s)).toMatch(/this machine only/);
    expect(jobSpecOf({ op: "replay", run: "/x" }, "r", s)).toMatch(/this machine only/);
  });

  it("where: this machine unless offered; a workspace's value is never read", () => {
    expect(decideWhere("workers", false)).toBe("local");
    expect(decideWhere("ask", true)).toBe("ask");
    expect(decideWhere(whereSetting({ globalValue: "workers" }), true)).toBe("workers");
    expect(whereSetting({ workspaceValue: "workers" } as { globalValue?: unknown })).toBe("ask");
    expect(whereSetting({ globalValue: "elsewhere" })).toBe("ask");
  });

  it("a collector's job answer is read as untrusted data", () => {
    expect(() => jobOf({ id: "../../etc", status: "done", run_id: "r" })).toThrow(/not a job/);
    const j = jobOf({
      id: "0f0e0d0c-0b0a-4909-a807-060504030201",
      status: "done",
      run_id: "r",
      workers: ["w1", 7, { x: 1 }],
      progress: { tests: "x", pairs: -3, model_calls: 5 },
      result: [1],
      error: 9,
    });
    expect(j).toMatchObject({ workers: ["w1"], progress: { tests: 0, pairs: 0, model_calls: 5 }, result: null, error: null });
  });

  it("a collector whose tests chain is broken: the cache keeps its own and says why", async () => {
    const good = path.join(tmp, "broken-cache");
    fs.mkdirSync(good, { recursive: true });
    fs.writeFileSync(path.join(good, "tests.jsonl"), "");
    const edited =
      JSON.stringify({
        intervention: "input:x",
        target: "tool=y",
        verdict: "causal",
        hash: "sha256:" + "0".repeat(64),
        prev_hash: "sha256:" + "0".repeat(64),
      }) + "\n";
    const server = http.createServer((req, res) => {
      if (req.url === "/v1/runs/r1") return void res.end(JSON.stringify({ run_id: "r1", status: "ended", head: null, tests: 1 }));
      if (req.url === "/v1/runs/r1/tests") return void res.end(edited);
      res.statusCode = 404;
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const client = new CollectorClient(`http://127.0.0.1:${port}`, "t");
      const r = await takeRemoteTests(client, "r1", good, 0);
      expect(r).toMatchObject({ refused: expect.stringMatching(/fail their check/) });
      expect(fs.readFileSync(path.join(good, "tests.jsonl"), "utf8")).toBe("");
      // and a cache holding a result of its own not sent yet is left alone (sending re-chains it)
      fs.writeFileSync(path.join(good, "tests.jsonl"), edited);
      expect(await takeRemoteTests(client, "r1", good, 0)).toEqual({ skipped: "local-unsent" });
      // a collector without job routes offers no workers
      expect(await new TeamJobs(client).available()).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
    // and one that does not answer is asked again later, not taken for a no
    const gone = new CollectorClient(`http://127.0.0.1:${port}`, "t");
    expect(await new TeamJobs(gone).available()).toBeUndefined();
  });
});
