/**
 * The names of built-in programs, and how a program string splits into a module and an export,
 * apart from the loader so that code that only needs them (the extension host) does not bundle
 * the TypeScript transpiler.
 */

/** Built-in programs: name → file and export inside this package. */
export const BUILTIN_PROGRAMS: Record<string, { file: string; exportName: string; title: string }> = {
  "causeway:demo": { file: "examples/demo/system.ts", exportName: "SYSTEM", title: "the three-agent support demo" },
};

/** Is `spec` a built-in program's name? Own properties only: "toString" or "__proto__" is not. */
export function isBuiltin(spec: unknown): spec is string {
  return typeof spec === "string" && Object.hasOwn(BUILTIN_PROGRAMS, spec);
}

/** Is `spec` allowed? Built-in programs are part of this package and always are; anything else must be listed exactly. */
export function isAllowed(spec: string, allowed: readonly string[]): boolean {
  return isBuiltin(spec) || (typeof spec === "string" && allowed.includes(spec));
}

/**
 * `MODULE:EXPORT` split into its module (a path) and export, or undefined when `spec` is not of
 * that shape (no colon, nothing on either side, a drive letter).
 */
export function splitSpec(spec: string): { mod: string; exportName: string } | undefined {
  if (typeof spec !== "string") return undefined;
  const at = spec.lastIndexOf(":");
  if (at <= 0 || at === spec.length - 1 || /^[A-Za-z]$/.test(spec.slice(0, at))) return undefined;
  return { mod: spec.slice(0, at), exportName: spec.slice(at + 1) };
}
