/**
 * Issue 11, crashes: run folders shaped to break the reader or an analysis. Each is read, verified,
 * investigated (full and lite), graphed and tainted without a throw, and the damage is reported as
 * a problem where there is damage.
 */
import { describe, it, expect, afterAll, vi } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { copyRun, deepLine, events, indexOf, nested, putBlobText, reseal } from "./hostile";
import { analyseEverything } from "./analyse";
import { readRun } from "../../../core/log/reader";
import { investigateLite } from "../../../core/analysis/investigate";

vi.setConfig({ testTimeout: 600_000 }); // many runs analysed: no timing, only a hang guard

const made: string[] = [];
const fresh = () => {
  const d = copyRun();
  made.push(d);
  return d;
};
afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe("deep nesting", () => {
  it("an event line nested 5,000 deep is a too-deep problem on its line; the rest stays readable", () => {
    const dir = fresh();
    const evs = events(dir);
    const i = indexOf(evs, "action");
    const ls = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n").filter(Boolean);
    ls[i] = deepLine(evs[i], "extra", 5000, evs[i].prev_hash as string);
    fs.writeFileSync(path.join(dir, "events.jsonl"), ls.join("\n") + "\n");
    const r = analyseEverything(dir);
    expect(r.ok).toBe(false);
    const run = readRun(dir);
    expect(run.problems.find((p) => p.code === "too-deep")).toMatchObject({ line: i + 1 });
    expect(run.events.length).toBe(ls.length - 1);
  });
  it("a correctly hashed blob nested 6,000 deep: verify notes it, alerts and the investigation do not crash", () => {
    const dir = fresh();
    const evs = events(dir);
    const i = indexOf(evs, "action");
    evs[i].args_ref = putBlobText(dir, nested(6000, '{"to":"x@y.example"}'));
    reseal(dir, evs);
    fs.rmSync(path.join(dir, "tests.jsonl"));
    const r = analyseEverything(dir);
    expect(r.problems).toContain("blob-too-deep");
    expect(r.ok).toBe(true); // its hash matches: the log is intact, the value is just not loaded
    expect(r.problems.filter((c) => c !== "blob-too-deep" && c !== "missing-blob")).toEqual([]);
  });
  it("tests.jsonl with a line nested 5,000 deep", () => {
    const dir = fresh();
    fs.appendFileSync(path.join(dir, "tests.jsonl"), `{"x": ${nested(5000)}}\n`);
    const r = analyseEverything(dir);
    expect(r.problems).toContain("tests-not-json");
  });
});

describe("keys from a run are never looked up on a prototype", () => {
  for (const t of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
    it(`"type": "${t}"`, () => {
      const dir = fresh();
      const evs = events(dir);
      evs[indexOf(evs, "action")].type = t;
      reseal(dir, evs);
      const r = analyseEverything(dir);
      expect(r.problems).toContain("unknown-type");
    });
  }
  it("agent, tool, source and model named after Object.prototype members", () => {
    const dir = fresh();
    const evs = events(dir);
    for (const e of evs) {
      if (e.type === "action") e.tool = "__proto__";
      if (e.type === "input") e.source = "constructor";
      if (e.type === "decision") e.model = "toString";
      if (e.agent !== "run") e.agent = "hasOwnProperty";
      if (e.type === "message") e.to = "valueOf";
    }
    reseal(dir, evs);
    expect(() => analyseEverything(dir)).not.toThrow();
  });
});

