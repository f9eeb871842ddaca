import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { readRun } from "../../../core/log/reader";
import { analyseRun } from "../../../extension/logic/analysis";
import { oneLine, runDiagnostics, siteDiagnostics, type RunForDiagnostics } from "../../../extension/logic/diagnostics";
import { SiteResolver } from "../../../extension/logic/sites";
import { ROOT, REFERENCE_RUNS, copyDir, demoWorkspace, tmpDir } from "./helpers";

let ws: string;
let runs: RunForDiagnostics[];
let resolver: SiteResolver;

beforeAll(async () => {
  ws = await demoWorkspace();
  // the demo's agent source, as if the workspace were the demo's project
  fs.mkdirSync(path.join(ws, "examples/demo"), { recursive: true });
  fs.copyFileSync(path.join(ROOT, "examples/demo/agents.ts"), path.join(ws, "examples/demo/agents.ts"));
  runs = fs
    .readdirSync(path.join(ws, "runs"))
    .filter((n) => n.startsWith("demo-seed"))
    .map((n) => path.join(ws, "runs", n))
    .map((dir) => ({ dir, analysis: analyseRun(readRun(dir)) }));
  resolver = new SiteResolver({ folders: [ws], extensionPath: ROOT });
});

describe("diagnostics of a run", () => {
  it("puts the high alert on the exfiltration email's line of events.jsonl, with its evidence and tested cause", () => {
    const seed0 = runs.find((r) => r.dir.endsWith("demo-seed0"))!;
    const d = runDiagnostics(seed0, resolver);
    const high = d.filter((x) => x.severity === "error");
    expect(high).toHaveLength(1);
    const [h] = high;
    expect(h.file).toBe(path.join(seed0.dir, "events.jsonl"));
    const line = fs.readFileSync(h.file, "utf8").split("\n")[h.line - 1];
    expect(JSON.parse(line)).toMatchObject({ seq: 18, type: "action", tool: "send_email" });
    expect(h.code).toBe("untrusted-value");
    expect(h.message).toContain("audit@vendor-compliance.example");
    expect(h.message).toMatch(/tested cause: vendor:portal\/notes\.md \+0\.\d\d/);
    // evidence: the vendor note's event and its blob; and the source line that recorded the call
    const vendorLine = readRun(seed0.dir).events.find((e) => e.type === "input" && e.source === "vendor:portal/notes.md")!.line;
    expect(h.related).toContainEqual(expect.objectContaining({ kind: "file", file: h.file, line: vendorLine }));
    expect(h.related.some((r) => r.kind === "blob" && r.message.includes("vendor:portal/notes.md"))).toBe(true);
    expect(h.related[0]).toMatchObject({ kind: "file", file: path.join(ws, "examples/demo/agents.ts"), line: 25 });
    expect(h.fixes).toEqual([{ run: seed0.dir, runId: "demo-seed0", seq: 18, tool: "send_email" }]);
  });

  it("reports a failed verify as one error on the first bad line, and keeps the alerts of intact events", () => {
    const dir = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(tmpDir(), "runs", "cut"));
    const file = path.join(dir, "events.jsonl");
    const text = fs.readFileSync(file, "utf8");
    const lines = text.split("\n");
    // edit line 6 (seq 5) and cut the last line in half
    lines[5] = lines[5].replace('"agent": "', '"agent": "x');
    fs.writeFileSync(file, lines.slice(0, -2).join("\n") + "\n" + lines.at(-2)!.slice(0, 50));
    const d = runDiagnostics({ dir, analysis: analyseRun(readRun(dir)) });
    const errors = d.filter((x) => x.severity === "error" && x.code !== "untrusted-value");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 6, code: "hash" });
    expect(errors[0].message).toMatch(/^Verify failed: .*\(and \d+ more problems?\)$/);
    expect(errors[0].related.some((r) => r.kind === "file" && r.line === lines.length - 1)).toBe(true); // the cut-off line
  });

  it("uses the problems of an explicit verify (blobs checked) when given", () => {
    const seed0 = runs.find((r) => r.dir.endsWith("demo-seed0"))!;
    const d = runDiagnostics({
      ...seed0,
      verified: [{ code: "blob-hash", severity: "error", message: "blob abc… does not hash to its name", line: 3, file: "blobs" }],
    });
    expect(d[0]).toMatchObject({ severity: "error", line: 3, code: "blob-hash", file: path.join(seed0.dir, "events.jsonl") });
  });
});

describe("diagnostics on agent source lines", () => {
  it("aggregates each alert over the runs on the line that recorded the call", () => {
    const d = siteDiagnostics(runs, resolver);
    const agents = path.join(ws, "examples/demo/agents.ts");
    expect(d.every((x) => x.file === agents && x.line === 25)).toBe(true);
    const exfil = d.find((x) => x.code === "untrusted-value")!;
    expect(exfil.severity).toBe("error");
    const highRuns = runs.filter((r) => r.analysis.alerts.some((a) => a.rule === "untrusted-value")).length;
    expect(exfil.message).toContain(`(${highRuns} runs: demo-seed0`);
    expect(exfil.fixes.length).toBe(Math.min(5, highRuns));
    expect(exfil.related.filter((r) => r.kind === "file" && r.file.endsWith("events.jsonl") && r.message.includes("demo-seed"))).toHaveLength(highRuns);
  });

  it("leaves out files outside the workspace (the extension's own demo sources)", () => {
    const outside = new SiteResolver({ folders: [tmpDir()], extensionPath: ROOT });
    expect(siteDiagnostics(runs, outside)).toEqual([]);
  });
});

describe("oneLine", () => {
  it("keeps text as text: one line, no control characters, cut with an ellipsis", () => {
    expect(oneLine("a\nb\t<script>alert(1)</script>\u0007")).toBe("a b <script>alert(1)</script>");
    expect(oneLine("x".repeat(20), 10)).toBe("x".repeat(9) + "…");
  });
});
