import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { dumps, parseLossless, floatRepr, compareCodePoints, pyFloat, quote } from "../../core/log/pyjson";
import { canonicalDigest, compactText, HASH_KEY, sha256Hex, deriveSeed, refOf, blobFileText } from "../../core/log/hash";
import { readRun } from "../../core/log/reader";
import { verifyRun } from "../../core/log/verify";

const FIX = path.resolve(__dirname, "../fixtures/causeway-py-demo");
const RUNS = fs
  .readdirSync(FIX)
  .filter((d) => d.startsWith("demo-seed"))
  .sort();

describe("Python-compatible JSON", () => {
  it("writes floats as Python's repr", () => {
    const cases: [number, string][] = [
      [89.5, "89.5"],
      [0.1, "0.1"],
      [1e-5, "1e-05"],
      [1e16, "1e+16"],
      [1.5e300, "1.5e+300"],
      [0.0001, "0.0001"],
      [123456789012345.6, "123456789012345.6"],
      [1234567890123456.0, "1234567890123456.0"],
      [-2.5e-7, "-2.5e-07"],
      [5e-324, "5e-324"],
      [1.7976931348623157e308, "1.7976931348623157e+308"],
      [100.0, "100.0"],
    ];
    for (const [x, s] of cases) expect(floatRepr(x)).toBe(s);
    expect(dumps(2 ** 53 - 1)).toBe("9007199254740991");
    expect(dumps(1e16)).toBe("1e+16");
    expect(dumps(pyFloat(89))).toBe("89.0");
    expect(dumps(89)).toBe("89");
    expect(dumps(123456789012345678901234567890n)).toBe("123456789012345678901234567890");
  });
  it("sorts keys by code point and escapes like Python", () => {
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0); // JS's default order says the opposite
    expect(["😀", "\uffff", "a"].sort(compareCodePoints)).toEqual(["a", "\uffff", "😀"]);
    expect(dumps({ "😀": 1, "\uffff": 2 })).toBe('{"\uffff":2,"😀":1}');
    expect(quote('a"b\\c\n\r\t\b\f\u0001\u001f\u2028é')).toBe('"a\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u2028é"');
    expect(dumps({ b: [1, 2], a: { y: null, x: true } }, "file")).toBe('{"a": {"x": true, "y": null}, "b": [1, 2]}');
  });
  it("round-trips losslessly", () => {
    const text = '{"a": 89.0, "b": 1e-05, "c": 1e+16, "d": 12345678901234567890, "e": -0.0, "f": [1.5e+300, 0.1]}';
    expect(dumps(parseLossless(text), "file")).toBe(text);
  });
  it("derives seeds as the reference does", () => {
    expect(deriveSeed(0, "researcher", 0)).toBe(212228452203177);
  });
});

describe("the reference's runs", () => {
  it.each(RUNS)("%s verifies", (run) => {
    const r = verifyRun(path.join(FIX, run));
    expect(r.problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.events).toBeGreaterThan(15);
  });
  it.each(RUNS)("%s: our writer reproduces every line and blob byte for byte", (run) => {
    const dir = path.join(FIX, run);
    const lines = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n").filter(Boolean);
    for (const line of lines) {
      const ev = parseLossless(line) as Record<string, unknown>;
      expect(dumps(ev, "file")).toBe(line);
      const { hash, ...rest } = ev;
      expect(sha256Hex(dumps(rest))).toBe(hash);
      const buf = Buffer.from(line);
      expect(canonicalDigest(buf, 0, buf.length, HASH_KEY)).toBe(hash);
      expect(compactText(buf, 0, buf.length, HASH_KEY)).toBe(dumps(rest));
    }
    for (const f of fs.readdirSync(path.join(dir, "blobs"))) {
      const text = fs.readFileSync(path.join(dir, "blobs", f), "utf8");
      const v = (parseLossless(text) as { v: unknown }).v;
      expect(blobFileText(v)).toBe(text);
      expect(refOf(v)).toBe("sha256:" + f.replace(".json", ""));
    }
  });
  it("reads tests.jsonl and reports it unchained", () => {
    const r = readRun(path.join(FIX, "demo-seed0"));
    expect(r.tests).toHaveLength(6);
    expect(r.tests[0].verdict).toBe("causal");
    expect(r.problems.map((p) => p.code)).toContain("tests-unchained");
  });
});
