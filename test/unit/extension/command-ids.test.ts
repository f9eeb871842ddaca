import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { COMMANDS, INTERNAL_COMMANDS } from "../../../extension/logic/command-ids";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? sources(rel) : e.name.endsWith(".ts") ? [rel] : [];
  });
}
const code = Object.fromEntries(
  sources("extension")
    .filter((f) => f !== "extension/logic/command-ids.ts")
    .map((f) => [f, fs.readFileSync(path.join(ROOT, f), "utf8")]),
);

describe("command ids", () => {
  const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);

  it("are the ones package.json contributes, no more and no fewer", () => {
    expect([...contributed].sort()).toEqual(Object.values(COMMANDS).sort());
    for (const id of Object.values(INTERNAL_COMMANDS)) expect(contributed).not.toContain(id);
  });

  it("are the only commands the menus name", () => {
    const named = Object.values(pkg.contributes.menus as Record<string, { command: string }[]>).flatMap((items) => items.map((m) => m.command));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((id) => !contributed.includes(id))).toEqual([]);
  });

  it("are each registered, through the constants", () => {
    const all = Object.values(code).join("\n");
    const unregistered = [
      ...Object.keys(COMMANDS).filter((k) => !new RegExp(`(registerCommand|reg)\\(\\s*COMMANDS\\.${k}\\b`).test(all) && k !== "preloadPath"),
      ...Object.keys(INTERNAL_COMMANDS).filter((k) => !new RegExp(`registerCommand\\(\\s*INTERNAL_COMMANDS\\.${k}\\b`).test(all)),
    ];
    expect(unregistered).toEqual([]);
    // the preload's path is registered under the name the launch configuration uses
    expect(all).toMatch(/registerCommand\(PRELOAD_COMMAND\b/);
  });

  it("are never written out as strings where a command is registered, run or attached", () => {
    const literal = /(registerCommand\(|executeCommand\(|command:\s*|reg\()\s*["'`]causeway\.[A-Za-z]+/g;
    const found = Object.entries(code).flatMap(([f, src]) => [...src.matchAll(literal)].map((m) => `${f}: ${m[0]}`));
    expect(found).toEqual([]);
  });
});
