/**
 * A run's fields are untrusted: any of them may hold any JSON value. After the reader has checked
 * a line (hash, chain, fields), the event handed to the analyses is a view in which every field an
 * analysis uses has the type it expects: a text field that holds an object or number is read as
 * text ({@link safeText}), a list that is not a list is empty, a number that is not one is null.
 * The event as written (its hash) is unchanged on disk; the change is reported as a problem.
 * Events and test records whose fields all have their types are returned as they are (no copy).
 */
import { isRecord } from "../util/guards";

/**
 * Any value as bounded text, never throwing: strings as they are, numbers and booleans printed,
 * null/undefined as "", anything else as (cut) JSON. Objects with their own `toString` or
 * `valueOf` (`{"toString": 1}` from a run) are not asked to convert themselves.
 */
export function safeText(v: unknown, max = 10_000): string {
  switch (typeof v) {
    case "string":
      return v;
    case "number":
    case "boolean":
    case "bigint":
      return String(v);
    case "undefined":
      return "";
    case "object": {
      if (v === null) return "";
      let s: string | undefined;
      try {
        s = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
      } catch {
        s = undefined;
      }
      if (s === undefined) s = Array.isArray(v) ? "[…]" : "{…}";
      return s.length > max ? s.slice(0, max) + "…" : s;
    }
    default:
      return "";
  }
}

type Shape = "text" | "text|null" | "list" | "num|null" | "bool" | "object" | "num";

/** Fields an analysis reads, with the type it expects (any event type). */
const FIELDS: [string, Shape][] = [
  ["id", "text"],
  ["agent", "text"],
  ["type", "text"],
  ["ts", "text"],
  ["run_id", "text"],
  ["schema", "text"],
  ["hash", "text"],
  ["prev_hash", "text"],
  ["tool", "text"],
  ["source", "text"],
  ["to", "text"],
  ["model", "text"],
  ["trust", "text"],
  ["kind", "text"],
  ["mode", "text"],
  ["status", "text"],
  ["ref", "text"],
  ["args_ref", "text"],
  ["purpose", "text|null"],
  ["role", "text|null"],
  ["parent", "text|null"],
  ["decision", "text|null"],
  ["program", "text|null"],
  ["output", "text|null"],
  ["result_ref", "text|null"],
  ["request", "text|null"],
  ["context", "list"],
  ["ablated", "list"],
  ["interventions", "list"],
  ["models", "list"],
  ["tools", "list"],
  ["sensitive_tools", "list"],
  ["untrusted_tools", "list"],
  ["duration_ms", "num|null"],
  ["sensitive", "bool"],
  ["untrusted", "bool"],
  ["meta", "object"],
  ["params", "object"],
];

const CONTEXT_FIELDS: [string, Shape][] = [
  ["ref", "text"],
  ["source", "text"],
  ["kind", "text"],
  ["trust", "text"],
  ["from_event", "text|null"],
];

function fits(v: unknown, s: Shape): boolean {
  switch (s) {
    case "text":
      return typeof v === "string";
    case "text|null":
      return v === null || typeof v === "string";
    case "list":
      return Array.isArray(v) && v.every((x) => typeof x === "string" || isRecord(x));
    case "num|null":
      return v === null || (typeof v === "number" && Number.isFinite(v));
    case "num":
      return typeof v === "number" && Number.isFinite(v);
    case "bool":
      return typeof v === "boolean";
    case "object":
      return isRecord(v);
  }
}

function coerce(v: unknown, s: Shape): unknown {
  switch (s) {
    case "text":
      return safeText(v, 1000);
    case "text|null":
      return v === undefined || v === null ? null : safeText(v, 1000);
    case "list":
      return Array.isArray(v) ? v.map((x) => (isRecord(x) ? x : safeText(x, 1000))) : [];
    case "num|null":
      return typeof v === "number" && Number.isFinite(v) ? v : null;
    case "num":
      return typeof v === "number" && Number.isFinite(v) ? v : 0;
    case "bool":
      return v === true;
    case "object":
      return {};
  }
}

/** Fields of `e` (present ones) that do not fit their shape. */
function misfits(e: Record<string, unknown>, fields: [string, Shape][]): string[] {
  let out: string[] | undefined;
  for (const [k, s] of fields) {
    if (!Object.hasOwn(e, k)) continue;
    if (!fits(e[k], s)) (out ??= []).push(k);
  }
  return out ?? [];
}

