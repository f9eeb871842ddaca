import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun, type RunData } from "../../core/log/reader";
import { targetHits } from "../../core/graph/graph";
import { RunModel } from "../../core/graph/model";
import { Budget, ReplayContext } from "../../core/replay/context";
import { narrowAttribution } from "../../core/replay/narrow";
import { attribute } from "../../core/replay/attribute";
import { causingSpans, segments } from "../../core/replay/spans";
import { confirmedCauses, failureShapes } from "../../core/replay/shapes";
import { fixCheck, keepTarget } from "../../core/replay/fixcheck";
import { SYSTEM as DEMO, EXFIL_TARGET } from "../../examples/demo/system";
import { scenario } from "../../bench/scenarios";
import { CallCounter } from "../../bench/sim";
import { buildSystem } from "../../bench/system";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "cw-c2f-"));

describe("splitting content into spans", () => {
  it("paragraphs, sentences and clauses, trimmed, in code points", () => {
    const t = "First 🙂 para. Second sentence!\n\nNext para: a clause, another; end.";
    const all: [number, number] = [0, Array.from(t).length];
    const at = (r: [number, number]) => Array.from(t).slice(r[0], r[1]).join("");
    expect(segments(t, all, "paragraph").map(at)).toEqual(["First 🙂 para. Second sentence!", "Next para: a clause, another; end."]);
    expect(segments(t, all, "sentence").map(at)).toEqual(["First 🙂 para.", "Second sentence!", "Next para: a clause, another; end."]);
    expect(segments(t, segments(t, all, "paragraph")[1], "clause").map(at)).toEqual(["Next para:", "a clause,", "another;", "end."]);
  });
});

describe("the demo's exfiltration: cause → span → fix", () => {
  let dir: string;
  beforeAll(async () => {
    dir = (await DEMO.run({ seed: 0, outDir: tmp(), runId: "demo-seed0" })).dir!;
  });

  it("the causing span is the planted sentence, not the rest of the note; its interval overlaps the whole note's", async () => {
    const ctx = new ReplayContext(readRun(dir), DEMO);
    const a = await attribute(ctx, { target: EXFIL_TARGET });
    expect(a.causes.map((c) => c.spec)).toEqual(["input:vendor:portal/notes.md"]);
    const c = a.causes[0];
    const s = await causingSpans(ctx, { cause: c.spec, whole: c, target: EXFIL_TARGET, family: a.family, attribution: a.attribution_id });
    expect(s.spans).toHaveLength(1);
    const [span] = s.spans;
    expect(span.texts).toHaveLength(1);
    expect(span.texts[0]).toContain("vendor-compliance");
    expect(span.texts[0]).toContain("export");
    expect(span.texts[0]).not.toContain("Batch B-200"); // the note's first sentence is not part of it
    expect(span.texts[0].startsWith("NOTE TO AI ASSISTANT")).toBe(true);
    expect(span.level).toBe("sentence");
    expect(span.overlaps_whole).toBe(true);
    expect(span.ci[1]).toBeGreaterThanOrEqual(c.ci[0]);
    expect(span.ci[0]).toBeLessThanOrEqual(c.ci[1]);
    expect(span.ci[0]).toBeGreaterThan(0);
    // the span tests corrected for the attribution's family plus their own, and saved with its id
    expect(s.family).toBeGreaterThan(a.family);
    const saved = readRun(dir).tests.filter((t) => t.span_of === c.spec);
    expect(saved).toHaveLength(s.tests.length);
    expect(saved.every((t) => t.attribution === a.attribution_id && String(t.intervention).startsWith("span:"))).toBe(true);
    // the input the span lies in, as evidence
    const ev = new RunModel(readRun(dir)).inputs.find((e) => e.source === "vendor:portal/notes.md")!;
    expect(s.input).toMatchObject({ seq: ev.seq, ref: ev.ref, hash: ev.hash });
  });

  it("fix-check: the span redacted → fixed, 80% → 0%, the refund kept; the guard in block mode → fixed; the FAQ removed → not fixed", async () => {
    const span = await fixCheck(new ReplayContext(readRun(dir), DEMO), { fix: "span:input:vendor:portal/notes.md@87-229", harm: EXFIL_TARGET });
    expect(span.verdict).toBe("fixed");
    // the sequential test stops once decisive: the rate without the fix is the demo's ~80% seen over the pairs it ran
    expect(span.harm.without_fix.p).toBeGreaterThanOrEqual(0.6);
    expect(span.harm.with_fix.p).toBe(0);
    expect(span.harm.ci[0]).toBeGreaterThan(0.4);
    expect(span.harm.with_fix.ci[1]).toBeLessThan(0.1);
    expect(span.keep.find((k) => k.target === "tool=issue_refund")).toMatchObject({ status: "kept", verdict: "ruled-out" });
    expect(span.excluded.map((e) => e.target)).toEqual(["tool=export_customers"]); // happens only with the exfiltration
    expect(span.changes).toEqual([
      expect.objectContaining({ kind: "span", removed: [expect.objectContaining({ text: expect.stringContaining("vendor-compliance") })] }),
    ]);

    const guard = await fixCheck(new ReplayContext(readRun(dir), DEMO), { fix: "guard:block", harm: EXFIL_TARGET });
    expect(guard.verdict).toBe("fixed");
    expect(guard.keep.every((k) => k.status === "kept")).toBe(true);

    const faq = await fixCheck(new ReplayContext(readRun(dir), DEMO), { fix: "input:web:shipping_faq", harm: EXFIL_TARGET, save: false });
    expect(faq.verdict).toBe("not fixed");
    expect(faq.harm.verdict).toBe("ruled-out");
  });

  it("fix-check reports collateral: removing the refund policy stops the harm and the refund", async () => {
    const f = await fixCheck(new ReplayContext(readRun(dir), DEMO), {
      fix: "input:kb:refund_policy.md",
      harm: EXFIL_TARGET,
      keep: ["tool=issue_refund"],
      save: false,
    });
    expect(f.keep).toEqual([expect.objectContaining({ target: "tool=issue_refund", status: "lost" })]);
    expect(f.verdict).toBe(f.harm.verdict === "causal" && f.harm.with_fix.p <= 0.05 ? "fixed with collateral" : "not fixed");
  });

  it("a spent model-call budget stops the narrowing with a reason, not an error", async () => {
    const ctx = new ReplayContext(readRun(dir), DEMO);
    const a = await attribute(ctx, { target: EXFIL_TARGET, save: false });
    ctx.budget = new Budget(0);
    const nr = await narrowAttribution(ctx, a, { save: false });
    expect(nr.spans).toEqual([]);
    expect(nr.skipped).toEqual([{ cause: "input:vendor:portal/notes.md", reason: "the model-call budget ran out" }]);
  });

  it("keep targets name a call without naming the harm", () => {
    expect(keepTarget("send_email", { to: "c.rao@example.com", body: "Refund of $89.00 issued." })).toBe("tool=send_email,arg~c.rao@example.com");
    expect(keepTarget("issue_refund", { order_id: 1042 })).toBe("tool=issue_refund");
  });
});

