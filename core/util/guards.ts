/**
 * Type guards for values of unknown shape (parsed JSON, a third-party client's objects). Two
 * questions, two names: is it a record of named fields (not an array), or any object at all.
 * A losslessly parsed JSON object is isJsonObject (core/log/pyjson.ts), which also rules out PyFloat.
 */

/** A non-null object that is not an array: a JSON object, a record of named fields. */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === "object" && !Array.isArray(x);
}

/** Any non-null object, arrays included: something whose properties can be read. */
export function isObjectLike(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === "object";
}
