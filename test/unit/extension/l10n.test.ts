/**
 * Localisation: package.json's contributions name their strings by %key%, each key has its
 * English text in package.nls.json (and none is left over), the .vsix ships package.nls.json, and
 * the extension's notifications go through vscode.l10n.t.
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { REFERENCE_RUNS, ROOT } from "./helpers";
import { readRun } from "../../../core/log/reader";
import { nodeId } from "../../../core/graph/graph";
import { analyseRun } from "../../../extension/logic/analysis";
import { agentItem, eventItem, problemsItem, runItem } from "../../../extension/logic/tree";
import { setTranslator, untranslated } from "../../../extension/logic/l10n";

describe("localisation", () => {
  const pkgText = fs.readFileSync(path.join(ROOT, "package.json"), "utf8");
  const pkg = JSON.parse(pkgText) as {
    contributes: {
      commands: { title: string; category?: string }[];
      configuration: { properties: Record<string, { description?: string; markdownDescription?: string }> };
    };
  };
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

  it("the runs tree's labels, descriptions and tooltips go through the translator installed at activation", () => {
    const dir = path.join(REFERENCE_RUNS, "demo-seed0");
    const run = readRun(dir);
    const entry = { dir, root: path.dirname(dir), version: 1, analysedVersion: 1, analysis: analyseRun(run) };
    const english = { run: runItem(entry), reading: runItem({ ...entry, analysis: undefined }) };
    // a translator that marks what it was given: every sentence of a tooltip must carry the mark
    setTranslator((message, ...args) => `«${untranslated(message, ...args)}»`);
    try {
      const r = runItem(entry);
      const tip = r.tooltip.split("\n").slice(1); // the first line is the run's id and folder
      expect(tip.length).toBeGreaterThan(5);
      for (const line of tip) expect(line, line).toMatch(/^«.*»/);
      expect(r.description).toMatch(/^«intact» · «1 high»/);
      expect(runItem({ ...entry, analysis: undefined }).description).toBe("«reading…»");
      const a = agentItem(dir, run, "researcher", entry.analysis.alerts);
      for (const line of a.tooltip.split("\n")) expect(line, line).toMatch(/^«.*»$/);
      const email = run.events.find((e) => e.type === "action" && e.tool === "send_email")!;
      const ev = eventItem(dir, run, email, entry.analysis.alerts, [], nodeId);
      expect(ev.tooltip.split("\n")[0]).toMatch(/^«action #\d+ by .* \(events\.jsonl line \d+\)»$/);
      expect(problemsItem(dir, 2, 0).label).toBe("«verify failed»");
      expect(problemsItem(dir, 2, 0).description).toBe("«2 errors»");
    } finally {
      setTranslator(untranslated);
    }
    // the default fills placeholders as vscode.l10n.t does without a bundle
    expect(runItem(entry)).toEqual(english.run);
    expect(english.reading.description).toBe("reading…");
  });
});
