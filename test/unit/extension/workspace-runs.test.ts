import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { WorkspaceRuns, type RunsChange } from "../../../extension/logic/workspace-runs";
import { REFERENCE_RUNS, copyDir, demoWorkspace, tmpDir, until } from "./helpers";

const stores: WorkspaceRuns[] = [];
function store(opts = {}): WorkspaceRuns {
  const s = new WorkspaceRuns({ debounceMs: 5, ...opts });
  stores.push(s);
  return s;
}
afterEach(() => {
  while (stores.length) stores.pop()!.dispose();
});

/** The lines of a demo run's events.jsonl, to write a run piece by piece. */
async function demoLines(): Promise<{ src: string; lines: string[] }> {
  const ws = await demoWorkspace();
  const src = path.join(ws, "runs", "demo-seed0");
  return { src, lines: fs.readFileSync(path.join(src, "events.jsonl"), "utf8").split("\n").filter(Boolean) };
}

/**
 * A run folder with the first `n` lines of the demo's events and their blobs, written as a writer
 * does: an event's blobs first, then the event (see core/log/running.ts).
 */
async function partialRun(n: number, extra = ""): Promise<{ dir: string; lines: string[]; append: (text: string) => void }> {
  const { src, lines } = await demoLines();
  const dir = path.join(tmpDir(), "runs", "live");
  fs.mkdirSync(path.join(dir, "blobs"), { recursive: true });
  const append = (text: string) => {
    for (const m of text.matchAll(/sha256:([0-9a-f]{64})/g)) {
      const f = path.join(dir, "blobs", m[1] + ".json");
      if (!fs.existsSync(f)) fs.copyFileSync(path.join(src, "blobs", m[1] + ".json"), f);
    }
    fs.appendFileSync(path.join(dir, "events.jsonl"), text);
  };
  append(
    lines
      .slice(0, n)
      .map((l) => l + "\n")
      .join("") + extra,
  );
  return { dir, lines, append };
}

