import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { SiteResolver, programModule } from "../../../extension/logic/sites";
import { tmpDir } from "./helpers";

function layout() {
  const ws = tmpDir();
  const ext = tmpDir("cw-ext-install-");
  const write = (p: string) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, "// source\n");
  };
  write(path.join(ext, "examples/demo/agents.ts"));
  write(path.join(ws, "packages/bot/src/agents.ts"));
  write(path.join(ws, "packages/bot/system.ts"));
  write(path.join(ws, "secret.txt"));
  fs.mkdirSync(path.join(ws, "packages/bot/runs/r1"), { recursive: true });
  fs.mkdirSync(path.join(ws, "runs/demo-seed0"), { recursive: true });
  return { ws, ext, r: new SiteResolver({ folders: [ws], extensionPath: ext }) };
}

describe("SiteResolver", () => {
  it("resolves the built-in demo's sites in the extension's own sources when the workspace lacks them", () => {
    const { ws, ext, r } = layout();
    const hit = r.resolve("examples/demo/agents.ts", path.join(ws, "runs/demo-seed0"), "causeway:demo");
    expect(hit).toEqual({ file: path.join(ext, "examples/demo/agents.ts"), inWorkspace: false });
  });

  it("prefers the workspace's copy of a site's file", () => {
    const { ws, r } = layout();
    fs.mkdirSync(path.join(ws, "examples/demo"), { recursive: true });
    fs.writeFileSync(path.join(ws, "examples/demo/agents.ts"), "");
    expect(r.resolve("examples/demo/agents.ts", path.join(ws, "runs/demo-seed0"), "causeway:demo")).toEqual({
      file: path.join(ws, "examples/demo/agents.ts"),
      inWorkspace: true,
    });
  });

  it("finds the folder a workspace program was recorded from (the one holding its module)", () => {
    const { ws, r } = layout();
    const run = path.join(ws, "packages/bot/runs/r1");
    expect(r.programRoot(run, "system.ts:SYSTEM")).toBe(path.join(ws, "packages/bot"));
    expect(r.resolve("src/agents.ts", run, "system.ts:SYSTEM")).toEqual({ file: path.join(ws, "packages/bot/src/agents.ts"), inWorkspace: true });
  });

  it("never leaves the root a site is resolved against, and ignores absolute paths outside the workspace", () => {
    const { ws, r } = layout();
    const run = path.join(ws, "runs/demo-seed0");
    expect(r.resolve("../../../../../../etc/passwd", run, "causeway:demo")).toBeUndefined();
    expect(r.resolve("/etc/passwd", run, "causeway:demo")).toBeUndefined();
    expect(r.resolve(path.join(ws, "secret.txt"), run, "x.ts:S")).toEqual({ file: path.join(ws, "secret.txt"), inWorkspace: true });
    expect(r.resolve("nope.ts", run, "x.ts:S")).toBeUndefined();
  });

  it("reads the module of MODULE:EXPORT program names", () => {
    expect(programModule("agents/system.ts:SYSTEM")).toBe("agents/system.ts");
    expect(programModule("causeway:demo")).toBeUndefined();
    expect(programModule("C:SYSTEM")).toBeUndefined();
    expect(programModule("")).toBeUndefined();
  });
});
