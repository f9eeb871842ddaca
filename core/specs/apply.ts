/**
 * Applying interventions to content: besides removing an item, an edit (see grammar.ts) changes what
 * the item says — `redact:` removes matching text, `replace:` swaps the content, `span:` removes
 * characters [start, end). The same functions serve the SDK's replays, decision replay and endpoint
 * replay, so a spec means the same thing everywhere. `guard:block` is a fix too: the live guard in
 * block mode during a replay.
 *
 * Offsets are in code points (what Python's str indexes), so a span means the same characters to
 * both tools. A span or redaction of content that is not a string applies to its string leaves
 * (redact) or to its canonical JSON text (span: the edited content is then that text).
 */
import fs from "node:fs";
import path from "node:path";
import { blobFileText, canonical, refOf } from "../log/hash";
import { concerns, parseIntervention, removes, type Edit, type Intervention, type ItemLike } from "./grammar";

/** One piece of text an edit removed (offsets in code points of the string it was removed from). */
export interface Removed {
  start: number;
  end: number;
  text: string;
  /** Where in a structured value (absent for a string value). */
  path?: (string | number)[];
}

/** Exactly what an edit changed in one item. */
export interface Change {
  spec: string;
  kind: Edit["kind"];
  item: { kind: string; source: string; from_event: string | null };
  before: string;
  after: string;
  removed: Removed[];
  /** replace: the new content's length in code points */
  replaced_with?: number;
}

const cps = (s: string): string[] => Array.from(s);

function redactString(s: string, re: RegExp, at?: (string | number)[]): { text: string; removed: Removed[] } {
  const removed: Removed[] = [];
  re.lastIndex = 0;
  let out = "";
  let last = 0;
  let cpBase = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m[0] === "") {
      re.lastIndex++;
      continue;
    }
    const start = cpBase + cps(s.slice(last, m.index)).length;
    const len = cps(m[0]).length;
    removed.push({ start, end: start + len, text: m[0], ...(at ? { path: at } : {}) });
    out += s.slice(last, m.index);
    last = m.index + m[0].length;
    cpBase = start + len;
  }
  return { text: removed.length ? out + s.slice(last) : s, removed };
}

function redactValue(v: unknown, re: RegExp, at: (string | number)[], removed: Removed[]): unknown {
  if (typeof v === "string") {
    const r = redactString(v, re, at.length ? at : undefined);
    removed.push(...r.removed);
    return r.text;
  }
  if (Array.isArray(v)) return v.map((x, i) => redactValue(x, re, [...at, i], removed));
  if (v && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = redactValue(x, re, [...at, k], removed);
    return o;
  }
  return v;
}

/** The content an edit leaves; `removed` says exactly what went. Unchanged content comes back as is. */
export function applyEdit(edit: Edit, value: unknown): { value: unknown; removed: Removed[]; changed: boolean } {
  if (edit.kind === "replace") {
    let next: unknown = edit.text;
    if (typeof value !== "string") {
      try {
        next = JSON.parse(edit.text);
      } catch {
        /* stays text */
      }
    }
    const changed = canonical(next) !== canonical(value);
    return { value: changed ? next : value, removed: [], changed };
  }
  if (edit.kind === "redact") {
    const removed: Removed[] = [];
    const next = redactValue(value, edit.re, [], removed);
    return removed.length ? { value: next, removed, changed: true } : { value, removed, changed: false };
  }
  const text = typeof value === "string" ? value : canonical(value);
  const chars = cps(text);
  const removed: Removed[] = [];
  let out = "";
  let pos = 0;
  for (const [a0, b0] of edit.ranges) {
    const a = Math.min(a0, chars.length);
    const b = Math.min(b0, chars.length);
    if (a >= b) continue;
    out += chars.slice(pos, a).join("");
    removed.push({ start: a, end: b, text: chars.slice(a, b).join("") });
    pos = b;
  }
  if (!removed.length) return { value, removed, changed: false };
  return { value: out + chars.slice(pos).join(""), removed, changed: true };
}

/** What the interventions do to one item: remove it, change it (the new value and what changed), or nothing. */
export function interveneOn(
  ivs: readonly Intervention[],
  item: ItemLike & { value: unknown; fromEvent?: string | null },
): { remove: true } | { remove: false; value: unknown; changes: Change[] } | null {
  if (!ivs.length) return null;
  if (removes(ivs, item)) return { remove: true };
  let value = item.value;
  let changes: Change[] | null = null;
  for (const iv of ivs) {
    if (!iv.edit || !concerns(iv, item)) continue;
    const before = value;
    const r = applyEdit(iv.edit, value);
    if (!r.changed) continue;
    value = r.value;
    (changes ??= []).push({
      spec: iv.spec,
      kind: iv.edit.kind,
      item: { kind: item.kind, source: item.source, from_event: item.fromEvent ?? null },
      before: refOf(before),
      after: refOf(value),
      removed: r.removed,
      ...(iv.edit.kind === "replace" ? { replaced_with: cps(typeof value === "string" ? value : canonical(value)).length } : {}),
    });
  }
  return changes ? { remove: false, value, changes } : null;
}

/**
 * What the interventions change in the recorded run's content, item by item (each distinct item
 * once), with the changed content stored as a blob of the run (the writer's byte format), so that a
 * test result can say exactly what it changed and the changed text can be opened.
 */
export function recordChanges(
  runDir: string | undefined,
  specs: readonly (string | Intervention)[],
  items: Iterable<ItemLike & { value: unknown; fromEvent?: string | null }>,
): Change[] {
  const ivs = specs.map((s) => (typeof s === "string" ? parseIntervention(s) : s)).filter((iv) => iv.edit);
  if (!ivs.length) return [];
  const out: Change[] = [];
  const seen = new Set<string>();
  for (const it of items) {
    const key = `${it.kind}\u0000${it.source}\u0000${it.ref}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const r = interveneOn(ivs, it);
    if (!r || r.remove) continue;
    if (runDir) storeBlob(runDir, r.value);
    out.push(...r.changes);
  }
  return out;
}

/** Writes a value into a run's blob store (as the writer does: {"v": value}, named by its hash). */
export function storeBlob(runDir: string, value: unknown): string {
  const ref = refOf(value);
  const file = path.join(runDir, "blobs", ref.slice(7) + ".json");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, blobFileText(value));
    fs.renameSync(tmp, file);
  }
  return ref;
}

/** The spec that removes characters [start, end) of the items `item` names (several ranges: one spec). */
export function spanSpec(item: string, ranges: readonly [number, number][]): string {
  return `span:${item}@${[...ranges]
    .sort((a, b) => a[0] - b[0])
    .map(([a, b]) => `${a}-${b}`)
    .join(",")}`;
}
