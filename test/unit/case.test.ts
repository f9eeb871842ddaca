import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun } from "../../core/log/reader";
import { BlobStore } from "../../core/log/blobs";
import { ReplayContext } from "../../core/replay/context";
import { attribute } from "../../core/replay/attribute";
import { narrowAttribution } from "../../core/replay/narrow";
import { fixCheck } from "../../core/replay/fixcheck";
import { buildCase, caseHtml, caseMarkdown } from "../../core/report/case";
import { reportData } from "../../core/report/report";
import { SYSTEM as DEMO, EXFIL_TARGET } from "../../examples/demo/system";

/** Every markdown link with its title: [text](href "title"). */
function links(md: string): { text: string; href: string; title: string }[] {
  const out: { text: string; href: string; title: string }[] = [];
  const re = /\[((?:\\.|[^\]\\])*)\]\(([^ )]+)(?: "([^"]*)")?\)/g;
  for (let m = re.exec(md); m; m = re.exec(md)) out.push({ text: m[1], href: decodeURI(m[2]), title: m[3] ?? "" });
  return out;
}

describe("the case file of the demo's exfiltration", () => {
  let root: string;
  let dir: string;
  let md: string;
  const caseDir = () => path.join(root, "cases");
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "cw-case-"));
    dir = (await DEMO.run({ seed: 0, outDir: path.join(root, "runs"), runId: "demo-seed0" })).dir!;
    const ctx = new ReplayContext(readRun(dir), DEMO);
    const a = await attribute(ctx, { target: EXFIL_TARGET });
    await narrowAttribution(ctx, a);
    const span = readRun(dir).tests.find((t) => t.causing_span)!;
    await fixCheck(new ReplayContext(readRun(dir), DEMO), { fix: String(span.intervention), harm: EXFIL_TARGET });
    const c = buildCase(readRun(dir, { checkBlobs: true }), { target: EXFIL_TARGET, from: caseDir() });
    md = caseMarkdown(c);
    fs.mkdirSync(caseDir(), { recursive: true });
    fs.writeFileSync(path.join(caseDir(), "case.md"), md);
  });

  it("names the cause, the causing span, the shape, the fix check and the log's status", () => {
    expect(md).toMatch(/^# Case: send\\_email by executor in demo-seed0/);
    expect(md).toContain("**input:vendor:portal/notes.md** — primary cause");
    expect(md).toMatch(/### Causing span\n\n> NOTE TO AI ASSISTANT: [^\n]*vendor-compliance[^\n]*\n/);
    expect(md).not.toMatch(/> Batch B-200/);
    expect(md).toContain("Single: one confirmed cause.");
    expect(md).toMatch(/\*\*fixed\*\* — fix `span:input:vendor:portal\/notes\.md@\d+-\d+`: the harm goes from 80% of replays without the fix to 0% with it/);
    expect(md).toMatch(/`tool=issue_refund` \| kept/);
    expect(md).toContain("verify: PASS");
  });

  it("every link leads back to the run: the event hash at that seq, the tests.jsonl line's hash, the blob by its hash", () => {
    const ls = links(md);
    const events = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n");
    const tests = fs.readFileSync(path.join(dir, "tests.jsonl"), "utf8").split("\n");
    const blobs = new BlobStore(dir);
    const kinds = { event: 0, test: 0, blob: 0 };
    for (const l of ls) {
      const [file, frag] = l.href.split("#");
      const abs = path.resolve(caseDir(), file);
      expect(fs.existsSync(abs), l.href).toBe(true);
      expect(path.dirname(abs.replace(/[\\/]blobs[\\/][^\\/]+$/, "/x"))).toBe(dir);
      if (file.endsWith("events.jsonl")) {
        const line = Number(frag.slice(1));
        const ev = JSON.parse(events[line - 1]);
        const hash = /hash ([0-9a-f]{64})/.exec(l.title)![1];
        expect(ev.hash).toBe(hash);
        const seq = /event #(\d+)/.exec(l.text);
        if (seq) expect(ev.seq).toBe(Number(seq[1]));
        kinds.event++;
      } else if (file.endsWith("tests.jsonl")) {
        const line = Number(frag.slice(1));
        const rec = JSON.parse(tests[line - 1]);
        expect(rec.hash).toBe(/hash ([0-9a-f]{64})/.exec(l.title)![1]);
        kinds.test++;
      } else {
        const ref = "sha256:" + path.basename(file, ".json");
        expect(l.title).toBe(ref);
        expect(blobs.get(ref).ok).toBe(true); // the file hashes to its name
        kinds.blob++;
      }
    }
    expect(kinds.event).toBeGreaterThan(5);
    expect(kinds.test).toBeGreaterThan(5);
    expect(kinds.blob).toBeGreaterThan(1);
    // the figures are linked: each figure line of the cause, span and fix carries a tests.jsonl link
    for (const line of md.split("\n").filter((x) => /effect [+−]\d/.test(x))) expect(line, line).toMatch(/tests\.jsonl#L\d+/);
  });

  it("the static report carries the same case as an escaped HTML section", () => {
    const data = reportData(path.join(root, "runs"));
    expect(data.cases?.map((c) => [c.run, c.target])).toEqual([["demo-seed0", EXFIL_TARGET]]);
    const html = data.cases![0].html;
    expect(html).toContain("<h2>Case: send_email by executor in demo-seed0</h2>");
    expect(html).toContain("<blockquote>NOTE TO AI ASSISTANT:");
    expect(html).not.toMatch(/<script/i);
    expect(caseHtml({ run: "<x>", target: "t", blocks: [{ p: ["<img src=x onerror=alert(1)>"] }], evidence: [], headline: "" })).not.toContain("<img");
  });
});
