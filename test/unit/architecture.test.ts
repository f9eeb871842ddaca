/**
 * The layers hold: the folders of core/, extension/ and webview/ import each other without a
 * cycle, their files too (a type-only import counts: a cycle of any kind means no one of its files
 * can be read alone), no file but the public APIs re-exports another's names, nothing imports a
 * bundle's entry point (core/index.ts among them), core/ keeps no loose modules, and the lint rule
 * that keeps `vscode` out of the code running outside VS Code exists and fires. Imports are read with the TypeScript compiler's own pre-processor (static, dynamic
 * and type-only imports, `export … from` and require()).
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";

interface Edge {
  from: string;
  to: string;
}

/** The layer a file belongs to: its folder under a root (deeper folders count as that folder), or the root. */
function folderOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The strongly connected sets of a graph with more than one node (Tarjan), each sorted. */
function stronglyConnected(step: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sets: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of step.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) sets.push(set.sort());
    }
  };
  for (const v of [...step.keys()].sort()) if (!index.has(v)) visit(v);
  return sets;
}

/** Each node's steps to other nodes, with the first file import that makes each step. */
function stepsOf(fileEdges: readonly Edge[], nodeOf: (file: string) => string): Map<string, Map<string, Edge>> {
  const step = new Map<string, Map<string, Edge>>();
  for (const e of fileEdges) {
    const a = nodeOf(e.from);
    const b = nodeOf(e.to);
    if (a === b) continue;
    if (!step.has(a)) step.set(a, new Map());
    if (!step.get(a)!.has(b)) step.get(a)!.set(b, e);
  }
  return step;
}

/**
 * The strongly connected sets of the folder graph, each as the lines of its edges: "a -> b (the
 * first file import that makes the step)". An acyclic graph has none.
 */
function findCycles(fileEdges: readonly Edge[], nodeOf: (file: string) => string): string[][] {
  const step = stepsOf(fileEdges, nodeOf);
  return stronglyConnected(step).map((set) =>
    set.flatMap((a) => [...(step.get(a) ?? [])].filter(([b]) => set.includes(b)).map(([b, e]) => `${a} -> ${b} (${e.from} imports ${e.to})`)),
  );
}

/**
 * The cycles between files: for each strongly connected set, its shortest cycle through its first
 * file ("a.ts -> b.ts -> a.ts"), and the set's other files when the cycle leaves some out.
 */
function fileCycles(fileEdges: readonly Edge[]): string[] {
  const step = stepsOf(fileEdges, (f) => f);
  const selfImports = fileEdges.filter((e) => e.from === e.to).map((e) => `${e.from} -> ${e.to}`);
  return [
    ...selfImports,
    ...stronglyConnected(step).map((set) => {
      const start = set[0];
      const before = new Map<string, string>();
      const queue = [start];
      for (let i = 0; i < queue.length && !before.has(start); i++)
        for (const next of step.get(queue[i])?.keys() ?? [])
          if (set.includes(next) && !before.has(next)) {
            before.set(next, queue[i]);
            queue.push(next);
          }
      const path = [start];
      for (let at = before.get(start)!; at !== start; at = before.get(at)!) path.unshift(at);
      path.unshift(start);
      const rest = set.filter((f) => !path.includes(f));
      return path.join(" -> ") + (rest.length ? ` (in the same set: ${rest.join(", ")})` : "");
    }),
  ];
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCES = ["core", "extension", "webview"];

/**
 * Bundles' entry points at a root's top level (esbuild.mjs): they wire layers together and belong
 * to none, so each is a node of its own, and nothing may import one.
 */
const ENTRIES = ["core/index.ts", "webview/main.tsx", "webview/cytoscape.ts"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== "node_modules") out.push(...sourceFiles(rel));
    } else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** The source file a relative specifier names, or undefined (a package, a non-source file). */
function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec)).replace(/\.[cm]?js$/, "");
  for (const cand of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) {
    const abs = path.join(ROOT, cand);
    if (fs.existsSync(abs) && fs.statSync(abs).isFile() && /\.tsx?$/.test(cand)) return cand;
  }
  return undefined;
}

function importEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of SOURCES.flatMap(sourceFiles)) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
    for (const imp of info.importedFiles) {
      const target = resolveImport(file, imp.fileName);
      if (target) edges.push({ from: file, to: target });
    }
  }
  return edges;
}

/**
 * The names a module re-exports: `export … from "…"` (and `export * from`), and `export { x }` of
 * a name it imported. Each as "file: names from spec".
 */
function reExports(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const imported = new Map<string, string>();
  for (const st of sf.statements) {
    const bindings = ts.isImportDeclaration(st) ? st.importClause?.namedBindings : undefined;
    if (bindings && ts.isNamedImports(bindings) && ts.isStringLiteral((st as ts.ImportDeclaration).moduleSpecifier))
      for (const el of bindings.elements) imported.set(el.name.text, ((st as ts.ImportDeclaration).moduleSpecifier as ts.StringLiteral).text);
  }
  const found: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isExportDeclaration(st)) continue;
    const names = st.exportClause && ts.isNamedExports(st.exportClause) ? st.exportClause.elements.map((el) => (el.propertyName ?? el.name).text) : ["*"];
    if (st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) found.push(`${file}: ${names.join(", ")} from ${st.moduleSpecifier.text}`);
    else for (const n of names.filter((x) => imported.has(x))) found.push(`${file}: ${n} from ${imported.get(n)}`);
  }
  return found;
}

/** The two files whose job is to gather names: the public API and the API a loaded program gets. */
const API_FILES = ["core/index.ts", "core/replay/program-api.ts"];

const edges = importEdges();
const node = (file: string) => (ENTRIES.includes(file) ? file : folderOf(file));

