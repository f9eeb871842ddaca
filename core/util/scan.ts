/**
 * Text scans over run content that are linear in their input. A run is untrusted: a regular
 * expression that backtracks (`[\w.+-]+@…` over a megabyte of word characters, a glob with many
 * stars from tests.jsonl) would make reading it quadratic or worse.
 */

const WORDISH = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9_-]/.test(ch)) WORDISH[c] = 1; // [\w-]
}
const isLabel = (c: number) => c < 128 && WORDISH[c] === 1;
/** [\w.+-] */
const isLocal = (c: number) => isLabel(c) || c === 0x2e || c === 0x2b;

/**
 * Every match of /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g in `s`, the same strings in the same order, in
 * one pass: each character is looked at a bounded number of times.
 */
export function findEmails(s: string, work?: { steps: number }): string[] {
  const out: string[] = [];
  let steps = 0;
  let from = 0; // where the next match may start (the end of the last one)
  for (let at = s.indexOf("@", from); at >= 0; at = s.indexOf("@", Math.max(at + 1, from))) {
    let start = at;
    while (start > from && isLocal(s.charCodeAt(start - 1))) {
      start--;
      steps++;
    }
    if (start === at) continue;
    let i = at + 1;
    const labelEnd = (j: number) => {
      while (j < s.length && isLabel(s.charCodeAt(j))) {
        j++;
        steps++;
      }
      return j;
    };
    let j = labelEnd(i);
    if (j === i) continue;
    let dots = 0;
    for (;;) {
      if (s.charCodeAt(j) !== 0x2e) break;
      const k = labelEnd(j + 1);
      if (k === j + 1) break;
      j = k;
      dots++;
    }
    if (!dots) {
      // no dot after the first label: the domain part fails for this @; the regex would move on
      // (the scan right stops at most at the next non-label character, so this stays linear)
      continue;
    }
    i = j;
    out.push(s.slice(start, i));
    from = i;
  }
  if (work) work.steps += steps;
  return out;
}

/**
 * fnmatch-style glob (case-sensitive: * any run, ? one character, [seq], [!seq]) matched without
 * backtracking blow-up: the classic two-pointer match, O(glob × text) at worst.
 */
export function globMatch(glob: string, text: string, work?: { steps: number }): boolean {
  type Tok = { k: "star" } | { k: "any" } | { k: "lit"; c: string } | { k: "set"; neg: boolean; body: string };
  const toks: Tok[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (toks.at(-1)?.k !== "star") toks.push({ k: "star" });
    } else if (c === "?") toks.push({ k: "any" });
    else if (c === "[") {
      const j = glob.indexOf("]", i + 2);
      if (j < 0) toks.push({ k: "lit", c: "[" });
      else {
        let body = glob.slice(i + 1, j);
        const neg = body.startsWith("!");
        if (neg) body = body.slice(1);
        toks.push({ k: "set", neg, body });
        i = j;
      }
    } else toks.push({ k: "lit", c });
  }
  const one = (t: Tok, ch: string): boolean => {
    if (t.k === "any") return true;
    if (t.k === "lit") return t.c === ch;
    if (t.k === "set") return inSet(t.body, ch) !== t.neg;
    return false;
  };
  // iterate over code units, as the RegExp without the u flag did
  let ti = 0;
  let si = 0;
  let starT = -1;
  let starS = 0;
  while (si < text.length) {
    if (work) work.steps++;
    const t = toks[ti];
    if (t && t.k !== "star" && one(t, text[si])) {
      ti++;
      si++;
    } else if (t && t.k === "star") {
      starT = ti++;
      starS = si;
    } else if (starT >= 0) {
      ti = starT + 1;
      si = ++starS;
    } else return false;
  }
  while (ti < toks.length && toks[ti].k === "star") ti++;
  return ti === toks.length;
}

/** fnmatch's [seq]: single characters and ranges a-z. */
function inSet(body: string, ch: string): boolean {
  for (let i = 0; i < body.length; i++) {
    if (body[i + 1] === "-" && i + 2 < body.length) {
      if (ch >= body[i] && ch <= body[i + 2]) return true;
      i += 2;
    } else if (body[i] === ch) return true;
  }
  return false;
}

/** A glob as an object with RegExp's `test`, for code that holds one. */
export function globTester(glob: string): { test(s: string): boolean; source: string } {
  return { test: (s: string) => globMatch(glob, s), source: glob };
}
