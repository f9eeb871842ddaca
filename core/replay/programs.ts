/**
 * The names of built-in programs and the allow-list check, apart from the loader so that code
 * that only needs the names (the extension host) does not bundle the TypeScript transpiler.
 */

/** Built-in programs: name → file and export inside this package. */
export const BUILTIN_PROGRAMS: Record<string, { file: string; exportName: string; title: string }> = {
  "causeway:demo": { file: "examples/demo/system.ts", exportName: "SYSTEM", title: "the three-agent support demo" },
};

/** Is `spec` on the allow-list? Built-in programs are part of this package and always allowed. */
export function isAllowed(spec: string, allowed: readonly string[]): boolean {
  // own properties only: a run naming "toString" or "__proto__" must not pass
  return (typeof spec === "string" && Object.hasOwn(BUILTIN_PROGRAMS, spec)) || allowed.includes(spec);
}
