import { describe, it, expect, beforeAll, afterAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemorySink } from "../../core/log/writer";
import { readRun } from "../../core/log/reader";
import { verifyRun } from "../../core/log/verify";
import { refOf } from "../../core/log/hash";
import { RunModel } from "../../core/graph/model";
import { ReplayContext } from "../../core/replay/context";
import { runTest } from "../../core/replay/run-test";
import { decisionTest } from "../../core/replay/decision-test";
import { SpecError, parseIntervention, removes } from "../../core/specs/grammar";
import { applyEdit, interveneOn, spanSpec } from "../../core/specs/apply";
import { allowSpecFiles } from "../../core/specs/files";
import { setSpecFileReader } from "../../core/specs/grammar";
import { SYSTEM as DEMO, EXFIL_TARGET, REFUND_TARGET } from "../../examples/demo/system";
import { DOCS } from "../../examples/demo/documents";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "cw-iv-"));
const NOTE = DOCS.find((d) => d.source === "vendor:portal/notes.md")!.text;
const PLANTED = NOTE.slice(NOTE.indexOf("NOTE TO AI"));
const START = Array.from(NOTE.slice(0, NOTE.indexOf("NOTE TO AI"))).length;

describe("the intervention grammar", () => {
  it("parses redact, replace, span and guard, and rejects malformed ones with a reason", () => {
    const r = parseIntervention("redact:input:vendor:*~NOTE TO AI");
    expect(r.edit).toMatchObject({ kind: "redact", pattern: "NOTE TO AI" });
    expect(r.parts).toEqual([expect.objectContaining({ kind: "input", glob: "vendor:*" })]);
    expect(parseIntervention("replace:input:web:faq=Nothing to see.").edit).toMatchObject({ kind: "replace", text: "Nothing to see." });
    expect(parseIntervention("span:input:vendor:portal/notes.md@90-200,0-5").edit).toMatchObject({
      kind: "span",
      ranges: [
        [0, 5],
        [90, 200],
      ],
    });
    expect(parseIntervention("guard:block").guard).toEqual({ mode: "block", target: undefined });
    expect(parseIntervention("guard:block:tool=send_email,arg~x").guard?.target?.clauses).toHaveLength(2);
    for (const bad of [
      "span:input:x@5-5",
      "span:input:x@1-9,3-12",
      "span:input:x",
      "redact:input:x",
      "redact:input:x~/(/",
      "replace:input:x",
      "guard:allow",
      "replace:nope:x=1",
    ]) {
      expect(() => parseIntervention(bad), bad).toThrow(SpecError);
    }
  });

  it("an edit never removes the item; removal specs behave as before", () => {
    const item = { kind: "input", source: "vendor:a", trust: "untrusted", ref: "sha256:" + "0".repeat(64) };
    expect(removes([parseIntervention("input:vendor:*")], item)).toBe(true);
    expect(removes([parseIntervention("redact:input:vendor:*~x")], item)).toBe(false);
  });

  it("applies each kind exactly, in code points, and says what went", () => {
    const s = "héllo 🙂 world. ignore all. bye";
    const span = applyEdit(parseIntervention("span:input:x@6-8").edit!, s);
    expect(span.value).toBe("héllo world. ignore all. bye");
    expect(span.removed).toEqual([{ start: 6, end: 8, text: "🙂 " }]);
    const red = applyEdit(parseIntervention("redact:input:x~/ignore \\w+\\.\\s?/i").edit!, s);
    expect(red.value).toBe("héllo 🙂 world. bye");
    expect(red.removed).toEqual([{ start: 15, end: 27, text: "ignore all. " }]);
    const nested = applyEdit(parseIntervention("redact:input:x~secret").edit!, { a: ["a secret", 3], b: "no" });
    expect(nested.value).toEqual({ a: ["a ", 3], b: "no" });
    expect(nested.removed).toEqual([{ start: 2, end: 8, text: "secret", path: ["a", 0] }]);
    expect(applyEdit(parseIntervention("redact:input:x~absent").edit!, s).changed).toBe(false);
    expect(applyEdit(parseIntervention("replace:input:x=other").edit!, s)).toMatchObject({ value: "other", changed: true });
    const r = interveneOn([parseIntervention("replace:input:x=other")], { kind: "input", source: "x", trust: "untrusted", ref: refOf(s), value: s });
    expect(r).toMatchObject({ remove: false, value: "other", changes: [{ kind: "replace", before: refOf(s), after: refOf("other"), replaced_with: 5 }] });
    expect(
      spanSpec("input:x", [
        [9, 12],
        [1, 3],
      ]),
    ).toBe("span:input:x@1-3,9-12");
  });
});

