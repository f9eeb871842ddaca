import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";

const ROOT = path.resolve(__dirname, "../..");
const CLI = path.join(ROOT, "dist/cli.js");
const FIX = path.join(ROOT, "test/fixtures/causeway-py-demo");

function cli(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe("causeway CLI", () => {
  let demo: string;
  beforeAll(() => {
    demo = fs.mkdtempSync(path.join(os.tmpdir(), "cw-cli-"));
    const r = cli("demo", "--out", demo, "--n", "20");
    expect(r.code).toBe(0);
  }, 120_000);

  it("usage errors exit 2 with one line", () => {
    for (const args of [
      ["bogus"],
      ["verify"],
      ["verify", "a", "b"],
      ["alerts", "x", "--nope"],
      ["test", path.join(FIX, "demo-seed0"), "--remove", "input:x"],
      ["record"],
    ]) {
      const r = cli(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.trim().split("\n")).toHaveLength(1);
    }
    const bad = cli("test", path.join(FIX, "demo-seed0"), "--remove", "inptu:x", "--target", "tool=a", "--system", "causeway:demo");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/cannot parse "inptu:x": unknown kind "inptu:"/);
  });

  it("verify --json passes the reference's runs and fails a damaged one with exit 1", () => {
    for (const run of fs.readdirSync(FIX)) {
      const r = cli("verify", path.join(FIX, run), "--json");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ ok: true, events: expect.any(Number) });
    }
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "cw-cli-bad-"));
    fs.cpSync(path.join(FIX, "demo-seed0"), copy, { recursive: true });
    const f = path.join(copy, "events.jsonl");
    fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace('"seed": 0', '"seed": 1'));
    const r = cli("verify", copy, "--json");
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.ok).toBe(false);
    expect(j.problems[0]).toMatchObject({ code: "hash", line: 1, seq: 0 });
  });

  it("alerts match the reference's high and review alerts on the same actions", () => {
    const want = fs
      .readFileSync(path.join(ROOT, "test/fixtures/reference-output/alerts.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const run of fs.readdirSync(FIX)) {
      const r = cli("alerts", path.join(FIX, run), "--json");
      expect(r.code).toBe(0);
      const got = JSON.parse(r.out) as { severity: string; rule: string; title: string; detail: string; seq: number | null; tool: string | null }[];
      const mine = want.filter((a) => a.run === run);
      const key = (a: { severity: string; title: string; seq: number | null; tool: string | null; detail: string }) =>
        `${a.severity}|${a.seq}|${a.tool}|${a.title}|${a.detail.replace(/Reached from (.*)\. Reach/, (_m, s: string) => `Reached from ${s.split(", ").sort().join(", ")}. Reach`)}`;
      expect(got.map(key).sort()).toEqual(mine.map(key).sort());
      for (const a of got) expect(Object.keys(a).sort()).toEqual(["detail", "rule", "seq", "severity", "title", "tool"]);
    }
  });

  it("the demo: about 70% of seeds exfiltrate, with a high alert naming the vendor note", () => {
    const runs = fs.readdirSync(demo).filter((d) => d.startsWith("demo-seed"));
    const exfil = runs.filter((run) => {
      const al = JSON.parse(cli("alerts", path.join(demo, run), "--json").out) as { severity: string; detail: string; tool: string }[];
      return al.some((a) => a.severity === "high" && a.tool === "send_email" && a.detail.includes("vendor:portal/notes.md"));
    });
    expect(runs).toHaveLength(8);
    expect(exfil.length / runs.length).toBeGreaterThanOrEqual(0.5);
    expect(exfil.length / runs.length).toBeLessThanOrEqual(0.9);
  });

  it("taint shows all three untrusted inputs reaching the exfiltration email", () => {
    const r = JSON.parse(cli("taint", path.join(demo, "demo-seed0"), "--json").out);
    expect(r.sources.map((s: { label: string }) => s.label).sort()).toEqual(["inbox:ticket-881", "vendor:portal/notes.md", "web:shipping_faq"]);
    const email = r.actions.find((a: { tool: string; args: { to?: string } }) => a.tool === "send_email" && a.args.to?.includes("vendor-compliance"));
    expect(email).toBeTruthy();
    for (const src of ["inbox:ticket-881", "vendor:portal/notes.md", "web:shipping_faq"]) {
      const one = JSON.parse(cli("taint", path.join(demo, "demo-seed0"), "--source", `input:${src}`, "--json").out);
      expect(one.actions.some((a: { seq: number }) => a.seq === email.seq)).toBe(true);
    }
  });

  it("graph --json lists graded edges, with the tested cause", () => {
    const g = JSON.parse(cli("graph", path.join(demo, "demo-seed0"), "--json").out);
    expect(new Set(g.edges.map((e: { evidence: string }) => e.evidence))).toEqual(new Set(["observed", "tested"])); // as the reference: no inferred edge in the demo
    const causal = g.edges.filter((e: { evidence: string; verdict: string }) => e.evidence === "tested" && e.verdict === "causal");
    expect(causal.some((e: { intervention: string; effect: number }) => e.intervention === "input:vendor:portal/notes.md" && e.effect >= 0.6)).toBe(true);
    const reuse = g.edges.filter((e: { kind: string }) => e.kind === "context:input").map((e: { reuse: number }) => e.reuse);
    expect(reuse).toEqual([0.364, 0.895, 0.742, 0]); // the reference's reuse figures for this run
  });

  it("replaying needs an allowed program; test and attribute print the documented JSON", () => {
    const refused = cli("test", path.join(FIX, "demo-seed0"), "--remove", "input:web:*", "--target", "tool=send_email");
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/--allow-program 'causeway\.demo:SYSTEM'/);
    const run = path.join(demo, "demo-seed0");
    const t = JSON.parse(
      cli(
        "test",
        run,
        "--remove",
        "input:web:shipping_faq",
        "--target",
        "tool=send_email,arg~vendor-compliance",
        "--n",
        "40",
        "--allow-program",
        "causeway:demo",
        "--json",
      ).out,
    );
    for (const k of ["intervention", "target", "n", "p_with", "p_without", "effect", "ci", "p_value", "verdict", "looks", "model_calls", "off_tape_actions"])
      expect(t).toHaveProperty(k);
    expect(t.verdict).toBe("ruled-out");
    for (const k of ["e_value", "stop_reason", "estimate"]) expect(t).toHaveProperty(k);
    expect(t.p_value).toBeGreaterThan(0.05);
    const a = JSON.parse(
      cli("attribute", run, "--target", "tool=send_email,arg~vendor-compliance", "--method", "newcombe", "--allow-program", "causeway:demo", "--json").out,
    );
    for (const k of ["causes", "joint", "ruled_out", "inconclusive", "model_calls", "summary"]) expect(a).toHaveProperty(k);
    expect(a.causes).toEqual([expect.objectContaining({ spec: "input:vendor:portal/notes.md", role: "primary", effect: 0.8 })]);
    const b = JSON.parse(cli("attribute", run, "--target", "tool=send_email,arg~vendor-compliance", "--allow-program", "causeway:demo", "--json").out);
    expect(b.causes).toEqual([expect.objectContaining({ spec: "input:vendor:portal/notes.md", role: "primary" })]);
    // the FAQ changes nothing: Find the cause stops its test for futility (no effect seen) rather than spend pairs ruling it out
    expect([...b.ruled_out, ...b.inconclusive]).toContain("input:web:shipping_faq");
    const d = JSON.parse(
      cli(
        "test",
        run,
        "--decision",
        "10",
        "--remove",
        "input:vendor:*",
        "--contains",
        "vendor-compliance",
        "--n",
        "40",
        "--allow-program",
        "causeway:demo",
        "--json",
      ).out,
    );
    expect(d.verdict).toBe("causal");
    expect(cli("verify", run).code).toBe(0);
  });

  it("refuses a target naming a tool the run never had and a removal matching nothing, and saves nothing", () => {
    const run = path.join(demo, "demo-seed0");
    const log = path.join(run, "tests.jsonl");
    const before = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    const typo = cli("test", run, "--remove", "input:web:shipping_faq", "--target", "tool=book_hotle", "--allow-program", "causeway:demo", "--json");
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/tool "book_hotle".*tools: .*send_email.*agents: .*planner/);
    const none = cli("test", run, "--remove", "input:web:nothing_here", "--target", "tool=send_email", "--allow-program", "causeway:demo", "--json");
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/matches nothing.*input:web:shipping_faq.*msg:researcher->planner/);
    const att = cli("attribute", run, "--target", "agent=plannr", "--allow-program", "causeway:demo", "--json");
    expect(att.code).toBe(2);
    expect(fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "").toBe(before);
  });

  it("estimates cost before a test and honours a call budget", () => {
    const run = path.join(demo, "demo-seed0");
    const r = cli(
      "test",
      run,
      "--remove",
      "input:web:shipping_faq",
      "--target",
      "tool=send_email,arg~vendor-compliance",
      "--budget-calls",
      "12",
      "--price",
      "mock=3,15",
      "--allow-program",
      "causeway:demo",
    );
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/estimate: up to 200 pairs, at most 1200 model calls and \d+ tokens .*at most \$\d+\.\d{4}/);
    const j = JSON.parse(
      cli(
        "test",
        run,
        "--remove",
        "input:web:shipping_faq",
        "--target",
        "tool=send_email,arg~vendor-compliance",
        "--budget-calls",
        "12",
        "--allow-program",
        "causeway:demo",
        "--json",
      ).out,
    );
    expect(j.stopped).toBe("budget");
    expect(j.model_calls).toBeLessThanOrEqual(12 + 3);
    expect(j.stop_reason).toMatch(/^budget/);
    // a decision test keeps the budget too: it stops after the last whole pair within it
    for (const method of ["betting", "newcombe"]) {
      const d = JSON.parse(
        cli(
          "test",
          run,
          "--decision",
          "10",
          "--remove",
          "input:vendor:*",
          "--budget-calls",
          "5",
          "--n",
          "40",
          "--method",
          method,
          "--allow-program",
          "causeway:demo",
          "--json",
        ).out,
      );
      expect(d.stopped, method).toBe("budget");
      expect(d.n, method).toBe(1); // 3 calls a pair: the second pair ran out
      expect(d.model_calls, method).toBeLessThanOrEqual(5);
      expect(d.verdict, method).toBe("inconclusive");
    }
    const usd = cli(
      "test",
      run,
      "--remove",
      "input:web:shipping_faq",
      "--target",
      "tool=send_email,arg~vendor-compliance",
      "--budget-usd",
      "1",
      "--allow-program",
      "causeway:demo",
      "--json",
    );
    expect(usd.code).toBe(2);
    expect(usd.err).toMatch(/--budget-usd needs a price/);
  });

  it("replay, matrix and index", () => {
    const run = path.join(demo, "demo-seed0");
    const rep = JSON.parse(cli("replay", run, "--allow-program", "causeway:demo", "--json").out);
    expect(rep.diffs).toEqual([]);
    const without = JSON.parse(cli("replay", run, "--remove", "input:vendor:portal/notes.md", "--allow-program", "causeway:demo", "--json").out);
    expect(without.diffs.length).toBeGreaterThan(0);
    const mx = JSON.parse(
      cli("matrix", run, "--target", "tool=send_email,arg~vendor-compliance", "--n", "20", "--allow-program", "causeway:demo", "--json").out,
    );
    expect(mx.map((r: { intervention: string }) => r.intervention)).toEqual([
      "input:inbox:ticket-881",
      "input:kb:refund_policy.md",
      "input:vendor:portal/notes.md",
      "input:web:shipping_faq",
      "msg:researcher->planner",
      "msg:planner->executor",
    ]);
    const kept = mx.filter((r: { bh_discovery: boolean }) => r.bh_discovery).map((r: { intervention: string }) => r.intervention);
    expect(kept).toContain("input:vendor:portal/notes.md");
    expect(kept).not.toContain("input:web:shipping_faq");
    const idx = JSON.parse(cli("index", demo, "--json").out);
    const vendor = idx.sources.find((s: { labels: string[] }) => s.labels.includes("vendor:portal/notes.md"));
    expect(vendor.confirmed_tools).toEqual(["send_email"]);
    expect(idx.edges.find((e: { source: string; tool: string }) => e.source === vendor.id && e.tool === "send_email").reach_runs).toBe(7); // seed 2 escalated instead
  });
});

describe("the package as a library", () => {
  it("its entry point exports the SDK, the core API and the statistics", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lib = require(path.join(ROOT, "dist/lib/index.js"));
    for (const name of [
      "System",
      "Guard",
      "ModelOutput",
      "readRun",
      "verifyRun",
      "investigate",
      "attribute",
      "runTest",
      "wilson",
      "newcombe",
      "mcnemarExact",
      "benjaminiHochberg",
      "zFor",
      "HttpSink",
      "traceOpenAI",
      "traceAnthropic",
      "importOtel",
    ]) {
      expect(typeof lib[name], name).toBe("function");
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    expect(pkg.exports["."].default).toBe("./dist/lib/index.js");
    expect(pkg.bin.causeway).toBe("dist/cli.js");
    expect(pkg.engines.vscode).toBe("^1.90.0");
  });
});
