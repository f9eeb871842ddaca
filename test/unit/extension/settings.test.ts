import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { settingsFrom, SettingsByFolder, type Settings } from "../../../extension/logic/settings";
import { eventsGlob, isUnderRunsGlob } from "../../../extension/logic/glob";
import { ROOT } from "./helpers";

/**
 * VS Code's resolution of a resource-scoped setting, as its configuration model does it: the
 * folder's own value, else the workspace's, else the default.
 */
function workspace(values: { workspace: Record<string, unknown>; folders: Record<string, Record<string, unknown>> }) {
  const reads: (string | undefined)[] = [];
  const read = (folder: string | undefined): Settings => {
    reads.push(folder);
    return settingsFrom((key) => (folder !== undefined && key in (values.folders[folder] ?? {}) ? values.folders[folder][key] : values.workspace[key]));
  };
  return { read, reads };
}

describe("settings per workspace folder", () => {
  const A = "/ws/a";
  const B = "/ws/b";
  const NESTED = "/ws/a/inner";

  it("reads runsGlob and allowedPrograms for the folder holding the run, not the workspace's", () => {
    const w = workspace({
      workspace: { runsGlob: "**/runs/**", allowedPrograms: ["agents/ws.ts:SYSTEM"] },
      folders: { [B]: { runsGlob: "traces/**", allowedPrograms: ["agents/b.ts:SYSTEM"] }, [NESTED]: { runsGlob: "out/**" } },
    });
    const s = new SettingsByFolder(w.read, () => [A, B, NESTED]);
    expect(s.get(`${A}/runs/r1`)).toMatchObject({ runsGlob: "**/runs/**", allowed: ["agents/ws.ts:SYSTEM"] });
    expect(s.get(`${B}/traces/r2`)).toMatchObject({ runsGlob: "traces/**", allowed: ["agents/b.ts:SYSTEM"] });
    // nested folders: the innermost one's values
    expect(s.get(`${NESTED}/out/r3`)).toMatchObject({ runsGlob: "out/**", allowed: ["agents/ws.ts:SYSTEM"] });
    expect(s.get()).toMatchObject({ runsGlob: "**/runs/**" });
    expect(s.get("/elsewhere/r4")).toMatchObject({ runsGlob: "**/runs/**" });
    // each folder read once (with itself as the resource), until cleared
    s.get(`${B}/traces/r5`);
    expect(w.reads.filter((r) => r === B)).toHaveLength(1);
    s.clear();
    s.get(`${B}/traces/r5`);
    expect(w.reads.filter((r) => r === B)).toHaveLength(2);
    // a folder's glob decides which of its folders hold runs
    expect(isUnderRunsGlob(`${B}/traces/r2`, B, s.get(B).runsGlob)).toBe(true);
    expect(isUnderRunsGlob(`${B}/runs/r2`, B, s.get(B).runsGlob)).toBe(false);
    expect(eventsGlob(s.get(B).runsGlob)).toBe("traces/**/events.jsonl");
  });

  it("sees a change in one folder's setting", () => {
    const values = {
      workspace: { runsGlob: "**/runs/**" } as Record<string, unknown>,
      folders: { [B]: { runsGlob: "traces/**" } } as Record<string, Record<string, unknown>>,
    };
    const s = new SettingsByFolder(workspace(values).read, () => [A, B]);
    const before = s.fingerprint("runsGlob");
    values.folders[B].runsGlob = "logs/**";
    s.clear();
    expect(s.fingerprint("runsGlob")).not.toBe(before);
  });

  it("parses values with bounds and defaults", () => {
    expect(settingsFrom(() => undefined)).toEqual({
      runsGlob: "**/runs/**",
      codeLens: true,
      n: 20,
      nMax: 160,
      allowed: [],
      workers: 1,
      timeoutMs: 600_000,
      spans: true,
      confirmAboveUsd: null,
      prices: {},
    });
    expect(settingsFrom((k) => ({ "test.n": 50, "test.nMax": 10, allowedPrograms: ["a.ts:S", 3, ""], "replay.workers": 0 })[k])).toMatchObject({
      n: 50,
      nMax: 50,
      allowed: ["a.ts:S"],
      workers: 1,
    });
  });

  it("activates on any events.jsonl, whatever runsGlob says (package.json cannot read a setting)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      activationEvents: string[];
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    expect(pkg.activationEvents).toContain("workspaceContains:**/events.jsonl");
    expect(pkg.activationEvents.filter((e) => e.startsWith("workspaceContains:") && e !== "workspaceContains:**/events.jsonl")).toEqual([]);
    const props = pkg.contributes.configuration.properties;
    expect(props["causeway.runsGlob"].scope).toBe("resource");
    expect(props["causeway.allowedPrograms"].scope).toBe("resource");
  });
});
