/**
 * Values a model output copied verbatim from a context item: e-mail addresses, URLs, order
 * numbers, file names, account ids. The 5-gram wording overlap (graph.ts, the reference's
 * `reuse`) sees nothing when an address is lifted out of a sentence into a short tool call: the
 * call has no five words in a row in common with the sentence. This measure looks at the output's
 * specific values instead.
 *
 * A specific value is a token of the output's strings (the same word pattern as the shingles,
 * trimmed of edge punctuation) with at least 5 characters and at least one of @ . / : or a digit:
 * "c.rao@example.com", "1042-b", "customers.csv". Plain words ("refund", "send_email") are
 * wording, not values, and are left to the overlap measure. Numbers the output holds as JSON
 * numbers count too when they have at least 4 digits (an order id).
 */
import { textOf } from "./graph";

const TOKEN = /[a-z0-9@._\-/:]+/g;
const SPECIFIC = /[@./:0-9]/;

function tokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(TOKEN) ?? []) {
    const t = raw.replace(/^[._\-/:]+|[._\-/:]+$/g, "");
    if (t.length >= 5 && SPECIFIC.test(t)) out.push(t);
  }
  return out;
}

/** The output's specific values, each once, in order of appearance. */
export function specificValues(output: unknown): string[] {
  const seen = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 50) return;
    if (typeof v === "string") for (const t of tokens(v)) seen.add(t);
    else if (typeof v === "number" && Number.isInteger(v) && Math.abs(v) >= 1000) seen.add(String(v));
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(output, 0);
  return [...seen];
}

export interface Copied {
  /** The output's specific values found verbatim in the item, in order of appearance. */
  values: string[];
  /** Their share of the output's specific values, weighted by length (0..1, 3 decimals). */
  share: number;
}

/**
 * Which of the output's specific values appear verbatim in the item's text. `values` is the
 * output's specificValues() (computed once per output by the caller).
 */
export function copiedFrom(item: unknown, values: readonly string[]): Copied {
  if (!values.length) return { values: [], share: 0 };
  const text = textOf(item).toLowerCase();
  if (!text) return { values: [], share: 0 };
  const have = new Set(tokens(text));
  // a whole-token match, or an address inside a longer token ("mailto:x@y.com" holds "x@y.com")
  const found = values.filter((v) => have.has(v) || (/[@/]/.test(v) && text.includes(v)));
  let all = 0;
  let hit = 0;
  for (const v of values) all += v.length;
  for (const v of found) hit += v.length;
  return { values: found, share: Math.round((hit / all) * 1000) / 1000 };
}