describe("fields holding objects with their own toString", () => {
  const bad = { toString: 1, valueOf: 2 };
  const fields: [string, string][] = [
    ["action", "id"],
    ["action", "tool"],
    ["action", "agent"],
    ["action", "decision"],
    ["action", "mode"],
    ["action", "status"],
    ["decision", "model"],
    ["decision", "purpose"],
    ["decision", "id"],
    ["input", "source"],
    ["input", "trust"],
    ["input", "kind"],
    ["message", "to"],
    ["agent.start", "role"],
    ["agent.start", "parent"],
    ["run.start", "program"],
    ["run.end", "outcome"],
    ["action", "site"],
    ["decision", "status"],
    ["run.start", "run_id"],
    ["action", "ts"],
    ["run.start", "meta"],
  ];
  for (const [type, field] of fields) {
    it(`${type}.${field} = {"toString": 1}`, () => {
      const dir = fresh();
      const evs = events(dir);
      const i = evs.findIndex((e) => e.type === type);
      if (i < 0) return;
      evs[i][field] = field === "meta" ? { evidence_alerts: [{ title: bad, detail: bad }] } : field === "site" ? { file: bad, line: bad } : bad;
      reseal(dir, evs);
      expect(() => analyseEverything(dir)).not.toThrow();
    });
  }
  it("every field of every event", () => {
    const dir = fresh();
    const evs = events(dir).map((e) => {
      const x: Record<string, unknown> = { ...e };
      for (const k of Object.keys(x)) if (!["seq", "prev_hash", "hash", "type", "schema"].includes(k)) x[k] = bad;
      return x;
    });
    reseal(dir, evs);
    expect(() => analyseEverything(dir)).not.toThrow();
  });
  it("context items whose fields are such objects", () => {
    const dir = fresh();
    const evs = events(dir);
    for (const e of evs)
      if (e.type === "decision")
        e.context = (e.context as Record<string, unknown>[]).map((c) => ({ ...c, source: bad, kind: bad, trust: bad, from_event: bad }));
    reseal(dir, evs);
    expect(() => analyseEverything(dir)).not.toThrow();
  });
});

describe("type swaps", () => {
  it("context that is a number, a string, an object", () => {
    for (const v of [7, "ctx", { a: 1 }]) {
      const dir = fresh();
      const evs = events(dir);
      evs[indexOf(evs, "decision")].context = v;
      reseal(dir, evs);
      const r = analyseEverything(dir);
      expect(r.problems).toContain("malformed");
    }
  });
  it("every field swapped to every JSON type", () => {
    for (const v of [null, 0, -1.5, true, "", [], {}, [1, [2]], { toString: "x" }]) {
      const dir = fresh();
      const evs = events(dir).map((e) => {
        const x: Record<string, unknown> = { ...e };
        for (const k of Object.keys(x)) if (!["seq", "prev_hash", "hash"].includes(k)) x[k] = v;
        return x;
      });
      reseal(dir, evs);
      expect(() => analyseEverything(dir)).not.toThrow();
    }
  });
});

describe("files that are not files", () => {
  it("events.jsonl a directory", () => {
    const dir = fresh();
    fs.rmSync(path.join(dir, "events.jsonl"));
    fs.mkdirSync(path.join(dir, "events.jsonl"));
    const run = readRun(dir, { checkBlobs: true });
    expect(run.problems[0]).toMatchObject({ code: "io", severity: "error" });
    expect(run.problems[0].message).toMatch(/directory/);
    expect(() => investigateLite(run)).not.toThrow();
  });
  it("tests.jsonl a directory", () => {
    const dir = fresh();
    fs.rmSync(path.join(dir, "tests.jsonl"));
    fs.mkdirSync(path.join(dir, "tests.jsonl"));
    const r = analyseEverything(dir);
    expect(r.ok).toBe(false);
    expect(r.problems).toContain("io");
  });
  it("tests.jsonl records with odd shapes", () => {
    const dir = fresh();
    const odd: Record<string, unknown>[] = [
      { toString: 1, scope: { toString: 1 }, intervention: { toString: 1 }, target: { toString: 1 } },
      { scope: "run", intervention: 5, target: [], verdict: { toString: 1 }, ci: "x", n: "y", p_with: {}, p_without: [] },
      { scope: "run", intervention: "input:*", target: "tool=send_email", verdict: "causal", ci: [{ toString: 1 }, null], effect: { valueOf: 1 } },
      { type: "__proto__", scope: "__proto__", intervention: "constructor", target: "toString" },
    ];
    fs.appendFileSync(path.join(dir, "tests.jsonl"), odd.map((o) => JSON.stringify(o)).join("\n") + "\n");
    expect(() => analyseEverything(dir)).not.toThrow();
  });
});