describe("the folder graph", () => {
  it("reads the imports it checks (a scan that found none would pass anything)", () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual({ from: "core/replay/context.ts", to: "core/sdk/system.ts" });
    expect(edges).toContainEqual({ from: "webview/components/App.tsx", to: "webview/state.ts" });
  });

  it("has no cycle between folders", () => {
    const cycles = findCycles(edges, node);
    // each cycle with an import that makes each of its steps, to fix by moving the shared piece down
    expect(cycles.map((c) => c.join("\n"))).toEqual([]);
  });

  it("finds a cycle when there is one", () => {
    const planted: Edge[] = [...edges, { from: "core/log/reader.ts", to: "core/replay/context.ts" }];
    const cycles = findCycles(planted, node);
    expect(cycles.length).toBeGreaterThan(0);
    expect(cycles.flat().join("\n")).toContain("core/log -> core/replay (core/log/reader.ts imports core/replay/context.ts)");
  });

  it("has no cycle between files, type-only imports included", () => {
    // each cycle from its first file back to it, to fix by moving the shared piece (often a type) to a file both import
    expect(fileCycles(edges)).toEqual([]);
  });

  it("reads type-only imports, and finds a cycle between files when there is one", () => {
    // causes.ts imports only types from types.ts
    expect(edges).toContainEqual({ from: "core/analysis/causes.ts", to: "core/analysis/types.ts" });
    const back: Edge = { from: "core/analysis/types.ts", to: "core/analysis/causes.ts" };
    expect(fileCycles([...edges, back])).toEqual(["core/analysis/causes.ts -> core/analysis/types.ts -> core/analysis/causes.ts"]);
    const around: Edge[] = [
      { from: "core/util/guards.ts", to: "core/log/hash.ts" },
      { from: "core/log/hash.ts", to: "core/util/numbers.ts" },
      { from: "core/util/numbers.ts", to: "core/util/guards.ts" },
      { from: "core/util/numbers.ts", to: "core/util/sse.ts" },
      { from: "core/util/sse.ts", to: "core/util/numbers.ts" },
    ];
    expect(fileCycles(around)).toEqual([
      "core/log/hash.ts -> core/util/numbers.ts -> core/util/guards.ts -> core/log/hash.ts (in the same set: core/util/sse.ts)",
    ]);
    expect(fileCycles([{ from: "core/util/sse.ts", to: "core/util/sse.ts" }])).toEqual(["core/util/sse.ts -> core/util/sse.ts"]);
  });

  it("re-exports no name outside the public APIs: each is imported from the file that defines it", () => {
    const found = SOURCES.flatMap(sourceFiles)
      .filter((f) => !API_FILES.includes(f))
      .flatMap((f) => reExports(f, fs.readFileSync(path.join(ROOT, f), "utf8")));
    expect(found).toEqual([]);
  });

  it("finds a re-export when there is one", () => {
    const text = [
      'import { a, type B } from "./a";',
      'import { c } from "./c";',
      "export const own = c;",
      "export { a };",
      'export { d as e } from "./d";',
      'export type * from "./f";',
    ].join("\n");
    expect(reExports("core/x/y.ts", text)).toEqual(["core/x/y.ts: a from ./a", "core/x/y.ts: d from ./d", "core/x/y.ts: * from ./f"]);
    expect(API_FILES.flatMap((f) => reExports(f, fs.readFileSync(path.join(ROOT, f), "utf8"))).length).toBeGreaterThan(50);
  });

  it("imports no bundle entry point, and core/index.ts from nowhere inside core/", () => {
    expect(edges.filter((e) => ENTRIES.includes(e.to))).toEqual([]);
  });

  it("keeps no loose module at the top of core/ but its index", () => {
    const loose = fs.readdirSync(path.join(ROOT, "core")).filter((f) => /\.tsx?$/.test(f));
    expect(loose).toEqual(["index.ts"]);
  });
});

describe("the program API", () => {
  it("gives a loaded program the public API's own objects, all but the report builders", async () => {
    const api: Record<string, unknown> = await import("../../core/index");
    const program: Record<string, unknown> = await import("../../core/replay/program-api");
    const REPORT_ONLY = ["buildCase", "caseHtml", "caseMarkdown"];
    const missing = Object.keys(api).filter((k) => !(k in program));
    expect(missing.sort(), "add the index's new names to core/replay/program-api.ts").toEqual(REPORT_ONLY);
    for (const k of Object.keys(program)) expect(program[k], k).toBe(api[k]);
  });
});

describe("the vscode import rule", () => {
  const code = 'import * as vscode from "vscode";\nexport const x = vscode;\n';

  async function ruleFor(file: string): Promise<Linter.RuleEntry | undefined> {
    const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(file)) as Linter.Config;
    return config.rules?.["no-restricted-imports"];
  }

  async function messages(file: string): Promise<string[]> {
    const rule = await ruleFor(file);
    const linter = new Linter({ configType: "flat" });
    const config: Linter.Config[] = [
      { files: ["**/*.ts", "**/*.tsx"], languageOptions: { parser: tseslint.parser }, rules: rule ? { "no-restricted-imports": rule } : {} },
    ];
    return linter.verify(code, config, path.join(ROOT, file)).map((m) => `${m.ruleId}: ${m.message}`);
  }

  it("fails a vscode import in core/, extension/logic/ and webview/", async () => {
    for (const file of ["core/log/reader.ts", "extension/logic/tree.ts", "webview/state.ts", "webview/components/App.tsx"]) {
      const found = await messages(file);
      expect(found, file).toHaveLength(1);
      expect(found[0]).toMatch(/^no-restricted-imports: .*run outside VS Code/);
    }
  });

  it("lets the extension host import vscode", async () => {
    expect(await messages("extension/panel.ts")).toEqual([]);
  });
});
