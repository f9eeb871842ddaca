/**
 * Issue 11, the extension's view: the background analysis checks blobs, so a run with a forged or
 * a missing blob is "failed" in the tree, with a Problems entry on the line that names the blob,
 * without a Verify by hand; a clean run stays intact; the check runs in slices (many blobs, a 1 ms
 * slice) and reaches the damaged blob wherever it is.
 */
import { describe, it, expect, afterEach, vi } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { WorkspaceRuns } from "../../../extension/logic/workspace-runs";
import { runDiagnostics } from "../../../extension/logic/diagnostics";
import { argsBlob, copyRun, events, putBlobText, reseal } from "./hostile";
import { until } from "../extension/helpers";

// state waits, not timings: generous limits for a loaded machine
vi.setConfig({ testTimeout: 600_000 });

const stores: WorkspaceRuns[] = [];
const made: string[] = [];
afterEach(() => {
  stores.splice(0).forEach((s) => s.dispose());
  made.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
});
const store = (o = {}) => {
  const s = new WorkspaceRuns({ debounceMs: 5, ...o });
  stores.push(s);
  return s;
};
const fresh = () => {
  const d = copyRun();
  made.push(d);
  return d;
};

describe("the background analysis checks blobs", () => {
  it("forged blob, missing blob: failed with a Problems entry on the naming line; a clean run intact", async () => {
    const forged = fresh();
    const fb = argsBlob(forged);
    fs.writeFileSync(fb.file, fs.readFileSync(fb.file, "utf8").replace(/"v": \{/, '"v": {"bcc": "x@evil.example", '));
    const missing = fresh();
    const mb = argsBlob(missing);
    fs.rmSync(mb.file);
    const clean = fresh();
    const s = store();
    for (const d of [forged, missing, clean]) s.add(d, path.dirname(d));
    await s.idle();
    for (const [dir, code, line] of [
      [forged, "blob-hash", fb.line],
      [missing, "missing-blob", mb.line],
    ] as const) {
      const e = s.get(dir)!;
      expect(e.verified).toBeUndefined(); // nobody ran Verify
      expect(e.analysis!.summary.status).toBe("failed");
      expect(e.analysis!.alerts[0]).toMatchObject({ rule: "integrity", severity: "high" });
      const d = runDiagnostics({ dir, analysis: e.analysis! }).find((x) => x.severity === "error")!;
      expect(d).toMatchObject({ file: path.join(dir, "events.jsonl"), line, code });
      // the investigator shows it too
      expect(s.investigation(dir)!.summary.integrity).toBe("failed");
    }
    expect(s.get(clean)!.analysis!.summary.status).toBe("intact");
  });

  it("checks in slices: the damaged blob of a run with many blobs is found with 1 ms slices", async () => {
    const dir = fresh();
    const evs = events(dir);
    // 1,500 extra inputs, each with its own blob; the first one's blob is forged
    const runEnd = evs.pop()!;
    const extra: Record<string, unknown>[] = [];
    for (let i = 0; i < 1500; i++) {
      const ref = putBlobText(dir, JSON.stringify(`document ${i}`));
      extra.push({
        ...evs[1],
        id: "a" + String(i).padStart(31, "0"),
        type: "input",
        ref,
        source: `doc:${i}`,
        trust: "untrusted",
        kind: "input",
        agent: "researcher",
      });
    }
    reseal(dir, [...evs, ...extra, runEnd]);
    const last = extra[0].ref as string; // checked last (the check takes the newest events first)
    fs.writeFileSync(path.join(dir, "blobs", last.slice(7) + ".json"), '{"v": "document X"}');
    fs.rmSync(path.join(dir, "tests.jsonl"));
    const s = store({ sliceMs: 1 });
    s.add(dir, path.dirname(dir));
    await until(() => s.get(dir)?.analysis?.summary.status === "failed", 300_000, "the forged blob found");
    expect(
      s
        .get(dir)!
        .analysis!.problems.filter((p) => p.severity === "error")
        .map((p) => p.code),
    ).toEqual(["blob-hash"]);
    expect(s.stats.slices).toBeGreaterThan(1);
  });

  it("a Verify after the blob is repaired clears it", async () => {
    const dir = fresh();
    const b = argsBlob(dir);
    const good = fs.readFileSync(b.file);
    fs.rmSync(b.file);
    const s = store();
    s.add(dir, path.dirname(dir));
    await s.idle();
    expect(s.get(dir)!.analysis!.summary.status).toBe("failed");
    fs.writeFileSync(b.file, good);
    expect(s.verify(dir)!.ok).toBe(true);
    await until(() => s.get(dir)!.analysis!.summary.status === "intact", 300_000, "the repaired run intact");
  });
});
