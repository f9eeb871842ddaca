/**
 * Localisation: package.json's contributions name their strings by %key%, each key has its
 * English text in package.nls.json (and none is left over), the .vsix ships package.nls.json, and
 * the extension's notifications go through vscode.l10n.t.
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers";

describe("localisation", () => {
  const pkgText = fs.readFileSync(path.join(ROOT, "package.json"), "utf8");
  const pkg = JSON.parse(pkgText) as { contributes: { commands: { title: string; category?: string }[]; configuration: { properties: Record<string, { description?: string; markdownDescription?: string }> } } };
  const nls = JSON.parse(fs.readFileSync(path.join(ROOT, "package.nls.json"), "utf8")) as Record<string, string>;

  it("every contribution string is a %key% with its text in package.nls.json", () => {
    const used = new Set([...pkgText.matchAll(/"%([A-Za-z0-9_.-]+)%"/g)].map((m) => m[1]));
    expect(used.size).toBeGreaterThan(25);
    expect([...used].filter((k) => !(k in nls))).toEqual([]);
    expect(Object.keys(nls).filter((k) => !used.has(k))).toEqual([]);
    for (const c of pkg.contributes.commands) {
      expect(c.title).toMatch(/^%.+%$/);
      if (c.category) expect(c.category).toBe("%category%");
    }
    for (const [name, p] of Object.entries(pkg.contributes.configuration.properties)) expect(p.description ?? p.markdownDescription, name).toMatch(/^%.+%$/);
    expect(fs.readFileSync(path.join(ROOT, ".vscodeignore"), "utf8")).toMatch(/^!package\.nls\.json$/m);
  });

  it("the extension's notifications are localised strings", () => {
    const dir = path.join(ROOT, "extension");
    const raw: string[] = [];
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
      const src = fs.readFileSync(path.join(dir, f), "utf8");
      for (const m of src.matchAll(/show(?:Information|Warning|Error)Message\(\s*([^\s(])/g)) {
        // the message argument starts with vscode.l10n.t(…), or a variable/conditional holding such strings
        const rest = src.slice(m.index + m[0].length - 1, m.index + m[0].length + 200);
        if (/^["'`]/.test(rest)) raw.push(`${f}: ${rest.slice(0, 60)}`);
        else if (/^\w+\s*\?/.test(rest) && /\?\s*["'`]/.test(rest.slice(0, 120))) raw.push(`${f}: ${rest.slice(0, 60)}`);
      }
    }
    expect(raw).toEqual([]);
  });
});
