/**
 * Loading agent programs for recording and replay. A program is named `MODULE:EXPORT`, MODULE a
 * path relative to the program root (TypeScript or JavaScript), or a built-in name such as
 * `causeway:demo`. TypeScript is transpiled on require with Sucrase (line numbers kept, so recorded
 * sites point at the real source lines). A program that imports "causeway-vscode" gets this very
 * copy of the SDK (program-api.ts: the public API but the report builders). Nothing is loaded
 * from a run file's say-so: callers pass what the user allowed.
 */
import fs from "node:fs";
import path from "node:path";
import Module from "node:module";
import { pathToFileURL } from "node:url";
import { transform } from "sucrase";
import * as sdk from "./program-api";
import { isSystem, type System } from "../sdk/system";
import { BUILTIN_PROGRAMS, splitSpec } from "./programs";

export class ProgramError extends Error {
  /** What went wrong: a malformed spec, a missing file, no such export, or the module failed to load. */
  constructor(
    message: string,
    readonly code: "spec" | "missing" | "export" | "load" = "load",
  ) {
    super(message);
    this.name = "ProgramError";
  }
}

/** The folder holding this package's package.json (the extension's or the CLI's install folder). */
export function packageRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, "package.json");
    if (fs.existsSync(pj)) {
      try {
        if (JSON.parse(fs.readFileSync(pj, "utf8")).name === "causeway-vscode") return dir;
      } catch {
        /* keep looking */
      }
    }
    dir = path.dirname(dir);
  }
  return path.resolve(__dirname, "..", "..");
}

export interface ParsedProgram {
  spec: string;
  file: string;
  exportName: string;
  /** The folder recorded sites are relative to. */
  root: string;
  builtin: boolean;
}

/** Resolves `MODULE:EXPORT` (or a built-in name) against a root folder. */
export function resolveProgram(spec: string, root: string): ParsedProgram {
  const builtin = Object.hasOwn(BUILTIN_PROGRAMS, spec) ? BUILTIN_PROGRAMS[spec] : undefined;
  if (builtin) {
    const pkg = packageRoot();
    return { spec, file: path.join(pkg, builtin.file), exportName: builtin.exportName, root: pkg, builtin: true };
  }
  const parts = splitSpec(spec);
  if (!parts) {
    throw new ProgramError(
      `"${spec}" is not MODULE:EXPORT (e.g. agents/system.ts:SYSTEM) or a built-in program (${Object.keys(BUILTIN_PROGRAMS).join(", ")})`,
      "spec",
    );
  }
  const { mod, exportName } = parts;
  const file = path.resolve(root, mod);
  return { spec, file, exportName, root, builtin: false };
}

let hooked = false;
const TS_EXT = [".ts", ".tsx", ".mts", ".cts"];

/** Teaches require() TypeScript, and to hand programs this copy of the SDK. */
export function installLoader(): void {
  if (hooked) return;
  hooked = true;
  const M = Module as unknown as {
    _extensions: Record<string, (m: { _compile(code: string, file: string): void }, file: string) => void>;
    _resolveFilename: (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;
    _cache: Record<string, unknown>;
  };
  const compile = (m: { _compile(code: string, file: string): void }, file: string) => {
    const src = fs.readFileSync(file, "utf8");
    const out = transform(src, {
      transforms: file.endsWith(".tsx") ? ["typescript", "jsx", "imports"] : ["typescript", "imports"],
      filePath: file,
      production: true,
      keepUnusedImports: false,
    });
    m._compile(out.code, file);
  };
  for (const ext of TS_EXT) M._extensions[ext] = compile;
  const SDK_ID = "\0causeway-vscode-sdk";
  M._cache[SDK_ID] = { id: SDK_ID, filename: SDK_ID, loaded: true, exports: sdk, children: [], paths: [] };
  const resolve = M._resolveFilename;
  M._resolveFilename = function (request: string, parent: unknown, isMain: boolean, options?: unknown): string {
    if (request === "causeway-vscode" || request === "causeway-vscode/sdk") return SDK_ID;
    try {
      return resolve.call(this, request, parent, isMain, options);
    } catch (err) {
      // TypeScript sources import "./x.js" meaning "./x.ts"
      if (/\.[cm]?js$/.test(request)) {
        for (const ext of TS_EXT) {
          try {
            return resolve.call(this, request.replace(/\.[cm]?js$/, ext), parent, isMain, options);
          } catch {
            /* try the next */
          }
        }
      }
      throw err;
    }
  };
}

// a real import() in the CommonJS bundle (esbuild would turn a literal one into require());
// the Function body is a constant, never built from input
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const dynamicImport = new Function("u", "return import(u)") as (u: string) => Promise<Record<string, unknown>>;

/** Loads a program's System. Throws ProgramError with a message a user can act on. */
export async function loadProgram(p: ParsedProgram): Promise<System> {
  if (!fs.existsSync(p.file)) throw new ProgramError(`program file ${p.file} does not exist`, "missing");
  installLoader();
  let mod: Record<string, unknown>;
  try {
    if (p.file.endsWith(".mjs")) mod = await dynamicImport(pathToFileURL(p.file).href);
    else mod = Module.createRequire(p.file)(p.file);
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_REQUIRE_ESM") {
      mod = await dynamicImport(pathToFileURL(p.file).href);
    } else {
      throw new ProgramError(`loading ${p.spec} failed: ${(err as Error).message}`);
    }
  }
  const sys = mod[p.exportName] ?? (mod.default as Record<string, unknown> | undefined)?.[p.exportName];
  if (!isSystem(sys))
    throw new ProgramError(`${p.spec}: the module has no System named "${p.exportName}" (exports: ${Object.keys(mod).join(", ") || "none"})`, "export");
  return sys;
}
