import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runInWorker, WorkerFailure } from "../../core/replay/client";
import { loadProgram, resolveProgram } from "../../core/replay/loader";
import { readTestsLog } from "../../core/log/testslog";
import { sha256File } from "../../core/replay/approval";

const ROOT = path.resolve(__dirname, "../..");
const WORKER = path.join(ROOT, "dist/worker.js");
const MISBEHAVING = "test/fixtures/programs/misbehaving.ts:SYSTEM";
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "cw-worker-"));

async function record(spec: string, seed = 0): Promise<string> {
  const prog = resolveProgram(spec, ROOT);
  const sys = await loadProgram(prog);
  const r = await sys.run({ seed, outDir: tmp(), root: prog.root });
  return r.dir!;
}

/** The request fields of a program the user approved: its string, resolved file and sha256. */
function approved(program: string) {
  const file = resolveProgram(program, ROOT).file;
  return { program, root: ROOT, approval: { program, file, sha256: sha256File(file) } };
}

describe("the out-of-process replay worker", () => {
  let run: string;
  beforeAll(async () => {
    expect(fs.existsSync(WORKER)).toBe(true);
    run = await record(MISBEHAVING);
  });

  it("runs a TypeScript program's test, streams progress and appends the result", async () => {
    const progress: number[] = [];
    const r = (await runInWorker(
      { op: "test", run, ...approved(MISBEHAVING), intervention: "input:web:page", target: "tool=send_email,arg~mallory", n: 10 },
      { workerPath: WORKER, onProgress: (p) => progress.push(p.done), env: { CAUSEWAY_FIXTURE_MODE: "none" } },
    )) as { verdict: string; n: number };
    expect(r.verdict).toBe("causal");
    expect(progress.at(-1)).toBe(r.n); // sequential: it stops as soon as the verdict is decisive
    expect(r.n).toBeLessThanOrEqual(10);
    expect(readTestsLog(run).records.map((t) => t.verdict)).toEqual(["causal"]);
  });

  it("runs a JavaScript (CommonJS) program's attribution", async () => {
    let dir = "";
    for (let seed = 0; !dir && seed < 30; seed++) {
      const d = await record("test/fixtures/programs/plain.cjs:SYSTEM", seed);
      if (fs.readFileSync(path.join(d, "events.jsonl"), "utf8").includes('"tool": "forward"')) {
        const blobs = fs.readdirSync(path.join(d, "blobs")).map((f) => fs.readFileSync(path.join(d, "blobs", f), "utf8"));
        if (blobs.some((b) => b.includes('"to": "eve@evil.example"}') && b.startsWith('{"v": {"to"'))) dir = d;
      }
    }
    expect(dir).not.toBe("");
    const a = (await runInWorker(
      { op: "attribute", run: dir, ...approved("test/fixtures/programs/plain.cjs:SYSTEM"), target: "tool=forward,arg~eve@evil.example", n: 10, nMax: 40 },
      { workerPath: WORKER },
    )) as { causes: { spec: string }[] };
    expect(a.causes.map((c) => c.spec)).toEqual(["input:mail:inbox"]);
  });

  // Only the hanging program is meant to meet the time limit; the others end by themselves, so they
  // get a limit no loaded machine reaches (a 2 s limit there failed while the worker was starting).
  for (const [mode, kind, pattern, timeoutMs] of [
    ["throw", "replay", /crashed on purpose/, 300_000],
    ["exit", "crashed", /exited \(code 3\)/, 300_000],
    ["hang", "timeout", /did not finish within 2 s/, 2000],
  ] as const) {
    it(`a program that ${mode}s in replay ends the test with an error and writes nothing`, async () => {
      const dir = await record(MISBEHAVING);
      const before = fs.existsSync(path.join(dir, "tests.jsonl"));
      const err = await runInWorker(
        { op: "test", run: dir, ...approved(MISBEHAVING), intervention: "input:web:page", target: "tool=send_email", n: 5 },
        { workerPath: WORKER, timeoutMs, env: { CAUSEWAY_FIXTURE_MODE: mode } },
      ).catch((e) => e);
      expect(err).toBeInstanceOf(WorkerFailure);
      expect((err as WorkerFailure).kind).toBe(kind);
      expect((err as Error).message).toMatch(pattern);
      expect(before).toBe(false);
      expect(fs.existsSync(path.join(dir, "tests.jsonl"))).toBe(false);
    });
  }

  it("can be cancelled, and kills the worker", async () => {
    const dir = await record(MISBEHAVING);
    const ac = new AbortController();
    const p = runInWorker(
      { op: "test", run: dir, ...approved(MISBEHAVING), intervention: "input:web:page", target: "tool=send_email", n: 5 },
      { workerPath: WORKER, signal: ac.signal, env: { CAUSEWAY_FIXTURE_MODE: "hang" } },
    );
    setTimeout(() => ac.abort(), 300);
    await expect(p).rejects.toMatchObject({ kind: "cancelled" });
    expect(fs.existsSync(path.join(dir, "tests.jsonl"))).toBe(false);
  });

  it("refuses a program that is not approved, or approved with another file's hash, loading nothing", async () => {
    const err = await runInWorker(
      { op: "test", run, program: MISBEHAVING, root: ROOT, intervention: "input:web:page", target: "tool=send_email", n: 5 },
      { workerPath: WORKER, env: { CAUSEWAY_FIXTURE_MODE: "exit" } },
    ).catch((e) => e);
    expect(err).toMatchObject({ kind: "not-allowed" });
    const ok = approved(MISBEHAVING);
    const stale = await runInWorker(
      { op: "test", run, ...ok, approval: { ...ok.approval, sha256: "0".repeat(64) }, intervention: "input:web:page", target: "tool=send_email", n: 5 },
      { workerPath: WORKER, env: { CAUSEWAY_FIXTURE_MODE: "exit" } },
    ).catch((e) => e);
    expect(stale).toMatchObject({ kind: "not-allowed" });
    expect((stale as Error).message).toMatch(/changed since it was approved/);
  });

  it("reports a bad spec as a spec error", async () => {
    const err = await runInWorker(
      { op: "test", run, ...approved(MISBEHAVING), intervention: "nonsense", target: "tool=send_email", n: 5 },
      { workerPath: WORKER },
    ).catch((e) => e);
    expect(err).toMatchObject({ kind: "spec" });
    expect((err as Error).message).toMatch(/cannot parse "nonsense"/);
  });
});
