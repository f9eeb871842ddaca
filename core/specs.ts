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
 * Target (when did the action of interest happen): comma-separated clauses, all must hold, matched
 * on tool calls: tool=NAME, agent=NAME (exact), arg~TEXT, result~TEXT (substring of the canonical
 * JSON of the arguments / result). A clause is `k~v` when `~` comes before any `=`.
 */

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
  | { kind: "input"; glob: string; re: RegExp }
  | { kind: "msg"; glob: string; re: RegExp }
  | { kind: "result"; glob: string; re: RegExp };

export interface Intervention {
  spec: string;
  parts: Matcher[];
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
      return { kind: key, glob: arg, re: globToRegExp(arg) };
    default:
      throw new SpecError(spec, `unknown kind "${key}:" (use untrusted, ref:, input:, msg: or result:)`);
  }
}

export function parseIntervention(spec: string): Intervention {
  if (typeof spec !== "string" || !spec.trim()) throw new SpecError(String(spec), "empty intervention");
  return { spec: spec.trim(), parts: spec.split("|").map((p) => parsePart(spec, p)) };
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

/** True when any part of any intervention matches the item. (input: never matches the task: its kind is "task".) */
export function removes(interventions: readonly Intervention[], item: ItemLike): boolean {
  for (const iv of interventions) for (const m of iv.parts) if (matchesPart(m, item)) return true;
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