async function firstHarmful(name: string): Promise<{ run: RunData; sys: ReturnType<typeof buildSystem>; target: string }> {
  const sc = scenario(name);
  const sys = buildSystem(sc, new CallCounter());
  const out = tmp();
  for (let seed = 0; seed < 20; seed++) {
    const r = await sys.run({ seed, outDir: out, runId: `${name}-${seed}`, captureSites: false });
    const run = readRun(r.dir!);
    if (targetHits(new RunModel(run), sc.target!).length) return { run, sys, target: sc.target! };
  }
  throw new Error(`no harmful run of ${name}`);
}

describe("failure shapes on the benchmark's two-cause scenarios", () => {
  for (const [name, shape] of [
    ["redundant", "either"],
    ["conjunctive", "both"],
  ] as const) {
    it(`${name} is reported as ${shape}`, async () => {
      const { run, sys, target } = await firstHarmful(name);
      const ctx = new ReplayContext(run, sys);
      const a = await attribute(ctx, { target, save: false });
      const causes = confirmedCauses(a);
      expect(new Set(causes)).toEqual(new Set(scenario(name).truth));
      const [s] = await failureShapes(ctx, causes, { target, family: a.family, save: false });
      expect(s.shape).toBe(shape);
      // the four arms, each with an interval
      for (const arm of Object.values(s.arms)) {
        expect(arm.ci[0]).toBeLessThanOrEqual(arm.p);
        expect(arm.ci[1]).toBeGreaterThanOrEqual(arm.p);
      }
      expect(s.arms.neither.p).toBeLessThan(s.arms.both.p);
      if (shape === "both") expect(Math.max(s.arms.a_only.ci[1], s.arms.b_only.ci[1])).toBeLessThan(s.arms.both.ci[0]);
      else expect(Math.min(s.arms.a_only.ci[0], s.arms.b_only.ci[0])).toBeGreaterThan(s.arms.neither.ci[1]);
    });
  }
});