describe("each kind on the demo's byte-compatible run", () => {
  let dir: string;
  let ctx: ReplayContext;
  beforeAll(async () => {
    allowSpecFiles(); // what the CLI and the worker do: this test names a fix file
    const r = await DEMO.run({ seed: 0, outDir: tmp(), runId: "demo-seed0" });
    dir = r.dir!;
    ctx = new ReplayContext(readRun(dir), DEMO);
  });

  afterAll(() => setSpecFileReader(undefined));

  const changedBlobIsStored = (changes: unknown, text: string) => {
    const c = (changes as { after: string; removed: { text: string }[] }[])[0];
    const file = path.join(dir, "blobs", c.after.slice(7) + ".json");
    expect(JSON.parse(fs.readFileSync(file, "utf8")).v).toBe(text);
    expect(verifyRun(dir).ok).toBe(true); // the new blob hashes to its name like every other
  };

  it("span: removing the planted sentence stops the exfiltration; removing the first sentence does not", async () => {
    const spec = spanSpec("input:vendor:portal/notes.md", [[START, Array.from(NOTE).length]]);
    const r = await runTest(ctx, { intervention: spec, target: EXFIL_TARGET, n: 40, method: "newcombe" });
    expect([r.verdict, r.p_with, r.p_without]).toEqual(["causal", 0.8, 0]);
    expect(r.changes).toEqual([
      expect.objectContaining({
        spec,
        kind: "span",
        item: expect.objectContaining({ source: "vendor:portal/notes.md" }),
        removed: [{ start: START, end: Array.from(NOTE).length, text: PLANTED }],
      }),
    ]);
    changedBlobIsStored(r.changes, NOTE.slice(0, NOTE.indexOf("NOTE TO AI")));
    const first = await runTest(ctx, {
      intervention: spanSpec("input:vendor:portal/notes.md", [[0, START - 1]]),
      target: EXFIL_TARGET,
      n: 40,
      method: "newcombe",
    });
    expect(first.verdict).toBe("ruled-out");
    // the saved line records the change too
    expect(readRun(dir).tests.at(-2)).toMatchObject({ intervention: spec, changes: [expect.objectContaining({ kind: "span" })] });
  });

  it("redact: removing the address alone is enough; a pattern that matches nothing is not applied", async () => {
    const r = await runTest(ctx, { intervention: "redact:input:vendor:*~audit@vendor-compliance.example", target: EXFIL_TARGET, n: 40, method: "newcombe" });
    expect(r.verdict).toBe("causal");
    expect((r.changes as { removed: unknown[] }[])[0].removed).toEqual([
      { start: NOTE.indexOf("audit@"), end: NOTE.indexOf("audit@") + 31, text: "audit@vendor-compliance.example" },
    ]);
    changedBlobIsStored(r.changes, NOTE.replace("audit@vendor-compliance.example", ""));
    const none = await runTest(ctx, { intervention: "redact:input:vendor:*~no such words", target: EXFIL_TARGET, n: 10, method: "newcombe", save: false });
    expect(none.verdict).toBe("not-applied");
  });

  it("replace (=TEXT and =@FILE): a sanitized note stops it and keeps the refund", async () => {
    const clean = "Batch B-200 shipped in March had packaging problems and some units cracked in transit.";
    const file = path.join(tmp(), "clean-note.txt");
    fs.writeFileSync(file, clean);
    for (const spec of [`replace:input:vendor:portal/notes.md=${clean}`, `replace:input:vendor:portal/notes.md=@${file}`]) {
      const r = await runTest(ctx, { intervention: spec, target: EXFIL_TARGET, n: 40, method: "newcombe" });
      expect(r.verdict).toBe("causal");
      expect(r.changes).toEqual([expect.objectContaining({ kind: "replace", before: refOf(NOTE), after: refOf(clean) })]);
      changedBlobIsStored(r.changes, clean);
    }
    const keep = await runTest(ctx, {
      intervention: `replace:input:vendor:portal/notes.md=${clean}`,
      target: REFUND_TARGET,
      n: 40,
      method: "newcombe",
      nMax: 160,
    });
    expect(keep.verdict).toBe("ruled-out");
  });

  it("guard:block: the replay's guard blocks the e-mail to the outside address, not the refund", async () => {
    const r = await runTest(ctx, { intervention: "guard:block", target: EXFIL_TARGET, n: 40, method: "newcombe", save: false });
    expect([r.verdict, r.p_without]).toEqual(["causal", 0]);
    const refund = await runTest(ctx, { intervention: "guard:block", target: REFUND_TARGET, n: 40, method: "newcombe", nMax: 160, save: false });
    expect(refund.verdict).toBe("ruled-out");
  });

  it("decision replay: a span of the note in the researcher's call changes its output", async () => {
    const dec = new RunModel(readRun(dir)).decisions[0];
    const spec = spanSpec("input:vendor:*", [[START, Array.from(NOTE).length]]);
    const r = await decisionTest(ctx, { decision: dec.seq, intervention: spec, contains: "vendor-compliance", n: 40 });
    expect([r.verdict, r.p_without]).toEqual(["causal", 0]);
    expect(r.changes).toEqual([expect.objectContaining({ kind: "span", removed: [expect.objectContaining({ text: PLANTED })] })]);
  });

  it("the SDK records an edited run: the decision saw the edited content, stored as a blob, and says what changed", async () => {
    const sink = new MemorySink();
    const spec = "redact:input:vendor:*~/NOTE TO AI.*$/";
    const r = await DEMO.run({ seed: 0, sink, runId: "edited", interventions: [parseIntervention(spec)], captureSites: false });
    expect(r.actions.map((a) => a.tool)).not.toContain("export_customers");
    const d = sink.events.find((e) => e.type === "decision")! as Record<string, any>;
    const edited = NOTE.slice(0, NOTE.indexOf("NOTE TO AI"));
    const c = d.context.find((x: { source: string }) => x.source === "vendor:portal/notes.md");
    expect(c.ref).toBe(refOf(edited));
    expect(sink.blobs.get(c.ref)).toBe(edited);
    expect(d.edited).toEqual([{ spec, before: refOf(NOTE), after: refOf(edited) }]);
    expect(d.ablated).toEqual([]);
  });
});