describe("WorkspaceRuns", () => {
  it("analyses every run off the caller's path and reports summaries and alerts", async () => {
    const ws = await demoWorkspace();
    const s = store();
    const changes: RunsChange[] = [];
    s.onDidChange((c) => changes.push(c));
    for (const name of fs.readdirSync(path.join(ws, "runs")).filter((n) => n.startsWith("demo-seed"))) s.add(path.join(ws, "runs", name), ws);
    // nothing analysed synchronously
    expect(s.list().every((e) => !e.analysis)).toBe(true);
    expect(s.pending).toBe(8);
    await s.idle();
    const seed0 = s.get(path.join(ws, "runs", "demo-seed0"))!;
    expect(seed0.analysis!.summary.status).toBe("intact");
    expect(seed0.analysis!.summary.program).toBe("causeway:demo");
    const high = seed0.analysis!.alerts.filter((a) => a.severity === "high");
    expect(high.map((a) => `${a.tool}#${a.seq}`)).toContain("send_email#18");
    // sites recorded by the SDK come with the analysis
    expect(seed0.analysis!.sites.some((h) => h.file === "examples/demo/agents.ts" && h.line === 25 && h.tool === "send_email")).toBe(true);
    expect(changes.flatMap((c) => c.added)).toHaveLength(8);
    expect(new Set(changes.flatMap((c) => c.changed)).size).toBe(8);
  });

  it("tails a run being written: only the appended bytes are read, and the analysis follows", async () => {
    const { dir, lines, append } = await partialRun(6);
    const s = store();
    s.add(dir, path.dirname(path.dirname(dir)));
    await s.idle();
    expect(s.get(dir)!.analysis!.summary.status).toBe("running");
    expect(s.get(dir)!.analysis!.summary.events).toBe(6);
    const bytesFirst = s.stats.tailBytes;
    expect(bytesFirst).toBe(fs.statSync(path.join(dir, "events.jsonl")).size);
    const rest = lines
      .slice(6)
      .map((l) => l + "\n")
      .join("");
    append(rest);
    s.touch(dir);
    await until(() => s.get(dir)!.analysis!.summary.events === lines.length, 3000, "the appended events");
    expect(s.stats.tailBytes - bytesFirst).toBe(Buffer.byteLength(rest)); // no re-read
    expect(s.get(dir)!.analysis!.summary.status).toBe("intact");
    expect(s.get(dir)!.analysis!.alerts.some((a) => a.severity === "high" && a.tool === "send_email")).toBe(true);
  });

  it("a half-written line is 'running' while it may still be completed, and a cut-off failure once it settles", async () => {
    const { dir, lines, append } = await partialRun(10, "");
    append(lines[10].slice(0, 40)); // no newline
    const s = store({ settleMs: 150 });
    s.add(dir, path.dirname(dir));
    // the file was just written: it may still grow
    await s.idle();
    expect(s.get(dir)!.analysis!.summary.status).toBe("running");
    await until(() => s.get(dir)!.analysis?.summary.status === "failed", 3000, "the cut-off verdict");
    const a = s.get(dir)!.analysis!;
    expect(a.problems.find((p) => p.severity === "error")?.code).toBe("cut-off");
    expect(a.summary.events).toBe(10); // the intact events are still there
    // the writer finishes the line after all: it is read from where the tail stopped
    append(lines[10].slice(40) + "\n");
    s.touch(dir);
    await until(() => s.get(dir)!.analysis?.summary.events === 11, 3000, "the completed line");
    expect(s.get(dir)!.analysis!.summary.status).toBe("running");
  });

  it("removes runs whose folder (or events.jsonl) is deleted", async () => {
    const base = tmpDir();
    const a = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(base, "runs", "a"));
    const b = copyDir(path.join(REFERENCE_RUNS, "demo-seed1"), path.join(base, "runs", "b"));
    const ab = copyDir(path.join(REFERENCE_RUNS, "demo-seed2"), path.join(base, "runs", "ab"));
    const s = store();
    const removed: string[] = [];
    s.onDidChange((c) => removed.push(...c.removed));
    for (const d of [a, b, ab]) s.add(d, base);
    await s.idle();
    expect(s.removeUnder(a)).toEqual([a]); // not "ab", which merely starts with the same letters
    fs.rmSync(path.join(b, "events.jsonl"));
    s.touch(b);
    await until(() => !s.has(b), 2000, "b to go");
    expect(s.list().map((e) => e.dir)).toEqual([ab]);
    await until(() => removed.length === 2, 1000, "the removals to be reported");
    expect(removed.sort()).toEqual([a, b].sort());
  });

  it("keeps the events of a bounded number of finished runs and re-reads the others on demand", async () => {
    const base = tmpDir();
    const dirs = fs.readdirSync(REFERENCE_RUNS).map((n) => copyDir(path.join(REFERENCE_RUNS, n), path.join(base, "runs", n)));
    const s = store({ maxTails: 2 });
    for (const d of dirs) s.add(d, base);
    await s.idle();
    expect(s.tailsHeld).toBeLessThanOrEqual(2);
    expect(s.list().every((e) => e.analysis)).toBe(true);
    const data = s.runData(dirs[0])!;
    expect(data.events.length).toBe(s.get(dirs[0])!.analysis!.summary.events);
  });

  it("analyses in slices: a slow batch is split and reported more than once", async () => {
    const base = tmpDir();
    const src = path.join(REFERENCE_RUNS, "demo-seed0");
    const dirs: string[] = [];
    for (let i = 0; i < 60; i++) dirs.push(copyDir(src, path.join(base, "runs", `r${i}`)));
    const s = store({ sliceMs: 1 });
    let batches = 0;
    s.onDidChange((c) => c.changed.length && batches++);
    for (const d of dirs) s.add(d, base);
    await s.idle();
    expect(batches).toBeGreaterThan(5);
    expect(s.list().every((e) => e.analysis)).toBe(true);
  });

  it("verify checks blobs and keeps the result for the current version only", async () => {
    const base = tmpDir();
    const dir = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(base, "runs", "x"));
    const blob = fs.readdirSync(path.join(dir, "blobs"))[0];
    fs.writeFileSync(path.join(dir, "blobs", blob), '{"v": "forged"}');
    const s = store();
    s.add(dir, base);
    await s.idle();
    // the background analysis checks the blobs too (issue 11): the forged one fails the run without a Verify by hand
    expect(s.get(dir)!.analysis!.summary.status).toBe("failed");
    expect(s.get(dir)!.analysis!.problems.find((p) => p.severity === "error")?.code).toBe("blob-hash");
    const r = s.verify(dir)!;
    expect(r.ok).toBe(false);
    expect(r.problems.some((p) => p.code === "blob-hash")).toBe(true);
    expect(s.get(dir)!.verified!.version).toBe(s.get(dir)!.version);
  });

  it("builds the full investigation once per version", async () => {
    const ws = await demoWorkspace();
    const s = store();
    const dir = path.join(ws, "runs", "demo-seed0");
    s.add(dir, ws);
    const inv = s.investigation(dir)!;
    expect(inv.schema).toBe("causeway.investigation.v1");
    expect(s.investigation(dir)).toBe(inv);
    s.refresh(dir);
    expect(s.investigation(dir)).not.toBe(inv);
  });
});

