/**
 * Where an argument value came from. The values traced from a tool call's arguments are the e-mail
 * addresses and URLs inside its string arguments, otherwise each whole string argument of 6+
 * characters. Each is searched, case-insensitively, in the content the run had seen before the
 * call: the task, inputs, and results of tool calls that were not blocked. A value found in some
 * trusted source is "trusted"; found only in untrusted sources, "untrusted-only" (the classic
 * prompt-injection signature); found nowhere, "generated".
 */
import { dumps } from "../log/pyjson";
import { findEmails } from "../util/scan";
import type { Trust } from "../log/events";

export type Origin = "trusted" | "untrusted-only" | "generated";

export interface ValueSource {
  eventId: string;
  seq: number;
  source: string;
  trust: Trust;
  kind: "task" | "input" | "result";
  /** The content, lower-cased, as searched. */
  text: string;
}

export interface SourceRef {
  eventId: string;
  seq: number;
  source: string;
  trust: Trust;
  kind: "task" | "input" | "result";
}

export interface TracedValue {
  /** Where in the arguments: "to", "items[0].email". */
  path: string;
  value: string;
  origin: Origin;
  sources: SourceRef[];
}

const URL_RE = /https?:\/\/[^\s"'<>]+/g;
/** Values nested deeper than this are not traced (the reader refuses deeper ones anyway). */
const MAX_WALK_DEPTH = 1000;

/** The text a value is searched in: strings as they are, anything else as JSON. */
export function searchText(value: unknown): string {
  if (typeof value === "string") return value.toLowerCase();
  try {
    return dumps(value, "file").toLowerCase();
  } catch {
    return "";
  }
}

/**
 * Every string inside arguments with its path ("to", "items[0].email"), in document order. The
 * walk is iterative and its depth bounded: arguments come from a run.
 */
export function argumentStrings(args: unknown): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const stack: [unknown, string, number][] = [[args, "", 0]];
  while (stack.length) {
    const [v, p, depth] = stack.pop()!;
    if (typeof v === "string") out.push({ path: p, text: v });
    else if (depth >= MAX_WALK_DEPTH) continue;
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${p}[${i}]`, depth + 1]);
    else if (v && typeof v === "object") {
      const es = Object.entries(v);
      for (let i = es.length - 1; i >= 0; i--) stack.push([es[i][1], p ? `${p}.${es[i][0]}` : es[i][0], depth + 1]);
    }
  }
  return out;
}

/** The values traced from arguments, with their paths. */
export function tracedValues(args: unknown): { path: string; value: string }[] {
  const out: { path: string; value: string }[] = [];
  for (const { path: p, text: v } of argumentStrings(args)) {
    const found = [...findEmails(v), ...(v.match(URL_RE) ?? [])];
    if (found.length) for (const f of new Set(found)) out.push({ path: p, value: f });
    else if (v.length >= 6) out.push({ path: p, value: v });
  }
  return out;
}

/** Traces each value of `args` through `sources` (content seen before the call). */
export function traceValues(args: unknown, sources: readonly ValueSource[]): TracedValue[] {
  return tracedValues(args).map(({ path, value }) => {
    const needle = value.toLowerCase();
    const hits = sources.filter((s) => s.text.includes(needle));
    const origin: Origin = hits.length === 0 ? "generated" : hits.some((h) => h.trust === "trusted") ? "trusted" : "untrusted-only";
    return {
      path,
      value,
      origin,
      sources: hits.map(({ eventId, seq, source, trust, kind }) => ({ eventId, seq, source, trust, kind })),
    };
  });
}

/** Tool names that count as sensitive when a run declares none ("by name"). */
export const SENSITIVE_NAME_RE = /send|email|mail|post|publish|transfer|pay|refund|delete|remove|export|upload|exec|shell|bash|write|deploy|sign|approve/i;
