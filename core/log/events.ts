/**
 * The `causeway.event.v1` event types, field for field as the reference writes them, plus `site`
 * (where in the user's source an event was recorded), which this project adds.
 */

export const SCHEMA = "causeway.event.v1";
/** Schemas whose lines read the same. */
export const SCHEMAS: ReadonlySet<string> = new Set(["causeway.event.v1", "tracekit.why.event.v1"]);

export type Trust = "trusted" | "untrusted";

/** Where an SDK call was made: a file relative to the program's root, and a 1-based line. */
export interface Site {
  file: string;
  line: number;
}

export interface BaseEvent {
  schema: string;
  seq: number;
  id: string;
  prev_hash: string;
  ts: string;
  run_id: string;
  agent: string;
  type: string;
  hash: string;
  site?: Site;
}

export interface RunStartEvent extends BaseEvent {
  type: "run.start";
  program: string | null;
  seed: number | null;
  interventions: string[];
  models: string[];
  tools: string[];
  meta: Record<string, unknown>;
  sensitive_tools: string[];
  untrusted_tools: string[];
  guard: unknown;
}

export interface InputEvent extends BaseEvent {
  type: "input";
  ref: string;
  source: string;
  trust: Trust;
  kind: "task" | "input";
}

export interface AgentStartEvent extends BaseEvent {
  type: "agent.start";
  parent: string | null;
  role: string | null;
}

/** One item of a model call's context, as recorded. */
export interface ContextRecord {
  from_event: string | null;
  kind: string; // "task" | "input" | "result" | "message" | "output"
  ref: string;
  source: string;
  trust: Trust;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  estimated?: boolean;
  [k: string]: unknown;
}

export interface DecisionEvent extends BaseEvent {
  type: "decision";
  context: ContextRecord[];
  model: string;
  purpose: string | null;
  params: Record<string, unknown>;
  seed: number | null;
  output: string | null;
  /** Refs of the items an intervention removed. */
  ablated: string[];
  status: "ok" | "error";
  duration_ms: number | null;
  usage?: Usage | Record<string, never>;
}

export interface GuardRecord {
  verdict: string;
  reason: string;
  alerts: unknown[];
}

export interface ActionEvent extends BaseEvent {
  type: "action";
  tool: string;
  args_ref: string;
  result_ref: string | null;
  decision: string | null;
  sensitive: boolean;
  mode: "live" | "tape" | "stub" | "blocked";
  status: "ok" | "error" | "blocked";
  duration_ms: number | null;
  guard?: GuardRecord;
  untrusted?: boolean;
}

export interface MessageEvent extends BaseEvent {
  type: "message";
  ref: string;
  to: string;
  decision: string | null;
  trust: Trust;
}

export interface RunEndEvent extends BaseEvent {
  type: "run.end";
  outcome: unknown;
}

export type KnownEvent = RunStartEvent | InputEvent | AgentStartEvent | DecisionEvent | ActionEvent | MessageEvent | RunEndEvent;

/**
 * An event as read from a file: any type, its fields as they were (a file may hold anything, so
 * fields are checked where they are used; narrow with the types above after checking `type`).
 */
export type AnyEvent = BaseEvent & { [field: string]: unknown };

/** An event with where it was read from (1-based line of events.jsonl). */
export type LoadedEvent = AnyEvent & { line: number };

type FieldType = "string" | "number" | "boolean" | "array" | "object" | "ref" | "string|null" | "ref|null" | "number|null" | "any";

const COMMON: Record<string, FieldType> = {
  schema: "string",
  seq: "number",
  id: "string",
  prev_hash: "string",
  ts: "string",
  run_id: "string",
  agent: "string",
  type: "string",
  hash: "string",
};

/** The fields each event type needs, and their types. */
export const REQUIRED: Record<string, Record<string, FieldType>> = {
  "run.start": { program: "string|null", seed: "any", interventions: "array", models: "array", tools: "array" },
  input: { ref: "ref", source: "string", trust: "string", kind: "string" },
  "agent.start": { parent: "string|null" },
  decision: { context: "array", model: "string", output: "ref|null", status: "string" },
  action: { tool: "string", args_ref: "ref", result_ref: "ref|null", decision: "string|null", sensitive: "boolean", mode: "string", status: "string" },
  message: { ref: "ref", to: "string", decision: "string|null", trust: "string" },
  "run.end": {},
};

export const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.keys(REQUIRED));

const REF_RE = /^sha256:[0-9a-f]{64}$/;

function isRefString(v: unknown): boolean {
  return typeof v === "string" && v.length === 71 && v.startsWith("sha256:") && REF_RE.test(v);
}

function typeOk(v: unknown, t: FieldType): boolean {
  switch (t) {
    case "any":
      return true;
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return !!v && typeof v === "object" && !Array.isArray(v);
    case "ref":
      return isRefString(v);
    case "string|null":
      return v === null || typeof v === "string";
    case "ref|null":
      return v === null || isRefString(v);
    case "number|null":
      return v === null || (typeof v === "number" && Number.isFinite(v));
  }
}

const COMMON_LIST = Object.entries(COMMON);
// a Map: the type comes from the run ("toString", "__proto__" must find nothing)
const REQUIRED_LIST = new Map<string, [string, FieldType][]>(Object.entries(REQUIRED).map(([t, f]) => [t, Object.entries(f)]));
const NO_PROBLEMS: string[] = [];

function describe(k: string, t: FieldType): string {
  return `field "${k}" should be ${t.replace("ref", "a sha256: ref")}`;
}

/** What is wrong with an event's fields, or an empty list. Unknown types are checked for the common fields only. */
export function fieldProblems(e: Record<string, unknown>): string[] {
  let out = NO_PROBLEMS;
  const bad = (msg: string) => {
    if (out === NO_PROBLEMS) out = [];
    out.push(msg);
  };
  for (const [k, t] of COMMON_LIST) {
    const v = Object.hasOwn(e, k) ? e[k] : undefined;
    if (v === undefined) bad(`missing field "${k}"`);
    else if (!typeOk(v, t)) bad(describe(k, t));
  }
  const req = typeof e.type === "string" ? REQUIRED_LIST.get(e.type) : undefined;
  if (req) {
    for (const [k, t] of req) {
      const v = Object.hasOwn(e, k) ? e[k] : undefined;
      if (v === undefined) bad(`missing field "${k}"`);
      else if (!typeOk(v, t)) bad(describe(k, t));
    }
    if (e.type === "decision" && Array.isArray(e.context)) {
      const ctx = e.context as unknown[];
      for (let i = 0; i < ctx.length; i++) {
        const c = ctx[i];
        if (!c || typeof c !== "object" || !isRefString((c as { ref?: unknown }).ref)) bad(`context[${i}] has no valid ref`);
      }
    }
  }
  return out;
}

/** Every ref an event names (ref, output, args_ref, result_ref, request, context[].ref), valid or not. */
export function refsOf(e: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  for (const k of ["ref", "output", "args_ref", "result_ref", "request"]) {
    if (e[k] !== undefined && e[k] !== null) out.push(e[k]);
  }
  if (Array.isArray(e.context)) for (const c of e.context) out.push((c as { ref?: unknown })?.ref);
  return out;
}
