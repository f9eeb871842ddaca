/**
 * Issue 11, hangs: the e-mail scan and glob matching over run content are linear in their input.
 * Equivalence with the regular expressions they replace is checked on random strings; bounded
 * work by the scans' own step counters (characters examined), not by a clock. Timings are in
 * bench/results/ (bench/hardening.ts).
 */
import { describe, it, expect } from "vitest";
import { findEmails, globMatch } from "../../../core/util/scan";
import { globToRegExp } from "../../../core/specs/grammar";
import { tracedValues } from "../../../core/analysis/values";

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/** Mulberry32: a seeded generator, so failures reproduce. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("findEmails", () => {
  it("finds what the regular expression finds, on 3,000 random strings", () => {
    const r = rng(11);
    const alphabet = "ab1_-.+@ .x@é\n";
    for (let n = 0; n < 3000; n++) {
      let s = "";
      const len = Math.floor(r() * 40);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(r() * alphabet.length)];
      expect(findEmails(s), JSON.stringify(s)).toEqual(s.match(EMAIL) ?? []);
    }
  });
  it("known cases", () => {
    expect(findEmails("mail audit@vendor-compliance.example and x.y+z@a.b.c, not a@b or @c.d")).toEqual(["audit@vendor-compliance.example", "x.y+z@a.b.c"]);
  });
  it("a 1 MB run of word characters (the regex's quadratic case) and 1 MB of a@a@a@… give the regex's answer", () => {
    const words = "a".repeat(1 << 20);
    expect(findEmails(words)).toEqual([]);
    expect(findEmails(words + "@x.example")).toEqual([words + "@x.example"]);
    const ats = "a@".repeat(1 << 19);
    expect(findEmails(ats)).toEqual([]);
    // bounded work: each character is examined a constant number of times (the regex: ~n²/2)
    for (const s of [words, ats, words + "@x.example", "a.".repeat(1 << 19) + "@b", ("x".repeat(1000) + "@y ").repeat(1000)]) {
      const work = { steps: 0 };
      findEmails(s, work);
      expect(work.steps, s.slice(0, 20)).toBeLessThanOrEqual(2 * s.length);
    }
    // the traced values of a tool argument of 1 MB: the whole string, no e-mail
    expect(tracedValues({ body: words })).toEqual([{ path: "body", value: words }]);
  });
});

describe("globMatch", () => {
  it("matches as the glob's regular expression does, on 3,000 random globs and texts", () => {
    const r = rng(5);
    const pick = (a: string) => a[Math.floor(r() * a.length)];
    for (let n = 0; n < 3000; n++) {
      let g = "";
      for (let i = 0, len = Math.floor(r() * 8); i < len; i++) g += pick("ab*?*[]!-c");
      let t = "";
      for (let i = 0, len = Math.floor(r() * 10); i < len; i++) t += pick("abc-]![");
      let re: RegExp;
      try {
        re = globToRegExp(g);
      } catch {
        continue; // a set the RegExp cannot express ([b-a]); fnmatch semantics differ there anyway
      }
      expect(globMatch(g, t), `${JSON.stringify(g)} ~ ${JSON.stringify(t)}`).toBe(re.test(t));
    }
  });
  it("a glob with 30 stars against 100 k characters answers (the regex would backtrack for ever)", () => {
    const glob = "*a".repeat(30) + "b";
    expect(globMatch(glob, "a".repeat(100_000))).toBe(false);
    expect(globMatch(glob, "a".repeat(100_000) + "b")).toBe(true);
    // bounded work: at most (glob tokens + 1) × (text + 1) steps; the regex's is exponential in the stars
    const work = { steps: 0 };
    globMatch(glob, "a".repeat(100_000), work);
    expect(work.steps).toBeLessThanOrEqual((glob.length + 1) * 100_001);
    const lin = { steps: 0 };
    globMatch("input:*", "input:" + "a".repeat(100_000), lin);
    expect(lin.steps).toBeLessThanOrEqual(100_006 + 1);
  });
});
