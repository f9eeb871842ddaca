import { describe, it, expect } from "vitest";
import path from "node:path";
import { eventsGlob, globToRegExp, isRunDirAllowed, isUnderRunsGlob, normalizeRunsGlob, runDirOfFile, runFilesGlob } from "../../../extension/logic/glob";

describe("the runs folders setting", () => {
  it("is cleaned and defaults to **/runs/**", () => {
    expect(normalizeRunsGlob(undefined)).toBe("**/runs/**");
    expect(normalizeRunsGlob("  ./traces/**/ ")).toBe("traces/**");
    expect(eventsGlob("**/runs/**")).toBe("**/runs/**/events.jsonl");
    expect(runFilesGlob("out")).toBe("out/{events,tests}.jsonl");
  });

  it("matches like VS Code's globs: ** spans folders (or none), * stays in one, braces are alternatives", () => {
    const re = globToRegExp("**/runs/**/events.jsonl");
    expect(re.test("runs/a/events.jsonl")).toBe(true);
    expect(re.test("x/y/runs/a/b/events.jsonl")).toBe(true);
    expect(re.test("runs/events.jsonl")).toBe(true);
    expect(re.test("myruns/a/events.jsonl")).toBe(false);
    expect(re.test("runs/a/events.jsonl.bak")).toBe(false);
    expect(globToRegExp("out/*/{events,tests}.jsonl").test("out/r1/tests.jsonl")).toBe(true);
    expect(globToRegExp("out/*/{events,tests}.jsonl").test("out/r1/x/tests.jsonl")).toBe(false);
    expect(globToRegExp("a.b/?.json").test("a.b/x.json")).toBe(true);
    expect(globToRegExp("a.b/?.json").test("aXb/x.json")).toBe(false);
  });

  it("says whether a new folder would be a run, keeping node_modules and blob folders out", () => {
    const ws = "/ws";
    expect(isUnderRunsGlob("/ws/runs/r1", ws, "**/runs/**")).toBe(true);
    expect(isUnderRunsGlob("/ws/src/r1", ws, "**/runs/**")).toBe(false);
    expect(isUnderRunsGlob("/ws/node_modules/x/runs/r1", ws, "**/runs/**")).toBe(false);
    expect(isUnderRunsGlob("/elsewhere/runs/r1", ws, "**/runs/**")).toBe(false);
    expect(isRunDirAllowed("/ws/runs/r1/blobs")).toBe(false);
    expect(runDirOfFile(path.join("/ws/runs/r1", "tests.jsonl"))).toEqual({ dir: "/ws/runs/r1", kind: "tests" });
    expect(runDirOfFile("/ws/runs/r1/blobs/x.json")).toBeUndefined();
  });
});
