/**
 * What a job may ask for, checked field by field on the collector (and again on the worker, which
 * trusts nothing it reads from the database more than a request). A job names a run, a target and
 * the test's parameters only: never a program, a module, an endpoint, a key or any environment —
 * the worker takes those from its own flags and environment. Any other field is refused.
 */
import { parseIntervention, parseTarget } from "../specs/grammar";
import { RUN_ID_RE } from "../store/http";
import { registerTexts } from "./texts";

export interface JobSpec {
  kind: "attribute" | "test" | "fix-check";
  run_id: string;
  /** The action to explain; for a fix check, the harm. */
  target: string;
  /** test: the intervention. */
  remove?: string;
  /** attribute: suspects given by the asker. */
  suspects?: string[];
  suspects_mode?: "untrusted" | "all";
  /** fix-check: the fix (interventions applied together) and the intended actions to keep. */
  fix?: string[];
  keep?: string[];
  /** Replacement texts the specs name as `replace:ITEM=@text:SHA256` (core/jobs/texts.ts). */
  texts?: string[];
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

const FIELDS = new Set([
  "kind",
  "run_id",
  "target",
  "remove",
  "suspects",
  "suspects_mode",
  "fix",
  "keep",
  "texts",
  "n",
  "n_max",
  "method",
  "max_calls",
  "roles",
  "window",
]);
const KINDS = new Set(["attribute", "test", "fix-check"]);
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

/**
 * Does this spec name a file (`replace:ITEM=@FILE`)? Parsing it would read the file on the machine
 * that parses it (the collector, a worker) and replay with its text. A job names only texts it
 * carries (`=@text:SHA256`, core/jobs/texts.ts). The test mirrors the grammar's (parseEdit).
 */
export function namesFile(spec: string): boolean {
  const s = spec.trim();
  const named = [...s.matchAll(/replace:[^=]*=\s*@(\S*)/g)].map((m) => m[1]);
  if (s.startsWith("replace:")) {
    const rest = s.slice("replace:".length);
    const at = rest.indexOf("=");
    if (at >= 0 && rest.slice(at + 1).startsWith("@")) named.push(rest.slice(at + 2));
  }
  return named.some((n) => !/^text:[0-9a-f]{64}$/.test(n));
}

/** An intervention: text (a replacement may span lines), never a file, and one the grammar parses. */
const intervention = (v: unknown, name: string): string => {
  // eslint-disable-next-line no-control-regex
  if (typeof v !== "string" || !v.trim() || v.length > 100_000 || /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(v))
    throw new SpecRefused(`${name} must be an intervention spec (text, at most 100,000 characters)`);
  if (namesFile(v))
    throw new SpecRefused(`${name}: a job may not name a file (replace:…=@FILE); send the text in the job's texts, named replace:…=@text:SHA256`);
  try {
    parseIntervention(v);
  } catch (err) {
    throw new SpecRefused(`${name}: ${(err as Error).message}`);
  }
  return v;
};

/** The job a request asks for, or a refusal saying which field is wrong. */
export function checkSpec(body: unknown): JobSpec {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new SpecRefused("a job is a JSON object");
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (FIELDS.has(k)) continue;
    if (FORBIDDEN.test(k))
      throw new SpecRefused(
        `a job may not carry ${JSON.stringify(k.slice(0, 40))}: workers take programs, endpoints and keys from their own flags and environment`,
      );
    throw new SpecRefused(`unknown job field ${JSON.stringify(k.slice(0, 40))}`);
  }
  if (typeof b.kind !== "string" || !KINDS.has(b.kind)) throw new SpecRefused('kind is "attribute", "test" or "fix-check"');
  const runId = text(b.run_id, "run_id");
  if (!RUN_ID_RE.test(runId)) throw new SpecRefused("run_id is not a run id");
  const target = text(b.target, "target");
  try {
    parseTarget(target);
  } catch (err) {
    throw new SpecRefused(`target: ${(err as Error).message}`);
  }
  const spec: JobSpec = { kind: b.kind as JobSpec["kind"], run_id: runId, target };
  if (b.texts !== undefined) {
    if (!Array.isArray(b.texts) || b.texts.length > 20 || b.texts.some((t) => typeof t !== "string" || t.length > 500_000))
      throw new SpecRefused("texts is a list of at most 20 texts of at most 500,000 characters");
    spec.texts = b.texts as string[];
    // the specs below are parsed with these texts readable by name (and no file)
    registerTexts(spec.texts);
  }
  if (b.kind === "test") spec.remove = intervention(b.remove, "remove");
  else if (b.remove !== undefined) throw new SpecRefused("remove is for a test job");
  if (b.kind === "fix-check") {
    if (!Array.isArray(b.fix) || !b.fix.length || b.fix.length > 20) throw new SpecRefused("fix is a list of one to 20 intervention specs (fix-check jobs)");
    spec.fix = b.fix.map((f, i) => intervention(f, `fix[${i}]`));
    if (b.keep !== undefined) {
      if (!Array.isArray(b.keep) || b.keep.length > 50) throw new SpecRefused("keep is a list of at most 50 targets");
      spec.keep = b.keep.map((k, i) => {
        const t = text(k, `keep[${i}]`);
        try {
          parseTarget(t);
        } catch (err) {
          throw new SpecRefused(`keep[${i}]: ${(err as Error).message}`);
        }
        return t;
      });
    }
  } else if (b.fix !== undefined || b.keep !== undefined) throw new SpecRefused("fix and keep are for a fix-check job");
  if (b.suspects !== undefined) {
    if (b.kind !== "attribute" || !Array.isArray(b.suspects) || b.suspects.length > 200) throw new SpecRefused("suspects is a list (attribute jobs)");
    spec.suspects = b.suspects.map((s, i) => intervention(s, `suspects[${i}]`));
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