/**
 * The event as analyses may read it, and the fields that had to be read differently (empty when
 * the event is returned as it is). `seq` that is not a number becomes the line's position.
 */
export function sanitizeEvent<T extends Record<string, unknown>>(e: T, lineNo: number): { event: T; changed: string[] } {
  const bad = misfits(e, FIELDS);
  const seqBad = !(typeof e.seq === "number" && Number.isFinite(e.seq));
  const ctx = Array.isArray(e.context) ? (e.context as unknown[]) : undefined;
  const ctxBad = ctx ? ctx.some((c) => !isRecord(c) || misfits(c, CONTEXT_FIELDS).length > 0) : false;
  const siteBad = Object.hasOwn(e, "site") && !(isRecord(e.site) && typeof e.site.file === "string" && typeof e.site.line === "number");
  const guardBad =
    Object.hasOwn(e, "guard") &&
    e.guard !== null &&
    !(
      isRecord(e.guard) &&
      typeof (e.guard.verdict ?? "") === "string" &&
      typeof (e.guard.reason ?? "") === "string" &&
      (e.guard.alerts === undefined || Array.isArray(e.guard.alerts))
    );
  const usageBad = Object.hasOwn(e, "usage") && !(isRecord(e.usage) && Object.values(e.usage).every((x) => typeof x === "number" || typeof x === "boolean"));
  if (!bad.length && !seqBad && !ctxBad && !siteBad && !guardBad && !usageBad) return { event: e, changed: [] };
  const x: Record<string, unknown> = { ...e };
  const changed = [...bad];
  for (const k of bad) x[k] = coerce(e[k], FIELDS.find((f) => f[0] === k)![1]);
  if (seqBad) {
    x.seq = lineNo - 1;
    changed.push("seq");
  }
  if (ctx && ctxBad) {
    x.context = ctx.map((c) => {
      if (!isRecord(c)) return { ref: safeText(c, 100), source: "", kind: "", trust: "untrusted", from_event: null };
      const m = misfits(c, CONTEXT_FIELDS);
      if (!m.length) return c;
      const y: Record<string, unknown> = { ...c };
      for (const k of m) y[k] = coerce(c[k], CONTEXT_FIELDS.find((f) => f[0] === k)![1]);
      return y;
    });
    changed.push("context");
  }
  if (siteBad) {
    delete x.site;
    changed.push("site");
  }
  if (guardBad) {
    const g = isRecord(e.guard) ? e.guard : {};
    x.guard = { verdict: safeText(g.verdict, 100), reason: safeText(g.reason, 1000), alerts: Array.isArray(g.alerts) ? g.alerts : [] };
    changed.push("guard");
  }
  if (usageBad) {
    delete x.usage;
    changed.push("usage");
  }
  return { event: x as T, changed };
}

/** Test record fields the analyses read. */
const TEST_FIELDS: [string, Shape][] = [
  ["intervention", "text"],
  ["target", "text"],
  ["verdict", "text"],
  ["scope", "text"],
  ["role", "text|null"],
  ["stopped", "text|null"],
  ["run_id", "text"],
  ["decision", "text|null"],
  ["contains", "text|null"],
  ["n", "num"],
  ["effect", "num"],
  ["p_with", "num|null"],
  ["p_without", "num|null"],
  ["p_value", "num|null"],
  ["n_needed", "num|null"],
  ["looks", "num|null"],
];

/** A test record as analyses may read it (see {@link sanitizeEvent}). */
export function sanitizeTest<T extends Record<string, unknown>>(t: T): { record: T; changed: string[] } {
  const bad = misfits(t, TEST_FIELDS);
  const ciBad = Object.hasOwn(t, "ci") && !(Array.isArray(t.ci) && t.ci.length === 2 && t.ci.every((v) => typeof v === "number" && Number.isFinite(v)));
  const groupBad = Object.hasOwn(t, "group") && !(Array.isArray(t.group) && t.group.every((g) => typeof g === "string"));
  if (!bad.length && !ciBad && !groupBad) return { record: t, changed: [] };
  const x: Record<string, unknown> = { ...t };
  for (const k of bad) x[k] = coerce(t[k], TEST_FIELDS.find((f) => f[0] === k)![1]);
  if (ciBad) x.ci = [0, 0];
  if (groupBad) delete x.group;
  return { record: x as T, changed: [...bad, ...(ciBad ? ["ci"] : []), ...(groupBad ? ["group"] : [])] };
}