describe("WorkspaceRuns.pollLive", () => {
  it("re-reads a run being written whose file grew without a file event", async () => {
    const { dir, lines, append } = await partialRun(8);
    const s = store();
    s.add(dir, path.dirname(dir));
    await s.idle();
    expect(s.pollLive()).toBe(0); // nothing new
    append(lines[8] + "\n");
    expect(s.pollLive()).toBe(1);
    await until(() => s.get(dir)!.analysis?.summary.events === 9, 2000, "the new event");
    // a finished run is not polled
    append(
      lines
        .slice(9)
        .map((l) => l + "\n")
        .join(""),
    );
    s.refresh(dir);
    await until(() => s.get(dir)!.analysis?.summary.status === "intact", 2000, "the run to finish");
    expect(s.pollLive()).toBe(0);
  });
});

describe("holding the background analysis", () => {
  it("announces added runs but analyses only urgent ones until released", async () => {
    const ws = await demoWorkspace();
    const dirs = fs.readdirSync(path.join(ws, "runs")).map((n) => path.join(ws, "runs", n));
    const s = store();
    const changes: RunsChange[] = [];
    s.onDidChange((c) => changes.push(c));
    const release = s.hold();
    for (const d of dirs.slice(1)) s.add(d, ws);
    await until(() => changes.some((c) => c.added.length === dirs.length - 1));
    s.add(dirs[0], ws, true); // asked for (a new run, a click): analysed even while held
    await until(() => s.get(dirs[0])?.analysis !== undefined);
    // the slice that analysed it would have gone on with the queue, were it not held
    expect(dirs.slice(1).filter((d) => s.get(d)?.analysis)).toEqual([]);
    expect(s.pending).toBe(dirs.length - 1);
    release();
    release(); // twice is once
    await s.idle();
    expect(dirs.every((d) => s.get(d)?.analysis)).toBe(true);
  });
});

describe("announcing only what changed (the Runs view refreshes a run's row for each announcement)", () => {
  it("a file event after which events.jsonl and tests.jsonl are unchanged re-reads nothing", async () => {
    const a = await partialRun(8);
    const b = await partialRun(8);
    const s = store();
    s.add(a.dir, path.dirname(a.dir));
    s.add(b.dir, path.dirname(b.dir));
    await s.idle();
    const version = s.get(a.dir)!.version;
    // a late event for a: nothing changed. Then a real change of b, touched after it: once b's
    // change is read, a's (earlier, same debounce) has been handled too
    s.touch(a.dir);
    b.append(b.lines[8] + "\n");
    s.touch(b.dir);
    await until(() => s.get(b.dir)!.analysis?.summary.events === 9, 3000, "b's new event");
    expect(s.get(a.dir)!.version).toBe(version);
    // a real change of a is read
    a.append(a.lines[8] + "\n");
    s.touch(a.dir);
    await until(() => s.get(a.dir)!.analysis?.summary.events === 9, 3000, "a's new event");
    expect(s.get(a.dir)!.version).toBe(version + 1);
    // a new tests.jsonl is a change too
    fs.writeFileSync(path.join(a.dir, "tests.jsonl"), "");
    s.touch(a.dir);
    await until(() => s.get(a.dir)!.version === version + 2, 3000, "tests.jsonl read");
  });

  it("a blob check spread over many slices announces the run once when it finds nothing", async () => {
    const base = tmpDir();
    const dir = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(base, "runs", "r"));
    // a slice this short checks about one blob: the run's check needs many slices
    const s = store({ sliceMs: 0.001 });
    const changed: string[] = [];
    s.onDidChange((c) => changed.push(...c.changed));
    s.add(dir, base);
    await s.idle();
    expect(s.stats.slices).toBeGreaterThan(3);
    expect(s.get(dir)!.analysis!.summary.status).toBe("intact");
    expect(changed).toEqual([dir]);
  });

  it("but announces the run again when a later slice finds a bad blob", async () => {
    const base = tmpDir();
    const dir = copyDir(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(base, "runs", "r"));
    for (const b of fs.readdirSync(path.join(dir, "blobs"))) fs.writeFileSync(path.join(dir, "blobs", b), '{"v": "forged"}');
    const s = store({ sliceMs: 0.001 });
    const changed: string[] = [];
    s.onDidChange((c) => changed.push(...c.changed));
    s.add(dir, base);
    await s.idle();
    expect(s.get(dir)!.analysis!.summary.status).toBe("failed");
    expect(changed.length).toBeGreaterThan(1);
  });
});
