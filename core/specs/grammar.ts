/**
 * The intervention and target grammars of the reference.
 *
 * Intervention (what to remove from every model call's context):
 *   untrusted            anything marked untrusted
 *   ref:<hash prefix>    items whose content ref starts with the prefix (with or without sha256:)
 *   input:<glob>         inputs by source (never the task)
 *   msg:<glob>           messages by channel "from->to"
 *   result:<glob>        tool results by tool name
 *   a | b                a group: removes everything either part matches
 *
 * Edits (change an item's content instead of removing it; the item is one of the kinds above):
 *   redact:<item>~<text>           remove every occurrence of the text (or ~/regex/flags)
 *   replace:<item>=TEXT            swap the content for TEXT (=@FILE: the file's text)
 *   span:<item>@START-END[,S-E…]   remove characters [START, END) (code points) of the content
 *   guard:block[:<target>]         a fix, not an edit: the live guard in block mode during the
 *                                  replay (its built-in rule, or block the calls the target matches)
 * An edit is a whole spec: it does not combine with | (pass several specs instead).
 *
 * Target (when did the action of interest happen): comma-separated clauses, all must hold, matched
 * on tool calls: tool=NAME, agent=NAME (exact), arg~TEXT, result~TEXT (substring of the canonical
 * JSON of the arguments / result). A clause is `k~v` when `~` comes before any `=`.
 */

import { globTester } from "../util/scan";

export class SpecError extends Error {
  constructor(
    readonly spec: string,
    message: string,
  ) {
    super(`cannot parse ${JSON.stringify(spec)}: ${message}`);
    this.name = "SpecError";
  }
}

export type Matcher =
  | { kind: "untrusted" }
  | { kind: "ref"; prefix: string }
  | { kind: "input"; glob: string; re: GlobTester }
  | { kind: "msg"; glob: string; re: GlobTester }
  | { kind: "result"; glob: string; re: GlobTester };

/** Matches a glob in time linear-ish in the text (see util/scan.ts). */
type GlobTester = { test(s: string): boolean; source: string };

/** A change to the content of the items `item` matches. */
export type Edit =
  | { kind: "redact"; item: Matcher; pattern: string; re: RegExp }
  | { kind: "replace"; item: Matcher; text: string; file?: string }
  | { kind: "span"; item: Matcher; ranges: [number, number][] };

export interface Intervention {
  spec: string;
  /** The items it concerns (removes, for a plain intervention; edits, for an edit). */
  parts: Matcher[];
  edit?: Edit;
  /** guard:block — run the live guard in block mode in the replay (optionally with a target rule). */
  guard?: { mode: "block"; target?: Target };
}

/** What an intervention is matched against: one context item. */
export interface ItemLike {
  kind: string;
  source: string;
  trust: string;
  ref: string;
}

/** fnmatch-style glob (case-sensitive): * any run, ? one character, [seq], [!seq]. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") re += "[\\s\\S]*";
    else if (c === "?") re += "[\\s\\S]";
    else if (c === "[") {
      const j = glob.indexOf("]", i + 2);
      if (j < 0) re += "\\[";
      else {
        let body = glob.slice(i + 1, j);
        const neg = body.startsWith("!");
        if (neg) body = body.slice(1);
        re += "[" + (neg ? "^" : "") + body.replace(/[\\\]^]/g, "\\$&") + "]";
        i = j;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp("^" + re + "$");
}

function parsePart(spec: string, raw: string): Matcher {
  const p = raw.trim();
  if (!p) throw new SpecError(spec, "an empty part (check the | separators)");
  if (p === "untrusted") return { kind: "untrusted" };
  const colon = p.indexOf(":");
  if (colon < 0) throw new SpecError(spec, `"${p}" is not one of untrusted, ref:, input:, msg:, result:`);
  const key = p.slice(0, colon);
  const arg = p.slice(colon + 1);
  if (!arg) throw new SpecError(spec, `"${key}:" needs a value`);
  switch (key) {
    case "ref": {
      const prefix = arg.startsWith("sha256:") ? arg.slice(7) : arg;
      if (!/^[0-9a-f]{1,64}$/.test(prefix)) throw new SpecError(spec, "ref: takes a hex hash prefix");
      return { kind: "ref", prefix };
    }
    case "input":
    case "msg":
    case "result":
      return { kind: key, glob: arg, re: globTester(arg) };
    default:
      throw new SpecError(spec, `unknown kind "${key}:" (use untrusted, ref:, input:, msg: or result:)`);
  }
}

/** Reads the file a `replace:…=@FILE` spec names. */
export type SpecFileReader = (file: string) => string;

