/**
 * Rooms with one job: no file in core/, extension/ or webview/ passes 500 lines, and no function
 * passes 120 lines unless a `// long: <reason>` comment on its first line (or the line above it)
 * says why. Functions are measured with the TypeScript compiler's parser, from the first line of
 * their declaration to their closing brace. Today's offenders are listed below with the reason
 * each is there; the list only shrinks: a new offender fails, and so does a listed one that is no
 * longer over (take it off the list).
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FOLDERS = ["core", "extension", "webview"];
const FILE_LINES_MAX = 500;
const FUNCTION_LINES_MAX = 120;

/** Files over the limit today, and why. */
const LONG_FILES: Record<string, string> = {};

/** Functions over the limit today (file#name), and why. */
const LONG_FUNCTIONS: Record<string, string> = {};

interface Measured {
  file: string;
  lines: number;
  functions: { name: string; line: number; lines: number; marked: boolean }[];
}

/** Every .ts and .tsx source under the folders (declaration files and node_modules left out). */
function sources(root = ROOT, folders = FOLDERS): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules") walk(p);
      } else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(path.relative(root, p).split(path.sep).join("/"));
    }
  };
  for (const f of folders) if (fs.existsSync(path.join(root, f))) walk(path.join(root, f));
  return out.sort();
}

/** A function's name: its own, its variable's or property's, qualified by its class; else where it is. */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const own = (n: ts.Node): string | undefined => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n) || ts.isFunctionExpression(n)) && n.name)
      return n.name.getText(sf);
    if (ts.isConstructorDeclaration(n)) return "constructor";
    const p = n.parent;
    if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText(sf);
    return undefined;
  };
  const name = own(node);
  const cls = node.parent && ts.isClassLike(node.parent) ? node.parent.name?.getText(sf) : undefined;
  if (name) return cls ? `${cls}.${name}` : name;
  // an unnamed callback: named by the function it is in
  for (let p = node.parent; p; p = p.parent) {
    if (ts.isFunctionLike(p)) return `${nameOf(p, sf)}/(callback)`;
  }
  return "(callback)";
}

/** The file's line count and every function's length in lines, with whether it carries a `// long:` reason. */
function measure(file: string, text: string): Measured {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = text.split("\n");
  const functions: Measured["functions"] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const marked = [lines[first], lines[first - 1] ?? ""].some((l) => /\/\/\s*long:\s*\S/.test(l));
      functions.push({ name: nameOf(node, sf), line: first + 1, lines: last - first + 1, marked });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { file, lines: text.endsWith("\n") ? lines.length - 1 : lines.length, functions };
}

/** The offenders among sources: files over the line limit, and unmarked functions over theirs (as file#name). */
function offenders(files: { file: string; text: string }[]): { files: Map<string, number>; functions: Map<string, number> } {
  const long = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const { file, text } of files) {
    const m = measure(file, text);
    if (m.lines > FILE_LINES_MAX) long.set(file, m.lines);
    for (const f of m.functions) {
      const key = `${file}#${f.name}`;
      if (f.lines > FUNCTION_LINES_MAX && !f.marked) functions.set(key, Math.max(f.lines, functions.get(key) ?? 0));
    }
  }
  return { files: long, functions };
}

const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join("\n");

describe("the measure", () => {
  it("flags a file over the limit and a function over it, named by its variable or class", () => {
    const text = [
      `export function short() {\n${body(10)}\n}`,
      `const arrow = () => {\n${body(FUNCTION_LINES_MAX - 1)}\n};`,
      `class Box {\n  method() {\n${body(FUNCTION_LINES_MAX)}\n  }\n}`,
      `export function fits() {\n${body(FUNCTION_LINES_MAX - 2)}\n}`,
      `setTimeout(() => {\n${body(FUNCTION_LINES_MAX)}\n});`,
      "// padding\n".repeat(FILE_LINES_MAX),
    ].join("\n");
    const found = offenders([{ file: "core/x.ts", text }]);
    expect([...found.files.keys()]).toEqual(["core/x.ts"]);
    expect(Object.fromEntries(found.functions)).toEqual({
      "core/x.ts#arrow": FUNCTION_LINES_MAX + 1,
      "core/x.ts#Box.method": FUNCTION_LINES_MAX + 2,
      "core/x.ts#(callback)": FUNCTION_LINES_MAX + 2,
    });
  });

  it("takes a `// long: <reason>` on a function's first line or the line above, but not an empty reason", () => {
    const text = [
      `function onLine() { // long: one table\n${body(FUNCTION_LINES_MAX)}\n}`,
      `// long: a generated parser\nfunction above() {\n${body(FUNCTION_LINES_MAX)}\n}`,
      `function empty() { // long:\n${body(FUNCTION_LINES_MAX)}\n}`,
      `const outer = () => [1].map((v) => {\n${body(FUNCTION_LINES_MAX)}\n});`,
    ].join("\n");
    const found = offenders([{ file: "webview/y.tsx", text }]);
    expect([...found.functions.keys()].sort()).toEqual(["webview/y.tsx#empty", "webview/y.tsx#outer", "webview/y.tsx#outer/(callback)"]);
    expect(found.files.size).toBe(0);
  });
});

describe("rooms with one job", () => {
  const found = offenders(sources().map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), "utf8") })));

  it("measures the sources it should", () => {
    const all = sources();
    expect(all).toContain("core/analysis/investigate.ts");
    expect(all).toContain("extension/extension.ts");
    expect(all.some((f) => f.startsWith("webview/") && f.endsWith(".tsx"))).toBe(true);
    expect(all.some((f) => f.endsWith(".d.ts") || f.includes("node_modules"))).toBe(false);
  });
  it(`no file in ${FOLDERS.join("/, ")}/ passes ${FILE_LINES_MAX} lines unless listed`, () => {
    const unlisted = [...found.files].filter(([f]) => !(f in LONG_FILES)).map(([f, n]) => `${f}: ${n} lines`);
    expect(unlisted, "split the file by job (or, if it truly is one job, list it in LONG_FILES with the reason)").toEqual([]);
  });

  it(`no function passes ${FUNCTION_LINES_MAX} lines without a // long: reason, unless listed`, () => {
    const unlisted = [...found.functions].filter(([f]) => !(f in LONG_FUNCTIONS)).map(([f, n]) => `${f}: ${n} lines`);
    expect(unlisted, "split the function into steps, or mark its first line `// long: <reason>`").toEqual([]);
  });

  it("the lists only shrink: a listed file or function no longer over its limit is taken off", () => {
    const stale = [...Object.keys(LONG_FILES).filter((f) => !found.files.has(f)), ...Object.keys(LONG_FUNCTIONS).filter((f) => !found.functions.has(f))];
    expect(stale, "no longer over the limit: remove from the list in this test").toEqual([]);
  });
});
