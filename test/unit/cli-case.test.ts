import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";

const ROOT = path.resolve(__dirname, "../..");
const CLI = path.join(ROOT, "dist/cli.js");
const FIX = path.join(ROOT, "test/fixtures/causeway-py-demo");
const EXFIL = "tool=send_email,arg~vendor-compliance";

function cli(cwd: string, ...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8" });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe("causeway attribute --spans, fix-check and case", () => {
  let ws: string;
  let run: string;
  beforeAll(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), "cw-cli-case-"));
    run = path.join(ws, "runs", "demo-seed0");
    fs.cpSync(path.join(FIX, "demo-seed0"), run, { recursive: true }); // the reference tool's run
  });

  it("attribute --spans prints the causing sentence; --json carries it", () => {
    const r = cli(ws, "attribute", run, "--target", EXFIL, "--system", "causeway:demo", "--spans", "--json");
    expect(r.code, r.err).toBe(0);
    const a = JSON.parse(r.out);
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual(["input:vendor:portal/notes.md"]);
    expect(a.spans).toHaveLength(1);
    const [span] = a.spans[0].spans;
    expect(span.texts[0]).toMatch(/^NOTE TO AI ASSISTANT: .*export .*vendor-compliance/);
    expect(span.overlaps_whole).toBe(true);
    expect(a.shapes).toEqual([]); // one cause: nothing to combine
  });

  it("fix-check: exit 0 when fixed, 1 when not; a replace file is read relative to the working directory", () => {
    const fixed = cli(ws, "fix-check", run, "--fix", "guard:block", "--harm", EXFIL, "--system", "causeway:demo", "--json");
    expect(fixed.code, fixed.err).toBe(0);
    const f = JSON.parse(fixed.out);
    expect(f).toMatchObject({ verdict: "fixed", harm: { without_fix: { p: 0.8 }, with_fix: { p: 0 } } });
    expect(f.keep.find((k: { target: string }) => k.target === "tool=issue_refund").status).toBe("kept");
    fs.writeFileSync(path.join(ws, "clean-note.txt"), "Batch B-200 shipped in March had packaging problems and some units cracked in transit.");
    const sanitized = cli(ws, "fix-check", run, "--fix", "replace:input:vendor:portal/notes.md=@clean-note.txt", "--harm", EXFIL, "--system", "causeway:demo");
    expect(sanitized.code, sanitized.err).toBe(0);
    expect(sanitized.out).toMatch(
      /^FIXED {2}fix: replace:input:vendor:portal\/notes\.md=@\/.*clean-note\.txt\n {2}harm tool=send_email,arg~vendor-compliance: 80% \[\d+%, \d+%\] without the fix → 0% \[0%, \d+%\] with it/,
    );
    const faq = cli(ws, "fix-check", run, "--fix", "input:web:shipping_faq", "--harm", EXFIL, "--system", "causeway:demo");
    expect(faq.code).toBe(1);
    expect(faq.out).toMatch(/^NOT FIXED/);
    const missing = cli(ws, "fix-check", run, "--fix", "replace:input:x=@nope.txt", "--harm", EXFIL, "--system", "causeway:demo");
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read .*nope\.txt/);
  });

  it("case -o writes markdown whose links resolve from where it is written", () => {
    const r = cli(ws, "case", run, "--target", EXFIL, "-o", path.join(ws, "cases", "exfil.md"));
    expect(r.code, r.err).toBe(0);
    const md = fs.readFileSync(path.join(ws, "cases", "exfil.md"), "utf8");
    expect(md).toContain("](../runs/demo-seed0/tests.jsonl#L");
    expect(md).toMatch(/\*\*fixed\*\* — fix `guard:block`/);
    expect(md).toMatch(/\*\*not fixed\*\* — fix `input:web:shipping_faq`/);
    // the reference's own six tests are unchained; the case says so
    expect(md).toMatch(/tests\.jsonl: \d+ tests, \d+ chained/);
  });
});
