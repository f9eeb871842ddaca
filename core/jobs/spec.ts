/**
 * What a job may ask for, checked field by field on the collector (and again on the worker, which
 * trusts nothing it reads from the database more than a request). A job names a run, a target and
 * the test's parameters only: never a program, a module, an endpoint, a key or any environment —
 * the worker takes those from its own flags and environment. Any other field is refused.
 */
import { parseIntervention, parseTarget } from "../specs/grammar";
import { RUN_ID_RE } from "../store/http";

export interface JobSpec {
  kind: "attribute" | "test";
  run_id: string;
  target: string;
  /** test: the intervention. */
  remove?: string;
  /** attribute: suspects given by the asker. */
  suspects?: string[];
  suspects_mode?: "untrusted" | "all";
  n?: number;
  n_max?: number;
  method?: "betting" | "newcombe";
  max_calls?: number;
  roles?: boolean;
  /** Pairs asked of the workers ahead of the one the test needs next (default {@link DEFAULT_WINDOW}). */
  window?: number;
}

export const DEFAULT_WINDOW = 6;

export class SpecRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpecRefused";
  }
}

const FIELDS = new Set(["kind", "run_id", "target", "remove", "suspects", "suspects_mode", "n", "n_max", "method", "max_calls", "roles", "window"]);
/** Fields that would choose code, a credential or where calls go: named in the refusal. */
const FORBIDDEN = /program|system|module|command|endpoint|url|base|key|token|secret|env|live|header|host/i;

const int = (v: unknown, name: string, min: number, max: number): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) throw new SpecRefused(`${name} must be a whole number from ${min} to ${max}`);
  return v;
};

const text = (v: unknown, name: string): string => {
  // eslint-disable-next-line no-control-regex
  if (typeof v !== "string" || !v || v.length > 2000 || /[\u0000-\u001f]/.test(v)) throw new SpecRefused(`${name} must be a non-empty line of text`);
  return v;
};

/** The job a request asks for, or a refusal saying which field is wrong. */
export function checkSpec(body: unknown): JobSpec {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new SpecRefused("a job is a JSON object");
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (FIELDS.has(k)) continue;
    if (FORBIDDEN.test(k)) throw new SpecRefused(`a job may not carry ${JSON.stringify(k.slice(0, 40))}: workers take programs, endpoints and keys from their own flags and environment`);
    throw new SpecRefused(`unknown job field ${JSON.stringify(k.slice(0, 40))}`);
  }
  if (b.kind !== "attribute" && b.kind !== "test") throw new SpecRefused('kind is "attribute" or "test"');
  const runId = text(b.run_id, "run_id");
  if (!RUN_ID_RE.test(runId)) throw new SpecRefused("run_id is not a run id");
  const target = text(b.target, "target");
  try {
    parseTarget(target);
  } catch (err) {
    throw new SpecRefused(`target: ${(err as Error).message}`);
  }
  const spec: JobSpec = { kind: b.kind, run_id: runId, target };
  if (b.kind === "test") {
    spec.remove = text(b.remove, "remove");
    try {
      parseIntervention(spec.remove);
    } catch (err) {
      throw new SpecRefused(`remove: ${(err as Error).message}`);
    }
  } else if (b.remove !== undefined) throw new SpecRefused("remove is for a test job");
  if (b.suspects !== undefined) {
    if (b.kind !== "attribute" || !Array.isArray(b.suspects) || b.suspects.length > 200) throw new SpecRefused("suspects is a list (attribute jobs)");
    spec.suspects = b.suspects.map((s, i) => text(s, `suspects[${i}]`));
    for (const s of spec.suspects) {
      try {
        parseIntervention(s);
      } catch (err) {
        throw new SpecRefused(`suspect: ${(err as Error).message}`);
      }
    }
  }
  if (b.suspects_mode !== undefined) {
    if (b.suspects_mode !== "untrusted" && b.suspects_mode !== "all") throw new SpecRefused("suspects_mode is untrusted or all");
    spec.suspects_mode = b.suspects_mode;
  }
  if (b.method !== undefined) {
    if (b.method !== "betting" && b.method !== "newcombe") throw new SpecRefused("method is betting or newcombe");
    spec.method = b.method;
  }
  if (b.roles !== undefined) {
    if (typeof b.roles !== "boolean") throw new SpecRefused("roles is true or false");
    spec.roles = b.roles;
  }
  const n = int(b.n, "n", 1, 100_000);
  const nMax = int(b.n_max, "n_max", 1, 100_000);
  const maxCalls = int(b.max_calls, "max_calls", 1, 1e9);
  const window = int(b.window, "window", 1, 256);
  if (n !== undefined) spec.n = n;
  if (nMax !== undefined) spec.n_max = nMax;
  if (maxCalls !== undefined) spec.max_calls = maxCalls;
  if (window !== undefined) spec.window = window;
  return spec;
}
