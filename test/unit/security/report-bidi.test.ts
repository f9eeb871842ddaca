/**
 * The static report shows bidi controls, never applies them: a tool named `send_email\u202e…` or
 * an agent `sender\u202egpj.exe` (which reads `senderexe.jpg`) appears in the case files with each
 * control as ⟨U+202E⟩, and the report's source holds no raw one (its embedded JSON writes them as
 * \u escapes); the report's links are relative (`./…`, percent-encoded), so a run folder named
 * `javascript:alert(1)` is a path, never a link's scheme. The investigator's side:
 * test/unit/webview/bidi.test.tsx.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { System } from "../../../core/sdk/system";
import { appendTest } from "../../../core/log/testslog";
import { renderReport, reportData, writeReport } from "../../../core/report/report";
import type { ReportData } from "../../../core/report/report";
import { RAW_BIDI, recordHostileText } from "./hostile-text";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-bidi-"));
const root = path.join(tmp, "runs");
const JS_DIR = "javascript:alert(1)";
let data: ReportData;
let html: string;

beforeAll(async () => {
  const dir = await recordHostileText(System, root);
  // a second copy of the run in a folder whose name is a javascript: URL, with a recorded
  // attribution, so the report writes a case section linking into that folder
  const js = path.join(root, JS_DIR);
  fs.cpSync(dir, js, { recursive: true });
  appendTest(js, {
    run_id: "hostile-text",
    intervention: "input:web:\x1b]0;pwned\x07notes",
    target: "tool=send_email\x1b[2J\u202e",
    attribution: "a1",
    verdict: "causal",
    effect: 0.9,
    ci: [0.7, 1],
    n: 10,
    p_with: 1,
    p_without: 0.1,
    scope: "run",
    method: "betting",
  });
  data = reportData(root, tmp);
  writeReport(root, path.join(tmp, "report.html"));
  html = fs.readFileSync(path.join(tmp, "report.html"), "utf8");
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rawBidi = (s: string) => RAW_BIDI.filter((c: string) => s.includes(c)).map((c) => `U+${c.charCodeAt(0).toString(16)}`);

describe("the static report", () => {
  it("holds no raw bidi control anywhere in its source", () => {
    expect(data.cases?.length).toBeGreaterThan(0);
    expect(rawBidi(html)).toEqual([]);
    // shown in the case section, as text
    expect(html.includes("[2J⟨U+202E⟩")).toBe(true);
  });

  it("writes every link relative and percent-encoded: no scheme comes from a run folder's name", () => {
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, "&"));
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.length).toBeLessThan(200);
    for (const h of hrefs) {
      expect(h, h).toMatch(/^(\.\/|\.\.\/)/);
      expect(h, h).not.toMatch(/^[a-z][a-z0-9+.-]*:/i);
      // resolved against the report, the link stays a file path under it
      expect(new URL(h, "file:///r/report.html").protocol).toBe("file:");
    }
    expect(hrefs.some((h) => h.includes("javascript%3Aalert(1)"))).toBe(true);
    expect(html).not.toMatch(/href="\s*javascript:/i);
  });

  it("the same report through renderReport: the embedded JSON parses back to the run's text", () => {
    const again = renderReport(data);
    expect(rawBidi(again)).toEqual([]);
    const index = JSON.parse(/<script type="application\/json" id="causeway-data">([^<]*)<\/script>/.exec(again)![1]);
    expect(JSON.stringify(index).includes("\u202e")).toBe(true); // the data is unchanged: only its source text is escaped
  });
});
