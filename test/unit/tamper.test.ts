import { describe, it, expect, beforeEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { verifyRun } from "../../core/log/verify";
import { readRun } from "../../core/log/reader";
import { parseLossless, dumps } from "../../core/log/pyjson";
import { eventHash } from "../../core/log/hash";

const SRC = path.resolve(__dirname, "../fixtures/causeway-py-demo/demo-seed0");
let dir: string;
const lines = () => fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n").filter(Boolean);
const write = (ls: string[], trailing = "\n") => fs.writeFileSync(path.join(dir, "events.jsonl"), ls.join("\n") + trailing);
const codes = () =>
  verifyRun(dir)
    .problems.filter((p) => p.severity === "error")
    .map((p) => `${p.code}@${p.line ?? "-"}`);

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-tamper-"));
  fs.cpSync(SRC, dir, { recursive: true });
});

describe("verify names where a run was damaged", () => {
  it("one field edited", () => {
    const ls = lines();
    ls[15] = ls[15].replace('"tool": "issue_refund"', '"tool": "issue_refunds"');
    write(ls);
    expect(codes()).toEqual(["hash@16"]);
  });
  it("one line deleted", () => {
    const ls = lines();
    ls.splice(12, 1);
    write(ls);
    const c = codes();
    expect(c).toContain("seq@13");
    expect(c).toContain("chain@13");
  });
  it("two lines swapped", () => {
    const ls = lines();
    [ls[5], ls[6]] = [ls[6], ls[5]];
    write(ls);
    const c = codes();
    expect(c).toEqual(expect.arrayContaining(["seq@6", "seq@7", "chain@6"]));
  });
  it("a blob forged", () => {
    const f = path.join(dir, "blobs/b0f16d4e237b2b7a96a0535fe6f6fcc111d4bf27c0cbf6434653055ad0dca216.json");
    fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace("audit@vendor-compliance.example", "audit@elsewhere.example"));
    const r = verifyRun(dir);
    expect(r.ok).toBe(false);
    expect(r.problems.find((p) => p.code === "blob-hash")?.line).toBe(8);
  });
  it("a blob removed", () => {
    fs.rmSync(path.join(dir, "blobs/b0f16d4e237b2b7a96a0535fe6f6fcc111d4bf27c0cbf6434653055ad0dca216.json"));
    const r = verifyRun(dir);
    expect(r.problems.find((p) => p.code === "missing-blob")).toMatchObject({ line: 8, seq: 7 });
  });
  it("a blob that is not JSON", () => {
    fs.writeFileSync(path.join(dir, "blobs/b0f16d4e237b2b7a96a0535fe6f6fcc111d4bf27c0cbf6434653055ad0dca216.json"), "{not json");
    expect(verifyRun(dir).problems.map((p) => p.code)).toContain("blob-not-json");
  });
  it("the last line cut in half: reported, the intact events still read", () => {
    const ls = lines();
    const last = ls.pop()!;
    write([...ls, last.slice(0, last.length >> 1)], "");
    const run = readRun(dir, { checkBlobs: true });
    expect(run.problems.filter((p) => p.severity === "error").map((p) => `${p.code}@${p.line}`)).toEqual(["cut-off@20", "truncated@undefined"]); // run.end cut, yet the run has tests: not a run being written
    expect(run.events).toHaveLength(19);
    expect(run.complete).toBe(false);
  });
  it("one event edited and re-hashed", () => {
    const ls = lines();
    const ev = parseLossless(ls[16]) as Record<string, unknown>;
    ev.tool = "send_sms";
    ev.hash = eventHash(ev);
    ls[16] = dumps(ev, "file");
    write(ls);
    expect(codes()).toEqual(["chain@18"]);
  });
  it("a line that isn't JSON and an unknown event type", () => {
    const ls = lines();
    ls.splice(10, 0, "garbage {");
    write(ls);
    const run = readRun(dir);
    expect(run.problems.find((p) => p.code === "not-json")?.line).toBe(11);
    expect(run.events).toHaveLength(20);
  });
  it("a ref that is a path is refused and never read", () => {
    const ls = lines();
    const ev = parseLossless(ls[5]) as Record<string, unknown>;
    ev.ref = "../../../../etc/passwd";
    ev.hash = eventHash(ev);
    ls[5] = dumps(ev, "file");
    write(ls);
    const r = verifyRun(dir);
    expect(r.problems.map((p) => p.code)).toEqual(expect.arrayContaining(["malformed", "bad-ref"]));
    expect(JSON.stringify(r.problems)).not.toContain("root:");
  });
  it("never throws on arbitrary bytes", () => {
    fs.writeFileSync(path.join(dir, "events.jsonl"), Buffer.from([0xff, 0x00, 0x7b, 0x0a, 0x22, 0x0a, 0x5b, 0x5b]));
    const r = verifyRun(dir);
    expect(r.ok).toBe(false);
  });
  it("an edited or removed test in tests.jsonl", async () => {
    const { appendTest, readTestsLog } = await import("../../core/log/testslog");
    fs.rmSync(path.join(dir, "tests.jsonl"));
    appendTest(dir, { intervention: "input:a", verdict: "causal", effect: 0.8 });
    appendTest(dir, { intervention: "input:b", verdict: "ruled-out", effect: 0.0 });
    appendTest(dir, { intervention: "input:c", verdict: "ruled-out", effect: 0.05 });
    expect(readTestsLog(dir).problems).toEqual([]);
    const f = path.join(dir, "tests.jsonl");
    const t = fs.readFileSync(f, "utf8").split("\n");
    fs.writeFileSync(f, [t[0], t[2], ""].join("\n"));
    expect(readTestsLog(dir).problems.map((p) => `${p.code}@${p.line}`)).toEqual(["tests-chain@2"]);
    fs.writeFileSync(f, [t[0], t[1].replace("ruled-out", "causal"), t[2], ""].join("\n"));
    expect(readTestsLog(dir).problems.map((p) => `${p.code}@${p.line}`)).toEqual(["tests-hash@2"]);
    expect(verifyRun(dir).ok).toBe(false);
  });
});