/**
 * Reads `replace:…=@FILE` files. The grammar touches no file system and nothing sets a reader on
 * import: a host whose user names files on its own command line (the CLI, the replay worker, a
 * replayed program's preload) sets one explicitly, e.g. `setSpecFileReader(readSpecFileFromDisk)`
 * (core/specs/files.ts). Without one, an `=@FILE` spec is refused. `undefined` takes it away.
 */
let readSpecFile: SpecFileReader | undefined;
export function setSpecFileReader(fn: SpecFileReader | undefined): void {
  readSpecFile = fn;
}

function parseEdit(spec: string, s: string): Intervention {
  const colon = s.indexOf(":");
  const kind = s.slice(0, colon);
  const rest = s.slice(colon + 1);
  if (kind === "guard") {
    const m = /^block(?::(.+))?$/s.exec(rest);
    if (!m) throw new SpecError(spec, 'guard: takes "block" or "block:<target>" (e.g. guard:block:tool=send_email)');
    return { spec: s, parts: [], guard: { mode: "block", target: m[1] ? parseTarget(m[1]) : undefined } };
  }
  if (kind === "redact") {
    const at = rest.indexOf("~");
    if (at < 0) throw new SpecError(spec, "redact: needs <item>~<text> (e.g. redact:input:web:*~ignore previous)");
    const item = parsePart(spec, rest.slice(0, at));
    const pattern = rest.slice(at + 1);
    if (!pattern) throw new SpecError(spec, "redact: needs text after ~");
    let re: RegExp;
    const rx = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
    try {
      re = rx ? new RegExp(rx[1], rx[2].includes("g") ? rx[2] : rx[2] + "g") : new RegExp(pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"), "g");
    } catch (err) {
      throw new SpecError(spec, `bad pattern: ${(err as Error).message}`);
    }
    return { spec: s, parts: [item], edit: { kind: "redact", item, pattern, re } };
  }
  if (kind === "replace") {
    const at = rest.indexOf("=");
    if (at < 0) throw new SpecError(spec, "replace: needs <item>=TEXT or <item>=@FILE");
    const item = parsePart(spec, rest.slice(0, at));
    const value = rest.slice(at + 1);
    if (value.startsWith("@")) {
      const file = value.slice(1);
      if (!file) throw new SpecError(spec, "replace: needs a file after =@");
      if (!readSpecFile) throw new SpecError(spec, "replace: =@FILE can't be read here");
      let text: string;
      try {
        text = readSpecFile(file);
      } catch (err) {
        throw new SpecError(spec, `cannot read ${file}: ${(err as Error).message}`);
      }
      return { spec: s, parts: [item], edit: { kind: "replace", item, text, file } };
    }
    return { spec: s, parts: [item], edit: { kind: "replace", item, text: value } };
  }
  // span
  const m = /^(.+)@(\d+-\d+(?:,\d+-\d+)*)$/s.exec(rest);
  if (!m) throw new SpecError(spec, "span: needs <item>@START-END (e.g. span:input:notes@10-42)");
  const item = parsePart(spec, m[1]);
  const ranges = m[2].split(",").map((r) => r.split("-").map(Number) as [number, number]);
  for (const [a, b] of ranges) if (!(a < b)) throw new SpecError(spec, `span ${a}-${b} is empty (START must be below END)`);
  ranges.sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < ranges.length; i++) if (ranges[i][0] < ranges[i - 1][1]) throw new SpecError(spec, "spans overlap");
  return { spec: s, parts: [item], edit: { kind: "span", item, ranges } };
}

