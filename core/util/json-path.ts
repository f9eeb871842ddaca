/** Reading and writing a value at a path of keys and indexes inside parsed JSON. */

export type JsonPath = (string | number)[];

/** The value at a path, or undefined. */
export function getAt(root: unknown, path: readonly (string | number)[]): unknown {
  let v: unknown = root;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/**
 * Sets the value at a path whose parents exist; returns false when they don't, or when the last
 * key does not fit its parent (a string key of an array, an index outside it, a number key of an
 * object).
 */
export function setAt(root: unknown, path: readonly (string | number)[], value: unknown): boolean {
  if (!path.length) return false;
  const parent = getAt(root, path.slice(0, -1));
  if (parent === null || typeof parent !== "object") return false;
  const k = path[path.length - 1];
  if (Array.isArray(parent) ? typeof k !== "number" || k < 0 || k >= parent.length : typeof k !== "string") return false;
  (parent as Record<string | number, unknown>)[k] = value;
  return true;
}
