/**
 * The job's seeded-model call cache as stored in `causeway_job_cache`: each entry is written as
 * one lossless JSON text (a jsonb string) and parsed back with {@link parseLossless}.
 *
 * Why not the value as jsonb: a model's output read back must be the very value the model gave,
 * because the program goes on with it and every later call's cache key holds its ref. A plain JSON
 * round trip (and jsonb) turns a Python float such as `89.0` ({@link PyFloat}) into the integer
 * `89` and reorders keys, so the output read back from the cache had another ref than the one
 * computed: the calls after it missed the cache and were made again (a worker made 608 model calls
 * where the same Find the cause made 543 in one process), and an arm replayed from the cache could
 * differ from the same arm computed.
 */
import { PyFloat, floatRepr, numberRepr, parseLossless, quote } from "../log/pyjson";
import type { ModelCache } from "../sdk/runtime-options";

/** One model call's output in the job's cache. */
export type CacheEntry = Parameters<ModelCache["set"]>[1];
type Entry = CacheEntry;

/** JSON with Python's numbers (pyjson.ts) and the value's own key order. */
export function losslessText(value: unknown): string {
  const seen = new Set<object>();
  const write = (v: unknown): string => {
    switch (typeof v) {
      case "string":
        return quote(v);
      case "number":
        return numberRepr(v);
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        return v.toString();
      case "undefined":
        return "null";
      case "object": {
        if (v === null) return "null";
        if (v instanceof PyFloat) return floatRepr(v.value);
        if (v instanceof Date) return quote(v.toISOString());
        if (seen.has(v)) throw new TypeError("cannot serialise a value that contains itself");
        seen.add(v);
        const out = Array.isArray(v)
          ? "[" + v.map(write).join(",") + "]"
          : "{" +
            Object.entries(v as Record<string, unknown>)
              .filter(([, x]) => x !== undefined)
              .map(([k, x]) => quote(k) + ":" + write(x))
              .join(",") +
            "}";
        seen.delete(v);
        return out;
      }
      default:
        throw new TypeError(`cannot serialise a ${typeof v} as JSON`);
    }
  };
  return write(value);
}

/** A cache entry as the table stores it (a JSON string: jsonb keeps a string's text as is). */
export const encodeEntry = (e: Entry): string => losslessText({ value: e.value, usage: e.usage });

/** A stored entry, or undefined for what this version did not write (a miss, never a wrong value). */
export function decodeEntry(stored: unknown): Entry | undefined {
  if (typeof stored !== "string") return undefined;
  try {
    const e = parseLossless(stored) as { value?: unknown; usage?: Entry["usage"] } | null;
    if (!e || typeof e !== "object" || !("value" in e)) return undefined;
    return e.usage === undefined || e.usage === null ? { value: e.value } : { value: e.value, usage: e.usage };
  } catch {
    return undefined;
  }
}
