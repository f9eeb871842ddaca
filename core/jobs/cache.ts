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
import { dumps, parseLossless } from "../log/pyjson";
import type { ModelCache } from "../sdk/runtime-options";

/** One model call's output in the job's cache. */
export type CacheEntry = Parameters<ModelCache["set"]>[1];
type Entry = CacheEntry;

/** A cache entry as the table stores it (a JSON string: jsonb keeps a string's text as is). */
export const encodeEntry = (e: Entry): string => dumps({ value: e.value, usage: e.usage }, "ordered");

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
