/**
 * A key named "__proto__" in run content is data: the lossless parser keeps it as an own key, as
 * JSON.parse and Python do, so it is neither dropped from the canonical text a hash is taken over
 * nor made the parsed object's prototype.
 */
import { describe, it, expect } from "vitest";
import { dumps, parseLossless } from "../../core/log/pyjson";
import { HASH_KEY, compactText, slowCanonical } from "../../core/log/hash";

describe('a "__proto__" key', () => {
  const text = '{"__proto__": {"polluted": 1}, "a": 2}';

  it("is kept as an own key and round-trips byte for byte", () => {
    const v = parseLossless(text) as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(dumps(v as never, "file")).toBe(text);
    expect(JSON.stringify(v)).toBe(JSON.stringify(JSON.parse(text)));
  });

  it("counts in the canonical text: a line with it does not canonicalise like one without", () => {
    // keys in canonical order, as the writer writes a line: the fast path only drops the spaces
    const line = '{"__proto__": {"to": "attacker@example.com"}, "a": 2, "hash": "x"}';
    const bytes = Buffer.from(line);
    expect(slowCanonical(line, "hash")).toBe(compactText(bytes, 0, bytes.length, HASH_KEY));
    expect(slowCanonical(line, "hash")).not.toBe(slowCanonical('{"a": 2, "hash": "x"}', "hash"));
  });

  it("keeps the last of duplicate keys, as for any key", () => {
    const v = parseLossless('{"__proto__": 1, "__proto__": [2]}') as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(v, "__proto__")?.value).toEqual([2]);
  });
});