describe("the parallel blob check (large runs) reaches the same verdicts", () => {
  const both = (d: string) => {
    const seq = verifyRun(d, { parallelMin: 1e9 });
    const par = verifyRun(d, { parallelMin: 1 });
    const key = (r: ReturnType<typeof verifyRun>) => r.problems.map((p) => `${p.code}@${p.line ?? "-"}@${p.ref ?? "-"}`).sort();
    expect(key(par)).toEqual(key(seq));
    expect(par.ok).toBe(seq.ok);
    return par;
  };
  it("an intact run", () => {
    expect(both(dir).ok).toBe(true);
  });
  it("a forged, a removed, a non-JSON and an unreferenced forged blob", () => {
    const b = (h: string) => path.join(dir, "blobs", h + ".json");
    const note = b("b0f16d4e237b2b7a96a0535fe6f6fcc111d4bf27c0cbf6434653055ad0dca216");
    fs.writeFileSync(note, fs.readFileSync(note, "utf8").replace("audit@", "audit2@"));
    fs.rmSync(b("00a3997aa409ea30e8ec6054543c088279c76e3c4d6082f95293f9a5923e995c"));
    fs.writeFileSync(b("3e6434728e2298fb9841d7966a3e4dec5b54c26428286f9fa9f3c37746fd66db"), "{not json");
    fs.writeFileSync(b("f".repeat(64)), '{"v": "nobody names me"}');
    const r = both(dir);
    expect(
      r.problems
        .filter((p) => p.severity === "error")
        .map((p) => p.code)
        .sort(),
    ).toEqual(["blob-hash", "blob-hash", "blob-not-json", "missing-blob"]);
  });
  it("blobs with Python float forms are proven exactly, not called forged", async () => {
    const { System, pyFloat } = await import("../../core/index");
    const sys = new System({
      program: (rt) => void rt.agent("a").observe({ amount: pyFloat(89), tiny: 1e-5, big: 1e16 }, { source: "s" }),
      models: {},
      tools: {},
    });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "cw-par-"));
    const r = await sys.run({ seed: 0, outDir: out, runId: "floats" });
    expect(both(r.dir!).ok).toBe(true);
  });
});