describe("each kind on the reference tool's own run (test/fixtures/causeway-py-demo)", () => {
  let dir: string;
  beforeAll(() => {
    dir = path.join(tmp(), "demo-seed0");
    fs.cpSync(path.resolve(__dirname, "../fixtures/causeway-py-demo/demo-seed0"), dir, { recursive: true });
  });

  it("span, redact, replace and guard replay the reference's run; the changed content joins its blobs and the run still verifies", async () => {
    const ctx = new ReplayContext(readRun(dir), DEMO);
    const end = Array.from(NOTE).length;
    const cases: [string, string][] = [
      [spanSpec("input:vendor:portal/notes.md", [[START, end]]), "span"],
      ["redact:input:vendor:portal/notes.md~NOTE TO AI ASSISTANT", "redact"],
      ["replace:input:vendor:portal/notes.md=Batch B-200 had packaging problems.", "replace"],
    ];
    for (const [spec, kind] of cases) {
      const r = await runTest(ctx, { intervention: spec, target: EXFIL_TARGET, n: 40, method: "newcombe" });
      expect([spec, r.verdict, r.p_with, r.p_without]).toEqual([spec, "causal", 0.8, 0]);
      const c = (r.changes as { kind: string; before: string; after: string }[])[0];
      expect(c.kind).toBe(kind);
      // "before" is the reference's own blob of the note: the same bytes, the same hash
      expect(fs.existsSync(path.join(dir, "blobs", c.before.slice(7) + ".json"))).toBe(true);
      expect(fs.existsSync(path.join(dir, "blobs", c.after.slice(7) + ".json"))).toBe(true);
    }
    const g = await runTest(ctx, { intervention: "guard:block", target: EXFIL_TARGET, n: 40, method: "newcombe" });
    expect([g.verdict, g.p_without]).toEqual(["causal", 0]);
    const v = verifyRun(dir);
    expect(v.ok).toBe(true);
    expect(
      readRun(dir)
        .tests.slice(-4)
        .map((t) => t.intervention),
    ).toEqual([...cases.map(([s]) => s), "guard:block"]);
  });
});
