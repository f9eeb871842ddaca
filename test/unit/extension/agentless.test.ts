/**
 * The extension on runs it can replay without their program (rung 2): which rung a replay climbs,
 * where its calls go (the user's endpoint and key, never the run's), the runs tree offering it,
 * and the real worker (dist/worker.js) replaying a gateway recording with no program and no tool
 * run, against a seeded fake model over real HTTP.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readRun } from "../../../core/log/reader";
import { runInWorker, WorkerFailure } from "../../../core/replay/client";
import { sha256File } from "../../../core/replay/approval";
import { agentlessApis, decideRung, resolveEndpoint, userBaseUrl } from "../../../extension/logic/agentless";
import { analyseRun } from "../../../extension/logic/analysis";
import { describeResult } from "../../../extension/logic/replay";
import { runItem } from "../../../extension/logic/tree";
import { recordDesk } from "../agentless/desk";
import { REFERENCE_RUNS, ROOT, tmpDir } from "./helpers";

const WORKER = path.join(ROOT, "dist", "worker.js");
const USER_KEY = "sk-user-key-from-secret-storage";
const NO_ENV = {} as NodeJS.ProcessEnv;

let recorded: FakeLlm;
let replay: FakeLlm;
let tmp: string;
let dir: string;
let marker: string;

beforeAll(async () => {
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 0.7 });
  tmp = tmpDir("cw-ext-agentless-");
  marker = path.join(tmp, "executed.log");
  dir = await recordDesk(recorded.url, path.join(tmp, "runs"), marker);
});
afterAll(async () => {
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("which rung a replay from the editor climbs", () => {
  it("a gateway run is replayable in the tree and the pickers, though it names no program", () => {
    const run = readRun(dir);
    const a = analyseRun(run);
    expect(a.program).toBe("");
    expect(a.agentless).toBe(true);
    const item = runItem({ dir, root: tmp, analysis: a } as never);
    expect(item.contextValue).toBe("causeway.run.replayable");
    expect(String(item.tooltip)).toContain("rung 2");
    // a run without its model requests and without a program is not
    const demo = readRun(path.join(REFERENCE_RUNS, "demo-seed0"));
    expect(analyseRun(demo).agentless).toBe(false);
  });

  it("no program: rung 2, with the API it calls and the address it was recorded against", () => {
    const d = decideRung("", tmp, readRun(dir), [], false);
    expect(d).toEqual({ kind: "agentless", rung: 2, apis: [{ api: "openai.chat", recordedUrl: `${recorded.url}/v1/chat/completions` }] });
  });

  it("a gateway run's program not approved: rung 2 without asking; approved: rung 3 as before", () => {
    const root = tmpDir("cw-ext-agentless-root-");
    fs.writeFileSync(path.join(root, "agent.cjs"), "exports.SYSTEM = {};\n");
    const file = path.join(root, "agent.cjs");
    expect(decideRung("agent.cjs:SYSTEM", root, readRun(dir), [], true).kind).toBe("agentless");
    const approval = { program: "agent.cjs:SYSTEM", file, sha256: sha256File(file), root, at: "2026-12-01T00:00:00Z" };
    expect(decideRung("agent.cjs:SYSTEM", root, readRun(dir), [approval], false)).toEqual({
      kind: "program",
      approval: { program: approval.program, file, sha256: approval.sha256 },
    });
    // a changed file is not approved any more: rung 2 again, nothing asked
    fs.appendFileSync(file, "// changed\n");
    expect(decideRung("agent.cjs:SYSTEM", root, readRun(dir), [approval], false).kind).toBe("agentless");
    // the same requests recorded by the preload: the program could re-run, so it is offered first
    const run = readRun(dir);
    const preload = { ...run, events: run.events.map((e) => (e.type === "run.start" ? { ...e, meta: { recorded_by: "causeway preload" } } : e)) };
    expect(decideRung("agent.cjs:SYSTEM", root, preload, [], false).kind).toBe("ask");
  });

  it("a run without full requests keeps the approval question, or says why neither rung works", () => {
    const demo = readRun(path.join(REFERENCE_RUNS, "demo-seed0"));
    const none = decideRung("", tmp, demo, [], false);
    expect(none.kind).toBe("refuse");
    expect((none as { reason: string }).reason).toContain("has no recorded request");
    const root = tmpDir("cw-ext-agentless-root-");
    fs.writeFileSync(path.join(root, "agent.cjs"), "exports.SYSTEM = {};\n");
    expect(decideRung("agent.cjs:SYSTEM", root, demo, [], false).kind).toBe("ask");
  });
});

describe("where a replay without the program sends its calls", () => {
  const apis = () => agentlessApis(readRun(dir)) as { api: string; recordedUrl?: string }[];

  it("with nothing set, it names the recorded upstream and how to set an endpoint, and sends nothing", () => {
    const r = resolveEndpoint(apis(), {}, NO_ENV);
    expect("error" in r).toBe(true);
    const msg = (r as { error: string }).error;
    expect(msg).toContain(`"${recorded.url}/v1/chat/completions"`);
    expect(msg).toContain("causeway.replay.baseUrl");
    expect(msg).toContain("Set Replay API Key");
    expect(msg).toContain("OPENAI_BASE_URL");
    // a key alone would go to the official endpoint, not the upstream the run names: still refused
    expect("error" in resolveEndpoint(apis(), { apiKey: USER_KEY }, { OPENAI_API_KEY: "k" })).toBe(true);
  });

  it("the user's setting and stored key, else the host's environment", () => {
    expect(resolveEndpoint(apis(), { baseUrl: replay.openaiBaseURL, apiKey: USER_KEY }, NO_ENV)).toEqual({
      endpoint: { baseUrl: replay.openaiBaseURL, apiKey: USER_KEY },
    });
    // the environment is the worker's too: nothing to pass
    expect(resolveEndpoint(apis(), {}, { OPENAI_BASE_URL: replay.openaiBaseURL })).toEqual({ endpoint: {} });
    // a run recorded against the official endpoint needs only a key
    expect(resolveEndpoint([{ api: "openai.chat", recordedUrl: "https://api.openai.com/v1/chat/completions" }], {}, { OPENAI_API_KEY: "k" })).toEqual({
      endpoint: {},
    });
    expect("error" in resolveEndpoint([{ api: "anthropic.messages" }], {}, { OPENAI_API_KEY: "k" })).toBe(true);
    expect(resolveEndpoint(apis(), { baseUrl: "file:///etc/passwd" }, NO_ENV)).toEqual({ error: expect.stringContaining("not an http(s) URL") });
  });

  it("a workspace's settings can't choose the base URL (only the user's value counts)", () => {
    expect(userBaseUrl({ globalValue: " http://localhost:8080/v1 " })).toBe("http://localhost:8080/v1");
    expect(userBaseUrl({ workspaceValue: "http://evil.example/v1", workspaceFolderValue: "http://evil.example/v1" } as never)).toBeUndefined();
    expect(userBaseUrl({ globalValue: "" })).toBeUndefined();
    expect(userBaseUrl(undefined)).toBeUndefined();
  });
});

describe("the worker replays a gateway run without its program", () => {
  it("a test at rung 2: the user's endpoint and key, no tool run, nothing to the recorded upstream", async () => {
    expect(fs.existsSync(WORKER)).toBe(true);
    const ran = fs.readFileSync(marker, "utf8");
    const seen = recorded.requests.length;
    const progress: number[] = [];
    const r = (await runInWorker(
      {
        op: "test",
        run: dir,
        program: "",
        root: tmp,
        agentless: { baseUrl: replay.openaiBaseURL, apiKey: USER_KEY },
        intervention: "input:tool:fetch_doc*",
        target: "tool=send_email,arg~vendor-compliance",
        n: 10,
        nMax: 40,
      },
      { workerPath: WORKER, env: { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" }, onProgress: (p) => progress.push(p.done) },
    )) as { verdict: string; rung: number; assumptions: string[]; off_tape_actions: number };
    expect(r.rung).toBe(2);
    expect(r.verdict).toBe("causal");
    expect(r.assumptions.join(" ")).toContain("no tool ran and no program was started");
    expect(progress.length).toBeGreaterThan(0);
    expect(describeResult("test", r)).toContain("rung 2");
    expect(fs.readFileSync(marker, "utf8")).toBe(ran);
    expect(recorded.requests.length).toBe(seen);
    expect(replay.requests.length).toBeGreaterThan(0);
    expect(replay.requests.every((q) => q.headers.authorization === `Bearer ${USER_KEY}`)).toBe(true);
  }, 120_000);

  it("refuses live tools, and without an endpoint names the recorded upstream instead of calling it", async () => {
    const seen = recorded.requests.length;
    const live = runInWorker(
      {
        op: "test",
        run: dir,
        program: "",
        root: tmp,
        agentless: { baseUrl: replay.openaiBaseURL },
        intervention: "input:tool:fetch_doc*",
        target: "tool=send_email",
        liveTools: true,
      },
      { workerPath: WORKER },
    );
    await expect(live).rejects.toMatchObject({ kind: "replay", message: expect.stringContaining("live tools need the program") });
    const none = runInWorker(
      { op: "test", run: dir, program: "", root: tmp, agentless: {}, intervention: "input:tool:fetch_doc*", target: "tool=send_email" },
      { workerPath: WORKER, env: { OPENAI_BASE_URL: "", OPENAI_API_KEY: USER_KEY } },
    );
    await expect(none).rejects.toBeInstanceOf(WorkerFailure);
    await expect(none).rejects.toMatchObject({ message: expect.stringContaining(`recorded against "${recorded.url}/v1/chat/completions"`) });
    expect(recorded.requests.length).toBe(seen);
  }, 60_000);

  it("without the agentless request, a run with no program is still refused (nothing runs)", async () => {
    const r = runInWorker(
      { op: "test", run: dir, program: "", root: tmp, intervention: "input:tool:fetch_doc*", target: "tool=send_email" },
      { workerPath: WORKER },
    );
    await expect(r).rejects.toBeInstanceOf(WorkerFailure);
  }, 60_000);
});