export function parseIntervention(spec: string): Intervention {
  if (typeof spec !== "string" || !spec.trim()) throw new SpecError(String(spec), "empty intervention");
  const s = spec.trim();
  if (/^(redact|replace|span|guard):/.test(s)) return parseEdit(spec, s);
  return { spec: s, parts: spec.split("|").map((p) => parsePart(spec, p)) };
}

/** Does the intervention concern the item (remove it, or edit it)? */
export function concerns(iv: Intervention, item: ItemLike): boolean {
  for (const m of iv.parts) if (matchesPart(m, item)) return true;
  return false;
}

export function matchesPart(m: Matcher, item: ItemLike): boolean {
  switch (m.kind) {
    case "untrusted":
      return item.trust === "untrusted";
    case "ref":
      return item.ref.startsWith("sha256:" + m.prefix);
    case "input":
      return item.kind === "input" && m.re.test(item.source);
    case "msg":
      return item.kind === "message" && m.re.test(item.source);
    case "result":
      return item.kind === "result" && m.re.test(item.source);
  }
}

/** True when any part of any removing intervention matches the item (edits change items, they don't remove them). (input: never matches the task: its kind is "task".) */
export function removes(interventions: readonly Intervention[], item: ItemLike): boolean {
  for (const iv of interventions) if (!iv.edit && !iv.guard) for (const m of iv.parts) if (matchesPart(m, item)) return true;
  return false;
}

export type TargetClause = { key: "tool" | "agent"; op: "="; value: string } | { key: "arg" | "result"; op: "~"; value: string };

export interface Target {
  spec: string;
  clauses: TargetClause[];
}

/** What a target is matched against: one tool call. */
export interface ActionLike {
  tool: string;
  agent: string;
  /** Canonical JSON of the arguments. */
  args: string;
  /** Canonical JSON of the result ("" when none). */
  result: string;
}

export function parseTarget(spec: string): Target {
  if (typeof spec !== "string" || !spec.trim()) throw new SpecError(String(spec), "empty target");
  const clauses: TargetClause[] = [];
  for (const raw of spec.split(",")) {
    const c = raw.trim();
    if (!c) throw new SpecError(spec, "an empty clause (check the commas)");
    const tilde = c.indexOf("~");
    const eq = c.indexOf("=");
    const isTilde = tilde >= 0 && (eq < 0 || tilde < eq);
    const at = isTilde ? tilde : eq;
    if (at < 0) throw new SpecError(spec, `"${c}" is not key=value or key~text`);
    const key = c.slice(0, at).trim();
    const value = c.slice(at + 1);
    if (isTilde) {
      if (key !== "arg" && key !== "result") throw new SpecError(spec, `"${key}~" is not a substring clause (use arg~ or result~)`);
      if (!value) throw new SpecError(spec, `"${key}~" needs text`);
      clauses.push({ key, op: "~", value });
    } else {
      if (key !== "tool" && key !== "agent") throw new SpecError(spec, `"${key}=" is not an exact clause (use tool= or agent=)`);
      if (!value.trim()) throw new SpecError(spec, `"${key}=" needs a name`);
      clauses.push({ key, op: "=", value: value.trim() });
    }
  }
  return { spec: spec.trim(), clauses };
}

export function matchesTarget(t: Target, a: ActionLike): boolean {
  for (const c of t.clauses) {
    switch (c.key) {
      case "tool":
        if (a.tool !== c.value) return false;
        break;
      case "agent":
        if (a.agent !== c.value) return false;
        break;
      case "arg":
        if (!a.args.includes(c.value)) return false;
        break;
      case "result":
        if (!a.result.includes(c.value)) return false;
        break;
    }
  }
  return true;
}
