import { describe, it, expect, afterEach } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRemembered, rememberedFile, writeRemembered } from "../../../extension/logic/remembered-runs";

const tmps: string[] = [];
afterEach(() => {
  for (const d of tmps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = (name: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  tmps.push(d);
  return d;
};
function runs(root: string, names: string[]): string[] {
  return names.map((n) => {
    const d = path.join(root, n);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, "events.jsonl"), "{}\n");
    return d;
  });
}

describe("the run folders remembered between sessions", () => {
  it("lists what the last session found, per workspace folder and runs glob, without the runs gone since", async () => {
    const storage = tmp("storage");
    const ws = tmp("ws");
    const other = tmp("ws2");
    const dirs = runs(ws, ["runs/a", "runs/b", "runs/c"]);
    await writeRemembered(storage, ws, "**/runs/**", dirs);
    await writeRemembered(storage, other, "**/runs/**", runs(other, ["runs/z"]));
    expect(readRemembered(storage, ws, "**/runs/**").sort()).toEqual(dirs);
    // another glob, another folder, nothing remembered yet: nothing
    expect(readRemembered(storage, ws, "out/**")).toEqual([]);
    expect(readRemembered(storage, tmp("ws3"), "**/runs/**")).toEqual([]);
    // a run deleted since is not listed (the walk would drop it: it never shows)
    fs.rmSync(dirs[1], { recursive: true });
    expect(readRemembered(storage, ws, "**/runs/**").sort()).toEqual([dirs[0], dirs[2]]);
    // written then renamed: no temporary file is left beside it
    expect(fs.readdirSync(path.dirname(rememberedFile(storage, ws, "**/runs/**"))).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("reads a damaged or hostile file as nothing, or only the run folders inside the workspace folder", async () => {
    const storage = tmp("storage");
    const ws = tmp("ws");
    const outside = tmp("outside");
    runs(outside, ["r"]);
    const [inside] = runs(ws, ["runs/in"]);
    const file = rememberedFile(storage, ws, "**/runs/**");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    for (const text of [
      "",
      "{",
      "null",
      "[]",
      '"x"',
      JSON.stringify({ folder: "/elsewhere", runsGlob: "**/runs/**", dirs: ["runs/in"] }),
      JSON.stringify({ folder: ws, runsGlob: "**/runs/**", dirs: "runs/in" }),
    ]) {
      fs.writeFileSync(file, text);
      expect(readRemembered(storage, ws, "**/runs/**"), text).toEqual([]);
    }
    const escapes = [path.join(outside, "r"), path.relative(ws, path.join(outside, "r")), "../../../etc", 42, null, { x: 1 }, "runs/in"];
    fs.writeFileSync(file, JSON.stringify({ folder: ws, runsGlob: "**/runs/**", dirs: escapes }));
    expect(readRemembered(storage, ws, "**/runs/**")).toEqual([inside]);
  });
});
